package main

import (
	"bytes"
	"fmt"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/simdgpt/simdgpt/bench"
	"github.com/simdgpt/simdgpt/gpt"
	"github.com/simdgpt/simdgpt/kernels"
)

// kernelbench runs the command with args and returns its exit status,
// standard output and standard error.
func kernelbench(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestBadNames checks that an unknown name gives one line listing the
// valid names, and exit status 2, before anything runs.
func TestBadNames(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-kernels", "gemm,softmaxx"}, `kernelbench: unknown kernel "softmaxx"; valid kernels: gemm, gemv, gemvbf16, gemvint8, maskedscores, softmax, softmaxbackward, `},
		{[]string{"-kernels", "dot", "-shapes", "n=4096,sq64"}, `kernelbench: unknown shape "sq64" for kernels dot; valid shapes: n=256, n=4096, n=65536, n=16777216`},
		{[]string{"-impls", "generic,mkl"}, `kernelbench: unknown implementation "mkl"; valid implementations: generic,`},
		{[]string{"-count", "0"}, "kernelbench: -count 0: want 1 to 1000 samples"},
		{[]string{"-count", "-1"}, "kernelbench: -count -1: want 1 to 1000 samples"},
		{[]string{"-count", "1001"}, "kernelbench: -count 1001: want 1 to 1000 samples"},
		{[]string{"-count", "9223372036854775807"}, "kernelbench: -count 9223372036854775807: want 1 to 1000 samples"},
		{[]string{"-kernels", "dot", "-shapes", "n=65536", "-count", "1", "-procs", "100000"}, "kernelbench: -procs 100000: want 0 (all CPUs) to the limit of 1024 threads"},
		{[]string{"-kernels", "gemm", "-shapes", "sq64", "-count", "1", "-procs", "100000"}, "kernelbench: -procs 100000: want 0 (all CPUs) to the limit of 1024 threads"},
		{[]string{"-kernels", "gemv", "-shapes", "512x512", "-count", "1", "-procs", "100000"}, "kernelbench: -procs 100000: want 0 (all CPUs) to the limit of 1024 threads"},
		{[]string{"-procs", "1025"}, "kernelbench: -procs 1025: want 0 (all CPUs) to the limit of 1024 threads"},
		{[]string{"-procs", "-1"}, "kernelbench: -procs -1: want 0 (all CPUs) to the limit of 1024 threads"},
		{[]string{"-time", "0s"}, "kernelbench: -time 0s: want a positive duration of at most 1m0s"},
		{[]string{"-time", "-1ms"}, "kernelbench: -time -1ms: want a positive duration of at most 1m0s"},
		{[]string{"-time", "1m0.001s"}, "kernelbench: -time 1m0.001s: want a positive duration of at most 1m0s"},
		{[]string{"-time", "2562047h"}, "kernelbench: -time 2562047h0m0s: want a positive duration of at most 1m0s"},
		{[]string{"-count", "1000", "-time", "1m"}, "kernelbench: -count 1000 × -time 1m0s over "},
		{[]string{"-kernels", "dot,sum", "-shapes", "n=4096", "-impls", "generic", "-count", "720", "-time", "1m0.001s"}, "kernelbench: -time 1m0.001s: want a positive duration"},
		{[]string{"-kernels", "dot,sum", "-shapes", "n=4096", "-impls", "generic", "-count", "721", "-time", "1m"}, "kernelbench: -count 721 × -time 1m0s over 2 cases × implementations is 24h2m0s of samples, above the limit of 24h0m0s"},
		{[]string{"-plot", "chart.svg"}, "kernelbench: -plot chart.svg: the chart is a PNG; name the file *.png"},
		{[]string{"-kernels", "dot", "-plot", "x.png"}, "kernelbench: -plot draws GFLOP/s of gemm or maskedscores"},
		{[]string{"-kernels", "attention", "-plot", "x.png"}, "kernelbench: -plot draws GFLOP/s of gemm or maskedscores"},
		{[]string{"-kernels", "attention", "-shapes", "fwd,B=12,T=64,C=128,H=5"}, `kernelbench: unknown shape "fwd" for kernels attention; valid shapes: fwd,B=12,T=64,C=128,H=4, `},
		{[]string{"extra"}, `kernelbench: unexpected argument "extra"`},
		{[]string{"-nosuchflag"}, "kernelbench: flag provided but not defined: -nosuchflag (see kernelbench -h)"},
		{[]string{"-count", "many"}, `kernelbench: invalid value "many" for flag -count: parse error (see kernelbench -h)`},
	} {
		code, stdout, stderr := kernelbench(t, tc.args...)
		if code != 2 || stdout != "" || !strings.HasPrefix(stderr, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and stderr starting %q", tc.args, code, stdout, stderr, tc.want)
		}
		if strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: stderr %q is not one line", tc.args, stderr)
		}
	}
}

