package bench

import (
	"testing"
	"time"
)

// Benchmark measures case c with im inside a testing benchmark.
//
// Compute-bound kernels report GFLOP/s and "%peak": after every call the
// FMA peak loop of im.ISA runs for an eighth as many operations, and
// %peak is the kernel's rate over the loop's in the same iterations, which
// holds up on a machine whose speed drifts between benchmarks. (A longer
// peak loop lowers the clock for the kernel that follows it.) Their ns/op
// includes the peak loop; read ns/kernel. Memory-bound kernels report
// MB/s (b.SetBytes) and, for the softmax kernels, ns per matrix element.
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
	peakIters := 0
	if im.ISA != nil {
		if per := im.ISA.FMAPeakLoop(1); per > 0 {
			peakIters = max(1, int(w.Flops)/per/8)
		}
	}
	op() // warm up
	var kernel, peak time.Duration
	var peakFlops float64
	for b.Loop() {
		t0 := time.Now()
		op()
		t1 := time.Now()
		if peakIters > 0 {
			peakFlops += float64(im.ISA.FMAPeakLoop(peakIters))
		}
		kernel += t1.Sub(t0)
		peak += time.Since(t1)
	}
	n := float64(b.N)
	rate := w.Flops * n / kernel.Seconds()
	b.ReportMetric(float64(kernel.Nanoseconds())/n, "ns/kernel")
	b.ReportMetric(rate/1e9, "GFLOP/s")
	if peakFlops > 0 {
		b.ReportMetric(100*rate/(peakFlops/peak.Seconds()), "%peak")
	}
}
