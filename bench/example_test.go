package bench_test

import (
	"fmt"
	"time"

	"github.com/simdgpt/simdgpt/bench"
)

// Select picks cases by kernel and shape name; each case knows its work.
func ExampleSelect() {
	cases, err := bench.Select(bench.Kernels(), []string{"gemm", "maskedscores"}, []string{"sq512", "T=256,d=64"}, false)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range cases {
		w := c.Work()
		fmt.Printf("%s: %.0f flops, %.0f bytes\n", c, w.Flops, w.Bytes)
	}
	// Output:
	// gemm/sq512: 268435456 flops, 3145728 bytes
	// maskedscores/T=256,d=64: 4210688 flops, 393216 bytes
}

// Run measures the implementations of one case interleaved; Speedup
// compares two of them.
func ExampleRun() {
	cases, _ := bench.Select(bench.Kernels(), []string{"dot"}, []string{"n=4096"}, false)
	results := bench.Run(cases[0], bench.OursAll(), bench.Options{Count: 5, Time: time.Millisecond})
	generic, fastest := results[0], results[len(results)-1]
	r := bench.Speedup(generic.Ns, fastest.Ns)
	fmt.Println(generic.Impl.Name, len(generic.Ns), "samples; speed-up has an interval:", r.HasCI)
	// Output: generic 5 samples; speed-up has an interval: true
}

// Speedup gives the ratio of median times with a 95% interval and the
// Mann-Whitney p-value benchstat uses.
func ExampleSpeedup() {
	reference := []float64{100, 200, 300, 400, 500} // ns per call
	faster := []float64{1, 2, 3, 4, 5}
	fmt.Println(bench.Speedup(reference, faster))
	// Output: 100× [33.3, 300] p=0.008
}

// Peaks keeps the FMA peak samples of a run; the peak is the largest, so a
// sample taken in a slow moment does not inflate the percentages, and a
// rate above every sample is marked rather than clamped.
func ExamplePeaks() {
	var peaks bench.Peaks
	k := bench.PeakKey{ISA: "avx512", Threads: 1}
	for _, gflops := range []float64{150, 152, 90, 149} { // the third sample is low
		peaks.Add(k, gflops*1e9)
	}
	fmt.Println(peaks.Describe(k))
	for _, kernel := range []float64{140, 189} { // GFLOP/s
		frac, _ := peaks.Fraction(k, kernel*1e9)
		fmt.Println(kernel, "GFLOP/s:", bench.FormatPercent(frac))
	}
	// Output:
	// 152 GFLOP/s (largest of 4 samples; lowest 90.0)
	// 140 GFLOP/s: 92%
	// 189 GFLOP/s: 124%!
}