// TestFlagLimits checks that every flag sizing a run is accepted at its
// limit (without running anything), and that a run whose largest case
// would not fit in the memory available is refused with one line naming
// the case and its flags, and exit status 1, before anything runs, while
// the same run with exactly the memory it needs is accepted.
func TestFlagLimits(t *testing.T) {
	for _, args := range [][]string{
		{"-procs", "1024", "-kernels", "dot", "-shapes", "n=4096"},
		{"-procs", "0", "-kernels", "dot", "-shapes", "n=4096"},
		{"-count", "1000", "-kernels", "dot", "-shapes", "n=4096", "-impls", "generic"},
		{"-time", "1m", "-kernels", "dot", "-shapes", "n=4096", "-impls", "generic"},
		{"-time", "1ns", "-count", "1"},
		{"-kernels", "dot,sum", "-shapes", "n=4096", "-impls", "generic", "-count", "720", "-time", "1m"},
	} {
		cfg, err := parseFlags(args, io.Discard)
		if err != nil {
			t.Errorf("%v: %v", args, err)
			continue
		}
		if cfg.procs < 1 || cfg.procs > gpt.MaxThreads {
			t.Errorf("%v: GOMAXPROCS %d", args, cfg.procs)
		}
	}

	cases, err := bench.Select(allKernels(), []string{"dot"}, []string{"n=16777216"}, false)
	if err != nil {
		t.Fatal(err)
	}
	impls, err := bench.SelectImpls(allImpls(), nil)
	if err != nil {
		t.Fatal(err)
	}
	need := int64(cases[0].Memory(impls))
	args := []string{"-kernels", "dot", "-shapes", "n=16777216"}
	t.Setenv(gpt.MemoryEnv, fmt.Sprint(need))
	if _, err := parseFlags(args, io.Discard); err != nil {
		t.Errorf("%v with %d bytes available, what it needs: %v", args, need, err)
	}
	t.Setenv(gpt.MemoryEnv, fmt.Sprint(need-1))
	code, stdout, stderr := kernelbench(t, args...)
	want := "kernelbench: case dot/n=16777216 (-kernels dot -shapes n=16777216) on "
	if code != 1 || stdout != "" || !strings.HasPrefix(stderr, want) || !strings.Contains(stderr, "available") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("%v with %d bytes available: exit %d, stdout %q, stderr %q; want exit 1 and one line starting %q", args, need-1, code, stdout, stderr, want)
	}
	// -list runs nothing: no memory is needed.
	t.Setenv(gpt.MemoryEnv, "0")
	if code, _, stderr := kernelbench(t, "-list"); code != 0 {
		t.Errorf("-list with no memory: exit %d, %s", code, stderr)
	}
}

