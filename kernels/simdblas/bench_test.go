package simdblas_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/simdgpt/simdgpt/kernels/simdblas"
)

// BenchmarkSgemm times C = A·B at 256×256×256 through gonum's pure-Go
// Sgemm (impl=gonum) and through Implementation (impl=simdblas), the
// same blas.Float32 call either way. It reports GFLOP/s. Before timing,
// each result is checked against gonum's.
func BenchmarkSgemm(b *testing.B) {
	const n = 256
	rng := rand.New(rand.NewPCG(15, 16))
	a, bm := make([]float32, n*n), make([]float32, n*n)
	for i := range a {
		a[i], bm[i] = 2*rng.Float32()-1, 2*rng.Float32()-1
	}
	want := make([]float32, n*n)
	gonum.Implementation{}.Sgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, bm, n, 0, want, n)
	for _, impl := range []struct {
		name string
		blas blas.Float32
	}{
		{"gonum", gonum.Implementation{}},
		{"simdblas", simdblas.Implementation{}},
	} {
		b.Run(fmt.Sprintf("shape=sq%d/impl=%s", n, impl.name), func(b *testing.B) {
			c := make([]float32, n*n)
			impl.blas.Sgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, bm, n, 0, c, n)
			for i := range c {
				// Terms are below 1 in magnitude: 2·(n+2)·eps·n bounds the
				// rounding of both sums.
				if d := math.Abs(float64(c[i] - want[i])); d > 2*(n+2)*eps*n {
					b.Fatalf("c[%d] = %v, gonum %v", i, c[i], want[i])
				}
			}
			b.ResetTimer()
			for b.Loop() {
				impl.blas.Sgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, bm, n, 0, c, n)
			}
			b.ReportMetric(2*n*n*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// TestNoAllocations checks that the overridden routines add no
// allocation to their kernels' (which allocate none per call); Sger with
// a strided y reuses its gather buffer from call to call.
func TestNoAllocations(t *testing.T) {
	const n = 33
	a, b, c := make([]float32, n*n), make([]float32, n*n), make([]float32, n*n)
	var impl simdblas.Implementation
	cases := []struct {
		name string
		f    func()
	}{
		{"Sgemm", func() { impl.Sgemm(blas.Trans, blas.NoTrans, n, n, n, 1, a, n, b, n, 0.5, c, n) }},
		{"Sdot", func() { impl.Sdot(n, a, 1, b, 1) }},
		{"Saxpy", func() { impl.Saxpy(n, 2, a, 1, b, 1) }},
		{"Sscal", func() { impl.Sscal(n, 2, a, 1) }},
		{"Sgemv", func() { impl.Sgemv(blas.NoTrans, n, n, 1, a, n, b, 1, 0.5, c[:n], 1) }},
		{"Sgemv Trans", func() { impl.Sgemv(blas.Trans, n, n, 1, a, n, b, 1, 0.5, c[:n], 1) }},
		{"Sger", func() { impl.Sger(n, n, 0.5, b, 1, b[n:], 1, a, n) }},
		{"Sger incY = -2", func() { impl.Sger(n, n/2, 0.5, b, 1, c, -2, a, n) }},
	}
	for _, tc := range cases {
		if got := testing.AllocsPerRun(10, tc.f); got != 0 {
			t.Errorf("%s: %v allocations per call, want 0", tc.name, got)
		}
	}
}
