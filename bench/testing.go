package bench

import (
	"runtime"
	"testing"
	"time"
)

// benchmarkPeaks holds the FMA peak samples of every Benchmark run by
// this process.
var benchmarkPeaks Peaks

// Benchmark measures case c with im inside a testing benchmark.
//
// Compute-bound kernels report GFLOP/s, ns/kernel (the kernel's time per
// call alone, without the timing's own cost), peak-GFLOP/s and %peak: a
// PeakSampler of im.ISA on GOMAXPROCS goroutines samples the FMA peak
// before the loop, during it (a sixteenth of the kernel's time, every
// 16·MinPeakTime of it, with the benchmark's timer stopped) and after it,
// and %peak is the kernel's rate over the largest sample of that ISA and
// thread count taken so far by the Benchmarks of this process (see the
// package documentation; a rate above it is logged with OverPeakNote).
// Memory-bound kernels report MB/s (b.SetBytes) and, for the softmax
// kernels, ns per matrix element.
//
// The caller sets GOMAXPROCS; c must be supported by im.
func Benchmark(b *testing.B, c Case, im *Impl) {
	op := c.Kernel.Setup(c.Shape, im)
	if op == nil {
		b.Fatalf("%s does not support %s", im.Name, c)
	}
	w := c.Work()
	if c.Kernel.Bound == MemoryBound {
		b.SetBytes(int64(w.Bytes))
		op() // warm up
		for b.Loop() {
			op()
		}
		if c.Kernel.Name == "softmax" || c.Kernel.Name == "softmaxbackward" {
			elems := float64(c.Shape.M) * float64(c.Shape.N)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/elems, "ns/elem")
		}
		return
	}
	s := benchmarkPeaks.SamplerFor(c.Kernel, im.ISA, runtime.GOMAXPROCS(0))
	op() // warm up
	s.Begin()
	var kernel time.Duration
	calls := 0
	for b.Loop() {
		t0 := time.Now()
		op()
		d := time.Since(t0)
		kernel += d
		calls++
		if s.Add(d) {
			b.StopTimer()
			s.Sample()
			b.StartTimer()
		}
	}
	s.End()
	rate := w.Flops * float64(calls) / kernel.Seconds()
	b.ReportMetric(float64(kernel.Nanoseconds())/float64(calls), "ns/kernel")
	b.ReportMetric(rate/1e9, "GFLOP/s")
	s.Report(b, rate)
}

// Report reports on b, once its timed work is done and End has taken the
// last sample, "peak-GFLOP/s", the largest sample of the sampler's key in
// its Peaks, and "%peak", rate (FLOP/s) over it. A rate above it is not
// clamped: Report logs it with OverPeakNote. It reports nothing when the
// sampler has no peak loop.
func (s *PeakSampler) Report(b testing.TB, rate float64) {
	k, ok := s.Key()
	if !ok {
		return
	}
	frac, ok := s.peaks.Fraction(k, rate)
	if !ok {
		return
	}
	peak := s.peaks.Max(k)
	if br, isB := b.(*testing.B); isB {
		br.ReportMetric(peak/1e9, "peak-GFLOP/s")
		br.ReportMetric(100*frac, "%peak")
	}
	if frac > 1 {
		b.Logf("%%peak %s of %s, %s GFLOP/s: %s", FormatPercent(frac), k, FormatRate(peak/1e9), OverPeakNote)
	}
}
