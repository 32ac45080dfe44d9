package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/simdgpt/simdgpt/bench"
	"github.com/simdgpt/simdgpt/kernels"
)

// peakFixture returns gemm/sq256 results of implementations named after
// their rates in GFLOP/s (each sample at that rate) and the run's FMA
// peak samples, injected: no timing is involved.
func peakFixture(t *testing.T, peakGFLOPS []float64, rates ...float64) ([]*bench.Result, *bench.Peaks) {
	t.Helper()
	cases, err := bench.Select(allKernels(), []string{"gemm"}, []string{"sq256"}, false)
	if err != nil {
		t.Fatal(err)
	}
	c := cases[0]
	impls := kernels.Implementations()
	isa := impls[len(impls)-1] // only its name matters here
	var rs []*bench.Result
	for _, gf := range rates {
		ns := c.Work().Flops / gf // ns per call at gf GFLOP/s
		rs = append(rs, &bench.Result{Case: c, Impl: &bench.Impl{Name: "r" + bench.FormatRate(gf), ISA: isa}, Procs: 1,
			Iters: []int{10, 10, 10, 10}, Ns: []float64{ns, ns, ns, ns}})
	}
	peaks := &bench.Peaks{}
	for _, gf := range peakGFLOPS {
		peaks.Add(bench.PeakKey{ISA: isa.Name(), Threads: 1}, gf*1e9)
	}
	return rs, peaks
}

// peakCells returns the %peak cell of each row of a printed table, by
// implementation name.
func peakCells(t *testing.T, table string) map[string]string {
	t.Helper()
	cells := map[string]string{}
	col := -1
	for _, l := range strings.Split(table, "\n") {
		if !strings.HasPrefix(l, "| ") {
			continue
		}
		f := strings.Split(l, "|")
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		if col < 0 {
			for i, h := range f {
				if h == "%peak" {
					col = i
				}
			}
			if col < 0 {
				t.Fatalf("no %%peak column in\n%s", table)
			}
			continue
		}
		cells[f[2]] = f[col]
	}
	return cells
}

// TestPeakColumn prints gemm tables against injected peak samples: the
// cells divide by the largest sample (a low sample, even the last, does
// not raise them), a rate above every sample is printed as it is with the
// mark and the note under the table, and without samples the cell is
// empty.
func TestPeakColumn(t *testing.T) {
	for _, tc := range []struct {
		name  string
		peaks []float64 // GFLOP/s, in the order sampled
		rates []float64
		want  map[string]string
		note  bool
	}{
		{"below the peak, low sample last", []float64{200, 210, 120}, []float64{105, 189, 209},
			map[string]string{"r105": "50%", "r189": "90%", "r209": "100%"}, false},
		{"low sample first", []float64{60, 200}, []float64{190},
			map[string]string{"r190": "95%"}, false},
		{"above the peak", []float64{120, 200, 190}, []float64{100, 248},
			map[string]string{"r100": "50%", "r248": "124%!"}, true},
		{"no peak samples", nil, []float64{100},
			map[string]string{"r100": "–"}, false},
	} {
		rs, peaks := peakFixture(t, tc.peaks, tc.rates...)
		var b bytes.Buffer
		printTable(&b, rs[0].Case.Kernel, rs, 0, peaks)
		out := b.String()
		got := peakCells(t, out)
		for name, want := range tc.want {
			if got[name] != want {
				t.Errorf("%s: %s: %%peak %q, want %q\n%s", tc.name, name, got[name], want, out)
			}
		}
		if strings.Contains(out, bench.OverPeakNote) != tc.note {
			t.Errorf("%s: note under the table: %v, want %v\n%s", tc.name, !tc.note, tc.note, out)
		}
		if tc.note && !strings.HasSuffix(out, "|\n\n"+bench.OverPeakNote+"\n") {
			t.Errorf("%s: the note is not the line under the table:\n%s", tc.name, out)
		}
	}
}

// TestPeakBenchFile checks the per-sample %peak of the -o file against
// injected peak samples: against the largest, not clamped.
func TestPeakBenchFile(t *testing.T) {
	rs, peaks := peakFixture(t, []float64{100, 200, 50}, 150, 250)
	path := filepath.Join(t.TempDir(), "run.txt")
	if err := writeBenchFile(path, &config{procs: 1}, rs, peaks); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]float64{"r150": 75, "r250": 125}
	rd := benchfmt.NewReader(f, path)
	n := 0
	for rd.Scan() {
		r, ok := rd.Result().(*benchfmt.Result)
		if !ok {
			continue
		}
		n++
		impl := strings.TrimPrefix(string(r.Name.Full()), "Gemm/shape=sq256/impl=")
		got, ok := r.Value("%peak")
		if !ok || got < want[impl]-1e-9 || got > want[impl]+1e-9 {
			t.Errorf("%s: %%peak %v (%v), want %v", r.Name, got, ok, want[impl])
		}
	}
	if n != 8 {
		t.Errorf("%d results, want 8", n)
	}
}

// TestPeakKey checks the lines printed with the tables once every sample
// is in: the run's FMA peak per ISA with its samples, and the reading of
// %peak; none of it for a run of memory-bound kernels only.
func TestPeakKey(t *testing.T) {
	cases, err := bench.Select(allKernels(), []string{"gemm", "dot"}, []string{"sq256", "n=4096"}, false)
	if err != nil {
		t.Fatal(err)
	}
	var peaks bench.Peaks
	for _, gf := range []float64{150, 90, 157} {
		peaks.Add(bench.PeakKey{ISA: "avx512", Threads: 2}, gf*1e9)
	}
	peaks.Add(bench.PeakKey{ISA: "avx2", Threads: 2}, 74e9)
	var b bytes.Buffer
	printKey(&b, &config{procs: 2, cases: cases}, &peaks, false)
	out := b.String()
	for _, want := range []string{
		"FMA peak:   avx2 74.0 GFLOP/s (1 sample), avx512 157 GFLOP/s (largest of 3 samples; lowest 90.0)\n",
		"on 2 goroutine(s), sampled before, between and after",
		"%peak: the rate over the FMA peak above", "the largest of its samples", "marked !",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	b.Reset()
	printKey(&b, &config{procs: 2, cases: cases[1:]}, &peaks, false)
	if out := b.String(); strings.Contains(out, "peak") || !strings.Contains(out, "vs X:") {
		t.Errorf("memory-bound only:\n%s", out)
	}
	b.Reset()
	printKey(&b, &config{procs: 1, cases: cases}, &bench.Peaks{}, false)
	if out := b.String(); !strings.Contains(out, "FMA peak:   none measured (no FMA peak loop in this build)") {
		t.Errorf("no samples:\n%s", out)
	}
}

// percentCell matches a %peak cell: a whole percentage, marked above the
// peak, or "–" without a peak loop.
var percentCell = regexp.MustCompile(`^([0-9]+%!?|–)$`)
