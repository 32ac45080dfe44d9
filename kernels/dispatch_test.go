package kernels

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/cpu"

	"github.com/simdgpt/simdgpt/kernels/internal/cpuexpect"
)

// expectedImpls is what this build must offer on this machine: a test
// fails, rather than skips, when an implementation the CPU supports is
// missing.
func expectedImpls() []string { return cpuexpect.Implementations() }

func TestImplementations(t *testing.T) {
	var got []string
	for _, p := range Implementations() {
		got = append(got, p.Name())
	}
	if want := expectedImpls(); !slices.Equal(got, want) {
		t.Fatalf("Implementations() = %v, want %v", got, want)
	}
	if os.Getenv(EnvISA) == "" && Default().Name() != got[len(got)-1] {
		t.Errorf("Default() = %s, want the fastest, %s", Default().Name(), got[len(got)-1])
	}
	for _, name := range got {
		p, err := Lookup(name)
		if err != nil || p.Name() != name {
			t.Errorf("Lookup(%q) = %v, %v", name, p, err)
		}
	}
	if _, err := Lookup("sse9"); err == nil || !strings.Contains(err.Error(), "no such implementation") {
		t.Errorf("Lookup(sse9) error = %v", err)
	}
}

// TestTileVariants checks the GEMM tile variants: every implementation
// with micro-kernels has at least two tiles, its own among them; each
// variant is found by its name, reports its tile and computes the same
// product as generic; names of tiles that do not exist are refused.
func TestTileVariants(t *testing.T) {
	for _, p := range Implementations() {
		vs := p.TileVariants()
		if p == genericImpl {
			if len(vs) != 0 || p.Tile() != "" {
				t.Errorf("generic: Tile %q, %d variants; want none", p.Tile(), len(vs))
			}
			if _, err := Lookup("generic/1x1"); err == nil || !strings.Contains(err.Error(), "no GEMM tiles") {
				t.Errorf("Lookup(generic/1x1) error = %v", err)
			}
			continue
		}
		if runtime.GOARCH == "amd64" && len(vs) < 2 {
			t.Errorf("%s: %d tile variants, want at least 2", p.Name(), len(vs))
		}
		own := false
		for _, v := range vs {
			name := p.Name() + "/" + v.Tile()
			if v.Name() != name {
				t.Errorf("%s: variant named %q, want %q", p.Name(), v.Name(), name)
			}
			if got, err := Lookup(name); err != nil || got != v {
				t.Errorf("Lookup(%q) = %v, %v; want the variant", name, got, err)
			}
			own = own || v.Tile() == p.Tile()
			const m, n, k = 37, 53, 29
			r := newRand(7)
			a, b := randSlice(r, m*k), randSlice(r, k*n)
			got, want := make([]float32, m*n), make([]float32, m*n)
			v.Gemm(false, false, m, n, k, 1, a, k, b, n, 0, got, n)
			genericImpl.Gemm(false, false, m, n, k, 1, a, k, b, n, 0, want, n)
			for i := range got {
				if !closeTo(got[i], want[i], 1e-5) {
					t.Fatalf("%s: C[%d] = %v, generic %v", name, i, got[i], want[i])
				}
			}
		}
		if len(vs) > 0 && !own {
			t.Errorf("%s: its tile %q is not among its variants", p.Name(), p.Tile())
		}
		if _, err := Lookup(p.Name() + "/99x99"); err == nil || !strings.Contains(err.Error(), "tile") {
			t.Errorf("Lookup(%s/99x99) error = %v", p.Name(), err)
		}
	}
}

func TestSetDefault(t *testing.T) {
	old := Default()
	defer current.Store(old)
	if err := SetDefault("generic"); err != nil || Default().Name() != "generic" {
		t.Fatalf("SetDefault(generic) = %v, Default() = %s", err, Default())
	}
	if err := SetDefault("nonsense"); err == nil || Default().Name() != "generic" {
		t.Fatalf("SetDefault(nonsense) = %v and changed the default to %s", err, Default())
	}
}

