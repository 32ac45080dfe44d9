package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestEncodings checks every constructor against words produced by the
// GNU assembler (aarch64-linux-gnu-as 2.40 -march=armv8.6-a, disassembled
// with objdump), including the extreme register numbers and every lane
// index.
func TestEncodings(t *testing.T) {
	cases := []struct {
		got  inst
		word uint32
		text string
	}{
		{fadd4s(3, 1, 2), 0x4e22d423, "fadd v3.4s, v1.4s, v2.4s"},
		{fadd4s(31, 0, 31), 0x4e3fd41f, "fadd v31.4s, v0.4s, v31.4s"},
		{fsub4s(3, 1, 2), 0x4ea2d423, "fsub v3.4s, v1.4s, v2.4s"},
		{fmul4s(3, 1, 2), 0x6e22dc23, "fmul v3.4s, v1.4s, v2.4s"},
		{fmax4s(3, 1, 2), 0x4e22f423, "fmax v3.4s, v1.4s, v2.4s"},
		{fdiv4s(3, 1, 2), 0x6e22fc23, "fdiv v3.4s, v1.4s, v2.4s"},
		{fdiv4s(31, 0, 17), 0x6e31fc1f, "fdiv v31.4s, v0.4s, v17.4s"},
		{fsqrt4s(3, 1), 0x6ea1f823, "fsqrt v3.4s, v1.4s"},
		{fsqrt4s(31, 17), 0x6ea1fa3f, "fsqrt v31.4s, v17.4s"},
		{fmin4s(3, 1, 2), 0x4ea2f423, "fmin v3.4s, v1.4s, v2.4s"},
		{fmin4s(31, 30, 0), 0x4ea0f7df, "fmin v31.4s, v30.4s, v0.4s"},
		{fdiv4s(3, 1, 2), 0x6e22fc23, "fdiv v3.4s, v1.4s, v2.4s"},
		{fdiv4s(0, 31, 17), 0x6e31ffe0, "fdiv v0.4s, v31.4s, v17.4s"},
		{fcmge4s(3, 1, 2), 0x6e22e423, "fcmge v3.4s, v1.4s, v2.4s"},
		{faddp4s(3, 1, 2), 0x6e22d423, "faddp v3.4s, v1.4s, v2.4s"},
		{fadd2d(3, 1, 2), 0x4e62d423, "fadd v3.2d, v1.2d, v2.2d"},
		{sxtl28h(3, 1), 0x4f08a423, "sxtl2 v3.8h, v1.16b"},
		{smull4s(3, 1, 2), 0x0e62c023, "smull v3.4s, v1.4h, v2.4h"},
		{smlal4s(3, 1, 2), 0x0e628023, "smlal v3.4s, v1.4h, v2.4h"},
		{smlal24s(3, 1, 2), 0x4e628023, "smlal2 v3.4s, v1.8h, v2.8h"},
		{smlal24s(31, 30, 17), 0x4e7183df, "smlal2 v31.4s, v30.8h, v17.8h"},
		{fmlaElem(3, 1, 2, 0), 0x4f821023, "fmla v3.4s, v1.4s, v2.s[0]"},
		{fmlaElem(3, 1, 2, 1), 0x4fa21023, "fmla v3.4s, v1.4s, v2.s[1]"},
		{fmlaElem(3, 1, 2, 2), 0x4f821823, "fmla v3.4s, v1.4s, v2.s[2]"},
		{fmlaElem(31, 17, 30, 3), 0x4fbe1a3f, "fmla v31.4s, v17.4s, v30.s[3]"},
		{fmulElem(3, 1, 18, 2), 0x4f929823, "fmul v3.4s, v1.4s, v18.s[2]"},
		{fcvtl(3, 1), 0x0e617823, "fcvtl v3.2d, v1.2s"},
		{fcvtl2(3, 1), 0x4e617823, "fcvtl2 v3.2d, v1.4s"},
		{faddpS(3, 1), 0x7e30d823, "faddp s3, v1.2s"},
		{faddpD(3, 1), 0x7e70d823, "faddp d3, v1.2d"},
		{fmaxv(3, 1), 0x6e30f823, "fmaxv s3, v1.4s"},
		{sxtl8h(3, 1), 0x0f08a423, "sxtl v3.8h, v1.8b"},
		{sxtl8h(31, 17), 0x0f08a63f, "sxtl v31.8h, v17.8b"},
		{sxtl4s(3, 1), 0x0f10a423, "sxtl v3.4s, v1.4h"},
		{sxtl4s(31, 30), 0x0f10a7df, "sxtl v31.4s, v30.4h"},
		{sxtl24s(3, 1), 0x4f10a423, "sxtl2 v3.4s, v1.8h"},
		{sxtl24s(0, 31), 0x4f10a7e0, "sxtl2 v0.4s, v31.8h"},
		{scvtf4s(3, 1), 0x4e21d823, "scvtf v3.4s, v1.4s"},
		{scvtf4s(31, 17), 0x4e21da3f, "scvtf v31.4s, v17.4s"},
		{bfdot4s(3, 1, 2), 0x6e42fc23, "bfdot v3.4s, v1.8h, v2.8h"},
		{bfdot4s(31, 30, 17), 0x6e51ffdf, "bfdot v31.4s, v30.8h, v17.8h"},
		{bfdotElem(3, 1, 2, 0), 0x4f42f023, "bfdot v3.4s, v1.8h, v2.2h[0]"},
		{bfdotElem(3, 1, 2, 1), 0x4f62f023, "bfdot v3.4s, v1.8h, v2.2h[1]"},
		{bfdotElem(3, 1, 2, 2), 0x4f42f823, "bfdot v3.4s, v1.8h, v2.2h[2]"},
		{bfdotElem(31, 17, 30, 3), 0x4f7efa3f, "bfdot v31.4s, v17.8h, v30.2h[3]"},
	}
	for _, c := range cases {
		if c.got.word != c.word || c.got.text != c.text {
			t.Errorf("%s: got %#08x %q, want %#08x", c.text, c.got.word, c.got.text, c.word)
		}
	}
}