// TestBadCompareFile checks the errors for a -compare file that cannot be
// read, is not in benchmark format, or holds no results.
func TestBadCompareFile(t *testing.T) {
	dir := t.TempDir()
	malformed := filepath.Join(dir, "malformed.txt")
	os.WriteFile(malformed, []byte("goos: linux\nBenchmarkGemm/shape=sq64/impl=avx2 10 fast ns/op\n"), 0o644)
	empty := filepath.Join(dir, "empty.txt")
	os.WriteFile(empty, []byte("just some notes\n"), 0o644)
	for _, tc := range []struct {
		file string
		want string
	}{
		{filepath.Join(dir, "missing.txt"), "kernelbench: -compare: " + filepath.Join(dir, "missing.txt") + ": no such file or directory"},
		{malformed, "kernelbench: -compare: " + malformed + " is not a Go benchmark file: " + malformed + ":2: parsing measurement: "},
		{empty, "kernelbench: -compare: " + empty + " holds no benchmark results with a time per op"},
		{dir, "kernelbench: -compare: " + dir + ": not a regular file (a directory)"},
	} {
		code, stdout, stderr := kernelbench(t, "-kernels", "dot", "-short", "-compare", tc.file)
		if code != 1 || stdout != "" || !strings.HasPrefix(stderr, tc.want) {
			t.Errorf("-compare %s: exit %d, stdout %q, stderr %q; want exit 1 and stderr starting %q", tc.file, code, stdout, stderr, tc.want)
		}
	}
	// Output files that cannot be written are refused before the run.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-o", filepath.Join(dir, "nodir", "run.txt")}, "kernelbench: -o " + filepath.Join(dir, "nodir", "run.txt") + ": no directory " + filepath.Join(dir, "nodir") + " to write it in"},
		{[]string{"-o", dir}, "kernelbench: -o " + dir + ": is a directory"},
		{[]string{"-kernels", "gemm", "-plot", filepath.Join(dir, "nodir", "g.png")}, "kernelbench: -plot " + filepath.Join(dir, "nodir", "g.png") + ": no directory"},
	} {
		code, stdout, stderr := kernelbench(t, tc.args...)
		if code != 1 || stdout != "" || !strings.HasPrefix(stderr, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1 and stderr starting %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
}

// TestShortRun runs every kernel's short shape briefly and checks the
// header, that every table is printed with a row per implementation, the
// -o file (which benchfmt reads back), the -compare section against it and
// the chart.
func TestShortRun(t *testing.T) {
	dir := t.TempDir()
	out, plot := filepath.Join(dir, "run.txt"), filepath.Join(dir, "gemm.png")
	code, stdout, stderr := kernelbench(t, "-short", "-time", "1ms", "-count", "4", "-o", out, "-plot", plot)
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, stderr)
	}
	for _, want := range []string{"cpu:", "features:", "caches:", "GOMAXPROCS 1", "FMA peak:", "gonum: gonum.org/v1/gonum"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("header lacks %q:\n%s", want, stdout)
		}
	}
	// The FMA peak is final once every sample is in: it is printed after
	// the header, with the tables.
	if i, j := strings.Index(stdout, "\nFMA peak:   "), strings.Index(stdout, "\n## "); i < strings.Index(stdout, "\nsamples:") || j < i {
		t.Errorf("the FMA peak line is not between the header and the tables:\n%s", stdout)
	}
	for _, k := range allKernels() {
		i := strings.Index(stdout, "\n## "+k.Name+": ")
		if i < 0 {
			t.Errorf("no table for %s", k.Name)
			continue
		}
		table := stdout[i:]
		if j := strings.Index(table[1:], "\n## "); j >= 0 {
			table = table[:j+1]
		}
		s, _ := k.Shape(k.Short)
		var names []string
		for _, im := range allImpls() {
			if !k.Supports(s, im) {
				continue
			}
			names = append(names, im.Name)
			if !strings.Contains(table, "\n| "+k.Short+" ") || !strings.Contains(table, " | "+im.Name+" ") {
				t.Errorf("%s table lacks a row for %s on %s:\n%s", k.Name, im.Name, k.Short, table)
			}
		}
		if len(names) == 0 {
			t.Errorf("no implementation runs %s", k.Name)
		}
		if k.Bound == bench.ComputeBound {
			for name, cell := range peakCells(t, table) {
				if !percentCell.MatchString(cell) {
					t.Errorf("%s table: %s: %%peak cell %q", k.Name, name, cell)
				}
			}
		}
		// A column against generic when generic ran, and none when a
		// single implementation did (the copy kernel).
		if strings.Contains(table, "vs generic") != (names[0] == "generic" && len(names) > 1) {
			t.Errorf("%s table (of %v): vs generic column wrong:\n%s", k.Name, names, table)
		}
		if len(names) == 1 && strings.Contains(table, "| vs ") {
			t.Errorf("%s table: a vs column with only %s:\n%s", k.Name, names[0], table)
		}
	}
	if !strings.Contains(stdout, "vs gonum") || !strings.Contains(stdout, "vs gonum+simdblas") || !strings.Contains(stdout, "vs gemm+mask") {
		t.Errorf("no peer columns:\n%s", stdout)
	}
	if !strings.Contains(stdout, "\n| 1MiB  | memmove | ") {
		t.Errorf("no copy row:\n%s", stdout)
	}

	// The -o file: 4 samples of every implementation of every case.
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := benchfmt.NewReader(f, out)
	perName := map[string]int{}
	for rd.Scan() {
		switch r := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			t.Fatal(r)
		case *benchfmt.Result:
			if _, ok := r.Value("sec/op"); !ok {
				t.Errorf("%s: no ns/op", r.Name)
			}
			perName[r.Name.String()]++
		}
	}
	for _, name := range []string{"Gemm/shape=sq128/impl=gonum", "Gemm/shape=sq128/impl=gonum+simdblas", "Copy/shape=1MiB/impl=memmove", "Maskedscores/shape=T=256,d=64/impl=gemm+mask", "Softmax/shape=n=1024/impl=generic", "Max/shape=n=4096/impl=generic"} {
		if perName[name] != 4 {
			t.Errorf("%s: %d samples in the -o file, want 4", name, perName[name])
		}
	}

	// The chart.
	pf, err := os.Open(plot)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	img, err := png.Decode(pf)
	if err != nil {
		t.Fatalf("chart: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 400 || b.Dy() < 250 {
		t.Errorf("chart is %v", b)
	}

	// Against the saved run.
	code, stdout, stderr = kernelbench(t, "-kernels", "dot", "-short", "-time", "1ms", "-count", "2", "-impls", "generic", "-compare", out)
	if code != 0 {
		t.Fatalf("-compare: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "## change against "+out) || !strings.Contains(stdout, "| Dot/shape=n=4096/impl=generic ") || !strings.Contains(stdout, "n=4+2") {
		t.Errorf("-compare output:\n%s", stdout)
	}
}

// TestShapesWithCommas checks that -shapes keeps names that contain
// commas.
func TestShapesWithCommas(t *testing.T) {
	got := splitShapes("T=256,d=64,sq64,n=4096,stream,n=4096,fused,B=1,T=2048,C=384,H=6,nosuch", allKernels())
	want := []string{"T=256,d=64", "sq64", "n=4096,stream", "n=4096", "fused,B=1,T=2048,C=384,H=6", "nosuch"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("splitShapes = %q, want %q", got, want)
	}
}

func TestList(t *testing.T) {
	code, stdout, _ := kernelbench(t, "-list")
	for _, want := range []string{"gemm ", "sq2048", "128x768x65_TN", "T=1024,d=128", "n=65536", "n=4096,stream", "gonum", "gemm+mask",
		"copy ", "1MiB* stream", "gonum+simdblas ", "memmove ",
		"attention ", "fwd,B=12,T=64,C=128,H=4* ", "fwdbwd,B=8,T=256,C=384,H=6", "fused,B=1,T=1024,C=384,H=6", "fused,B=1,T=4096,C=384,H=6"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("-list: exit %d, output lacks %q:\n%s", code, want, stdout)
		}
	}
}