// TestEnvISA runs this test binary again with SIMDGPT_ISA and GODEBUG set
// and checks the implementation it picks; a choice it cannot honour must
// leave the automatic choice, print one line on stderr and be reported by
// EnvError, never end the process.
func TestEnvISA(t *testing.T) {
	if os.Getenv("SIMDGPT_CHILD") == "1" {
		os.Stdout.WriteString("default=" + Default().Name() + " enverror=" + fmt.Sprint(EnvError() != nil) + "\n")
		return
	}
	impls := expectedImpls()
	fastest := impls[len(impls)-1]
	// The fallback cases keep this process's GODEBUG, so that the child's
	// automatic choice is fastest.
	parentDebug := "GODEBUG=" + os.Getenv("GODEBUG")
	type tc struct {
		env     []string
		want    string // printed default
		warning string // the one line on stderr, "" for none
	}
	cases := []tc{
		{[]string{EnvISA + "=generic"}, "generic", ""},
		{[]string{EnvISA + "= generic\t"}, "generic", ""},
		{[]string{parentDebug, EnvISA + "=bogus"}, fastest, "simdgpt/kernels: SIMDGPT_ISA=bogus: no such implementation in this build; available: " + strings.Join(impls, ", ") + "; using " + fastest},
	}
	for _, name := range impls {
		cases = append(cases, tc{[]string{EnvISA + "=" + name}, name, ""})
	}
	if slices.Contains(impls, "avx512") {
		cases = append(cases,
			tc{[]string{"GODEBUG=cpu.avx512=off"}, "avx2", ""},
			tc{[]string{"GODEBUG=cpu.avx512=off", EnvISA + "=avx512"}, "avx2", "simdgpt/kernels: SIMDGPT_ISA=avx512: this CPU or OS does not support avx512"})
	}
	if runtime.GOARCH != "amd64" || cpuexpect.Purego {
		cases = append(cases, tc{[]string{parentDebug, EnvISA + "=avx2"}, fastest, "simdgpt/kernels: SIMDGPT_ISA=avx2: no such implementation in this build"})
	}
	if runtime.GOARCH != "arm64" || cpuexpect.Purego {
		cases = append(cases, tc{[]string{parentDebug, EnvISA + "=neon"}, fastest, "simdgpt/kernels: SIMDGPT_ISA=neon: no such implementation in this build"})
	}
	for _, c := range cases {
		cmd := exec.Command(os.Args[0], "-test.run=^TestEnvISA$")
		if emu := emulator(t); emu != "" {
			cmd = exec.Command(emu, os.Args[0], "-test.run=^TestEnvISA$")
		}
		cmd.Env = append(os.Environ(), "SIMDGPT_CHILD=1", EnvISA+"=", "GODEBUG=")
		cmd.Env = append(cmd.Env, c.env...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Errorf("%v: %v (the library must never end the process); stderr %q", c.env, err, stderr.String())
			continue
		}
		want := fmt.Sprintf("default=%s enverror=%v\n", c.want, c.warning != "")
		if !strings.HasPrefix(string(out), want) {
			t.Errorf("%v: output %q, want %q first", c.env, out, want)
		}
		// The library's lines (the runtime may add its own about GODEBUG).
		var lines []string
		for _, l := range strings.Split(stderr.String(), "\n") {
			if strings.HasPrefix(l, "simdgpt") {
				lines = append(lines, l)
			}
		}
		switch {
		case c.warning == "" && len(lines) != 0:
			t.Errorf("%v: stderr %q, want nothing", c.env, stderr.String())
		case c.warning != "" && (len(lines) != 1 || !strings.HasPrefix(lines[0], c.warning)):
			t.Errorf("%v: stderr %q, want one line starting %q", c.env, stderr.String(), c.warning)
		}
	}
}

// emulator returns the user-mode emulator to run this test binary again
// under, or "" when it runs natively. Under `go test -exec
// qemu-aarch64-static` on another architecture the kernel cannot execute
// the binary itself (no binfmt_misc entry), so the child is started as
// qemu-ARCH-static (ARCH as qemu names it: aarch64 for arm64), found
// on PATH.
func emulator(t *testing.T) string {
	err := exec.Command(os.Args[0], "-test.run=^$").Run()
	if err == nil || !strings.Contains(err.Error(), "exec format error") {
		return ""
	}
	arch := map[string]string{"arm64": "aarch64", "386": "i386", "amd64": "x86_64"}[runtime.GOARCH]
	if arch == "" {
		arch = runtime.GOARCH
	}
	emu, lerr := exec.LookPath("qemu-" + arch + "-static")
	if lerr != nil {
		t.Fatalf("cannot run %s again (%v) and no emulator: %v", os.Args[0], err, lerr)
	}
	return emu
}

func TestCPU(t *testing.T) {
	info := CPU()
	if info.Arch != runtime.GOARCH {
		t.Errorf("CPU().Arch = %q, want %q", info.Arch, runtime.GOARCH)
	}
	if runtime.GOARCH == "amd64" && cpu.X86.HasAVX2 && !slices.Contains(info.Features, "AVX2") {
		t.Errorf("CPU().Features = %v lacks AVX2", info.Features)
	}
	if runtime.GOARCH == "arm64" && cpu.ARM64.HasASIMD && !slices.Contains(info.Features, "ASIMD") {
		t.Errorf("CPU().Features = %v lacks ASIMD", info.Features)
	}
}
