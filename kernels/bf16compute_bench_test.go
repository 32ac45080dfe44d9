package kernels_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/simdgpt/simdgpt/kernels"
)

// bf16BenchShapes are the squares and TinyGPT's training shapes (m =
// batch·T = 2048 rows, width 384: the QKV and MLP projections).
var bf16BenchShapes = [][3]int{{512, 512, 512}, {1024, 1024, 1024}, {2048, 2048, 2048}, {2048, 1152, 384}, {2048, 1536, 384}}

// BenchmarkGemmBF16Compute times GemmBF16Compute against the float32
// Gemm on the same shapes, one goroutine, and the bfloat16 and FMA peak
// loops: GFLOP/s of each; compare the bfloat16 product's rate with
// BF16Peak's and Gemm's (run with -count and interleave).
func BenchmarkGemmBF16Compute(b *testing.B) {
	p := kernels.Default()
	for _, s := range bf16BenchShapes {
		m, n, k := s[0], s[1], s[2]
		r := rand.New(rand.NewPCG(1, 2))
		a, bm, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
		for i := range a {
			a[i] = r.Float32()*2 - 1
		}
		for i := range bm {
			bm[i] = r.Float32()*2 - 1
		}
		for _, kind := range []string{"bf16", "f32"} {
			b.Run(fmt.Sprintf("m%d_n%d_k%d/%s", m, n, k, kind), func(b *testing.B) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
				f := func() { p.GemmBF16Compute(false, false, m, n, k, 1, a, k, bm, n, 0, c, n) }
				if kind == "f32" {
					f = func() { p.Gemm(false, false, m, n, k, 1, a, k, bm, n, 0, c, n) }
				}
				f()
				for b.Loop() {
					f()
				}
				b.ReportMetric(2*float64(m)*float64(n)*float64(k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
	b.Run("peak/bf16", func(b *testing.B) {
		if p.BF16PeakLoop(1) == 0 {
			b.Skip("no bfloat16 peak loop on this implementation and CPU")
		}
		flops := 0
		for b.Loop() {
			flops += p.BF16PeakLoop(1 << 16)
		}
		b.ReportMetric(float64(flops)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
}