// TestFieldLayout decodes the register and lane fields of every
// by-element and three-register encoding back from the word, over all
// registers and lanes: the fields must land where the manual puts them
// and nowhere else.
func TestFieldLayout(t *testing.T) {
	for d := 0; d < 32; d++ {
		for m := 0; m < 32; m++ {
			n := (d + m) % 32
			w := fadd4s(d, n, m).word
			if int(w&31) != d || int(w>>5&31) != n || int(w>>16&31) != m || w&^(31|31<<5|31<<16) != baseFADD4S {
				t.Fatalf("fadd4s(%d,%d,%d) = %#08x", d, n, m, w)
			}
			for lane := 0; lane < 4; lane++ {
				w := fmlaElem(d, n, m, lane).word
				h, l := int(w>>11&1), int(w>>21&1)
				if int(w&31) != d || int(w>>5&31) != n || int(w>>16&31) != m || h<<1|l != lane ||
					w&^(31|31<<5|31<<16|1<<11|1<<21) != baseFMLAElem {
					t.Fatalf("fmlaElem(%d,%d,%d,%d) = %#08x", d, n, m, lane, w)
				}
				w = bfdotElem(d, n, m, lane).word
				h, l = int(w>>11&1), int(w>>21&1)
				if int(w&31) != d || int(w>>5&31) != n || int(w>>16&31) != m || h<<1|l != lane ||
					w&^(31|31<<5|31<<16|1<<11|1<<21) != baseBFDOTEl {
					t.Fatalf("bfdotElem(%d,%d,%d,%d) = %#08x", d, n, m, lane, w)
				}
			}
		}
	}
}

