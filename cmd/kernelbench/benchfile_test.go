package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompareFileValues: a -compare file whose times are not positive
// finite numbers, or that holds too many samples, is refused up front with
// the line named (a NaN ran the statistics out of memory).
func TestCompareFileValues(t *testing.T) {
	dir := t.TempDir()
	line := func(v string) string { return "BenchmarkDot/shape=n=256/impl=generic 100 " + v + " ns/op\n" }
	many := strings.Repeat(line("12"), maxSamples+1)
	for _, c := range []struct {
		name, content, want string
	}{
		{"nan", line("12") + line("NaN"), ":2: Dot/shape=n=256/impl=generic: time per op NaN is not a positive finite number"},
		{"inf", line("+Inf"), ":1: Dot/shape=n=256/impl=generic: time per op +Inf"},
		{"zero", line("0"), ":1: Dot/shape=n=256/impl=generic: time per op 0 is not"},
		{"negative", line("-5"), ":1: Dot/shape=n=256/impl=generic: time per op -5 is not"},
		{"many", many, fmt.Sprintf(":%d: Dot/shape=n=256/impl=generic: more than %d samples", maxSamples+1, maxSamples)},
	} {
		p := filepath.Join(dir, c.name+".txt")
		os.WriteFile(p, []byte(c.content), 0o644)
		code, stdout, stderr := kernelbench(t, "-kernels", "dot", "-short", "-compare", p)
		if code != 1 || stdout != "" || !strings.Contains(stderr, "kernelbench: -compare: "+p+c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1 and one line containing %q", c.name, code, stdout, stderr, c.want)
		}
	}
}

// TestOutputDirNotWritable: -o and -plot into a directory where no file
// can be created fail before measuring.
func TestOutputDirNotWritable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes into read-only directories")
	}
	ro := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-o", filepath.Join(ro, "run.txt")}, {"-kernels", "gemm", "-plot", filepath.Join(ro, "g.png")}} {
		code, stdout, stderr := kernelbench(t, args...)
		want := args[len(args)-2] + " " + args[len(args)-1] + ": cannot create a file in " + ro + ": permission denied"
		if code != 1 || stdout != "" || !strings.Contains(stderr, want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1 and %q", args, code, stdout, stderr, want)
		}
	}
}

// FuzzParseBenchFile: any bytes either fail or give samples that are all
// positive and finite, at most maxSamples per benchmark.
func FuzzParseBenchFile(f *testing.F) {
	f.Add([]byte("goos: linux\nBenchmarkGemm/shape=sq64/impl=avx2 10 1234 ns/op 5.5 GFLOP/s\n"))
	f.Add([]byte("BenchmarkX 1 NaN ns/op\nBenchmarkX 1 1e300 ns/op\n"))
	f.Add([]byte("BenchmarkX 1 fast ns/op\n"))
	f.Add([]byte("Unit ns/op assume=exact\nBenchmarkY-8 3 4 ns/op\nBenchmarkY-8 3 5 ns/op\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		bf, err := parseBenchFile(bytes.NewReader(b), "fuzz.txt")
		if err != nil {
			return
		}
		if len(bf.names) == 0 || len(bf.names) != len(bf.ns) {
			t.Fatalf("%d names, %d sample sets", len(bf.names), len(bf.ns))
		}
		for _, n := range bf.names {
			if len(bf.ns[n]) == 0 || len(bf.ns[n]) > maxSamples {
				t.Fatalf("%s: %d samples", n, len(bf.ns[n]))
			}
			for _, v := range bf.ns[n] {
				if !(v > 0) || math.IsInf(v, 0) {
					t.Fatalf("%s: sample %v", n, v)
				}
			}
		}
	})
}