// TestProgress checks the progress lines on stderr of a run expected to
// take longer than progressAfter.
func TestProgress(t *testing.T) {
	defer func(d time.Duration) { progressAfter = d }(progressAfter)
	progressAfter = 0
	code, stdout, stderr := kernelbench(t, "-kernels", "dot,sum", "-short", "-time", "1ms", "-count", "1", "-impls", "generic")
	if code != 0 || !strings.Contains(stderr, "kernelbench: [1/2] dot/n=4096") || !strings.Contains(stderr, "kernelbench: [2/2] sum/n=4096") || !strings.Contains(stderr, "kernelbench: done in") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	if strings.Contains(stdout, "kernelbench: [") {
		t.Error("progress on stdout")
	}
}

// TestBadEnvISA runs this test binary again with SIMDGPT_ISA=bogus: the
// kernels package falls back to its automatic choice, and kernelbench
// must exit 2 with one line naming the problem, before anything runs.
func TestBadEnvISA(t *testing.T) {
	if os.Getenv("KERNELBENCH_CHILD") == "1" {
		os.Exit(run([]string{"-list"}, os.Stdout, os.Stderr))
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBadEnvISA$")
	cmd.Env = append(os.Environ(), "KERNELBENCH_CHILD=1", kernels.EnvISA+"=bogus")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok {
		if strings.Contains(fmt.Sprint(err), "exec format error") {
			t.Skip("cannot run the test binary again here:", err)
		}
		t.Fatalf("exit: %v, want status 2", err)
	}
	const want = "kernelbench: SIMDGPT_ISA=bogus: no such implementation in this build"
	var lines []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.HasPrefix(l, "kernelbench:") {
			lines = append(lines, l)
		}
	}
	if ee.ExitCode() != 2 || stdout.Len() != 0 || len(lines) != 1 || !strings.HasPrefix(lines[0], want) {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 2, no output and one line starting %q", ee.ExitCode(), stdout.String(), stderr.String(), want)
	}
}
