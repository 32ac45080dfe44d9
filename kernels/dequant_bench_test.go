package kernels_test

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/simdgpt/simdgpt/kernels"
	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

// BenchmarkGemmDequantInt8 times the products of a 256-token prompt
// through GPT-2 124M's block matrices (QKV 768→2304, projection 768→768,
// MLP 768→3072 and 3072→768), six copies of each so that the weights
// come from memory as a model's do, one goroutine: float32 weights as
// package gpt lays them out (k×n, Gemm), int8 weights through
// GemmDequantInt8 (int8), and int8 weights dequantized 256 rows at a
// time into Gemm (int8-panels: what GemmDequantInt8 does without a
// packing kernel). GFLOP/s over the wall-clock time and over the
// thread's CPU time (cpu-GFLOP/s); run with -count for rounds.
func BenchmarkGemmDequantInt8(b *testing.B) {
	p := kernels.Default()
	const m, copies = 256, 6
	shapes := [][2]int{{768, 2304}, {768, 768}, {768, 3072}, {3072, 768}} // k, n
	r := rand.New(rand.NewPCG(1, 2))
	type mat struct {
		k, n int
		f32  []float32 // k×n
		i8   *lowbit.Int8
	}
	var mats []mat
	flops := 0.0
	for range copies {
		for _, s := range shapes {
			k, n := s[0], s[1]
			w := make([]float32, k*n)
			for i := range w {
				w[i] = float32(r.NormFloat64()) * 0.02
			}
			q, err := lowbit.Int8FromKN(w, k, n)
			if err != nil {
				b.Fatal(err)
			}
			mats = append(mats, mat{k, n, w, q})
			flops += 2 * float64(m*n*k)
		}
	}
	a := make([]float32, m*3072)
	for i := range a {
		a[i] = float32(r.NormFloat64())
	}
	c := make([]float32, m*3072)
	panel := make([]float32, 256*3072)
	for _, kind := range []string{"f32", "int8", "int8-panels"} {
		b.Run(kind, func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			f := func(w mat) {
				switch kind {
				case "f32":
					p.Gemm(false, false, m, w.n, w.k, 1, a, w.k, w.f32, w.n, 0, c, w.n)
				case "int8":
					p.GemmDequantInt8(m, 1, a, w.k, w.i8, 0, c, w.n)
				default:
					for j0 := 0; j0 < w.n; j0 += 256 {
						jn := min(256, w.n-j0)
						p.DequantizeInt8(w.i8, j0, jn, panel, w.k)
						p.Gemm(false, true, m, jn, w.k, 1, a, w.k, panel, w.k, 0, c[j0:], w.n)
					}
				}
			}
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu0 := threadCPU()
			for b.Loop() {
				for _, w := range mats {
					f(w)
				}
			}
			total := flops * float64(b.N)
			b.ReportMetric(total/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			if cpu := threadCPU() - cpu0; cpu > 0 {
				b.ReportMetric(total/cpu.Seconds()/1e9, "cpu-GFLOP/s")
			}
		})
	}
}