// wordLine matches an encoded instruction in a generated file.
var wordLine = regexp.MustCompile(`(?m)^\tWORD \$0x([0-9a-f]{8}) // (.*)$`)

// TestGeneratedWordsAssemble assembles the comment of every WORD in the
// generated files with the GNU assembler for AArch64 and compares the
// words. CI installs binutils-aarch64-linux-gnu; elsewhere TestEncodings
// and the kernels' tests under qemu stand in for it.
func TestGeneratedWordsAssemble(t *testing.T) {
	as, err := exec.LookPath("aarch64-linux-gnu-as")
	if err != nil {
		t.Skip("aarch64-linux-gnu-as not installed (apt-get install binutils-aarch64-linux-gnu)")
	}
	objdump, err := exec.LookPath("aarch64-linux-gnu-objdump")
	if err != nil {
		t.Skip("aarch64-linux-gnu-objdump not installed")
	}
	files, _ := filepath.Glob("../../../kernels/arm64/*_arm64.s")
	if len(files) == 0 {
		t.Fatal("no generated files found")
	}
	seen := map[string]uint32{}
	var order []string
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range wordLine.FindAllStringSubmatch(string(src), -1) {
			w, _ := strconv.ParseUint(m[1], 16, 32)
			if prev, ok := seen[m[2]]; ok && prev != uint32(w) {
				t.Fatalf("%q encoded as both %#08x and %#08x", m[2], prev, w)
			}
			if _, ok := seen[m[2]]; !ok {
				order = append(order, m[2])
			}
			seen[m[2]] = uint32(w)
		}
	}
	dir := t.TempDir()
	s := filepath.Join(dir, "w.s")
	if err := os.WriteFile(s, []byte(strings.Join(order, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := filepath.Join(dir, "w.o")
	// ARMv8.6-A: the bfloat16 products' BFDOT (FEAT_BF16).
	if out, err := exec.Command(as, "-march=armv8.6-a", "-o", o, s).CombinedOutput(); err != nil {
		t.Fatalf("as: %v\n%s", err, out)
	}
	out, err := exec.Command(objdump, "-d", o).Output()
	if err != nil {
		t.Fatal(err)
	}
	var words []uint32
	for _, line := range bytes.Split(out, []byte("\n")) {
		f := strings.Fields(string(line))
		if len(f) >= 2 && strings.HasSuffix(f[0], ":") && len(f[1]) == 8 {
			if w, err := strconv.ParseUint(f[1], 16, 32); err == nil {
				words = append(words, uint32(w))
			}
		}
	}
	if len(words) != len(order) {
		t.Fatalf("objdump listed %d words for %d instructions", len(words), len(order))
	}
	for i, text := range order {
		if words[i] != seen[text] {
			t.Errorf("%s: generated %#08x, GNU as %#08x", text, seen[text], words[i])
		}
	}
	t.Logf("%d distinct encoded instructions match GNU as", len(order))
}

// reservedReg matches, in an instruction, a general register an ABI0
// assembly function must not write: R18 (the platform register), R26
// (closure context), R27 (the assembler's temporary), R28 (g), R29 (frame
// pointer) and R30 (link register).
var reservedReg = regexp.MustCompile(`\bR(18|2[6-9]|30)\b|\b(LR|g)\b`)

// TestReservedRegisters checks that no generated instruction names a
// reserved general register (comments excluded).
func TestReservedRegisters(t *testing.T) {
	files, _ := filepath.Glob("../../../kernels/arm64/*_arm64.s")
	if len(files) == 0 {
		t.Fatal("no generated files found")
	}
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(src), "\n") {
			code, _, _ := strings.Cut(line, "//")
			if m := reservedReg.FindString(code); m != "" {
				t.Errorf("%s:%d: %s uses %s", filepath.Base(name), i+1, strings.TrimSpace(code), m)
			}
		}
	}
}
