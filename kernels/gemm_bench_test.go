package kernels

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// BenchmarkFMAPeak measures each implementation's peak float32 FMA rate
// with a generated loop of independent FMAs; GEMM results are read as a
// fraction of it.
func BenchmarkFMAPeak(b *testing.B) {
	for _, p := range nonGeneric() {
		b.Run(p.Name(), func(b *testing.B) {
			const iters = 1 << 16
			flops := 0
			for b.Loop() {
				flops += p.FMAPeakLoop(iters)
			}
			b.ReportMetric(float64(flops)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// gemmBenchShape is one benchmarked problem: C (m×n) = op(A) (m×k) op(B).
type gemmBenchShape struct {
	name           string
	m, k, n        int
	transA, transB bool
}

// gemmBenchShapes are the squares and TinyGPT's training shapes (M×K×N)
// with the transposed forms its backward pass uses.
var gemmBenchShapes = []gemmBenchShape{
	{"sq512", 512, 512, 512, false, false},
	{"sq1024", 1024, 1024, 1024, false, false},
	{"768x128x384", 768, 128, 384, false, false},
	{"768x128x128", 768, 128, 128, false, false},
	{"768x128x512", 768, 128, 512, false, false},
	{"768x512x128", 768, 512, 128, false, false},
	{"768x128x65", 768, 128, 65, false, false},
	// backward: dX = dY·Wᵀ (transB) and dW = Xᵀ·dY (transA).
	{"768x384x128_NT", 768, 384, 128, false, true},
	{"128x768x384_TN", 128, 768, 384, true, false},
	{"768x512x128_NT", 768, 512, 128, false, true},
	{"512x768x128_TN", 512, 768, 128, true, false},
	{"768x65x128_NT", 768, 65, 128, false, true},
	{"128x768x65_TN", 128, 768, 65, true, false},
}

// BenchmarkGemm runs every shape on every implementation on one goroutine
// (GOMAXPROCS=1), reporting GFLOP/s. (GOMAXPROCS is set inside each
// sub-benchmark: the testing package resets it between runs.)
func BenchmarkGemm(b *testing.B) {
	for _, s := range gemmBenchShapes {
		for _, p := range Implementations() {
			if p == genericImpl && s.m*s.n*s.k > 1<<24 {
				continue // minutes per run; generic is benchmarked on the smaller shapes
			}
			b.Run(fmt.Sprintf("%s/%s", s.name, p.Name()), func(b *testing.B) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
				benchGemm(b, p, s)
			})
		}
	}
}

// BenchmarkGemmParallel runs large and small problems on one goroutine
// and on GOMAXPROCS goroutines side by side: the large ones must scale,
// the small ones (which stay on one goroutine below the threshold) must
// not get slower.
func BenchmarkGemmParallel(b *testing.B) {
	shapes := []gemmBenchShape{
		gemmBenchShapes[1], gemmBenchShapes[0], gemmBenchShapes[2], gemmBenchShapes[3], gemmBenchShapes[6],
		{"256x64x256", 256, 64, 256, false, true},
		{"300x100x300", 300, 100, 300, false, false},
		{"64x64x64", 64, 64, 64, false, false},
	}
	all := runtime.GOMAXPROCS(0)
	for _, s := range shapes {
		for _, p := range nonGeneric() {
			for _, procs := range []int{1, all} {
				b.Run(fmt.Sprintf("%s/%s/procs=%d", s.name, p.Name(), procs), func(b *testing.B) {
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
					benchGemm(b, p, s)
				})
			}
		}
	}
}

func benchGemm(b *testing.B, p *Impl, s gemmBenchShape) {
	ar, ac := opShape(s.transA, s.m, s.k)
	br, bc := opShape(s.transB, s.k, s.n)
	r := newRand(1)
	a, bm, c := randSlice(r, ar*ac), randSlice(r, br*bc), make([]float32, s.m*s.n)
	flops := 2 * float64(s.m) * float64(s.n) * float64(s.k)
	benchVsPeak(b, p, flops, func() {
		p.Gemm(s.transA, s.transB, s.m, s.n, s.k, 1, a, ac, bm, bc, 0, c, s.n)
	})
}

// benchVsPeak times f, which performs flops floating-point operations,
// and after every call runs the FMA peak loop of p (or of the widest
// implementation, for generic) for an eighth as many operations. It
// reports GFLOP/s of f and "%peak", f's rate as a percentage of the peak
// measured in the same iterations, which holds up on a machine whose speed
// drifts between benchmarks. (A longer peak loop lowers the clock for the
// kernel that follows it.) ns/op includes the peak loop; read ns/kernel.
func benchVsPeak(b *testing.B, p *Impl, flops float64, f func()) {
	peakImpl := p
	if p.ops.fmaLoop == nil {
		impls := Implementations()
		peakImpl = impls[len(impls)-1]
	}
	iters := 0
	if peakImpl.ops.fmaLoop != nil {
		iters = max(1, int(flops)/peakImpl.ops.fmaFlops/8)
	}
	f() // warm up
	var kernel, peak time.Duration
	var peakFlops float64
	for b.Loop() {
		t0 := time.Now()
		f()
		t1 := time.Now()
		peakFlops += float64(peakImpl.FMAPeakLoop(iters))
		kernel += t1.Sub(t0)
		peak += time.Since(t1)
	}
	n := float64(b.N)
	rate := flops * n / kernel.Seconds()
	b.ReportMetric(float64(kernel.Nanoseconds())/n, "ns/kernel")
	b.ReportMetric(rate/1e9, "GFLOP/s")
	if peakFlops > 0 {
		b.ReportMetric(100*rate/(peakFlops/peak.Seconds()), "%peak")
	}
}
