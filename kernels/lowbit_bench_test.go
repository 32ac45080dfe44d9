package kernels

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

// BenchmarkGemvWeights measures y = W·x with the default implementation
// (SIMDGPT_ISA chooses it) for W in float32 (Gemv), bfloat16 and int8 at
// GPT-2 small's decoding shapes (outputs×inputs): the bytes of weights
// read per call are the benchmark's bytes, so its MB/s is the rate of
// reading W.
func BenchmarkGemvWeights(b *testing.B) {
	for _, sh := range [][2]int{{768, 768}, {3072, 768}, {50257, 768}} {
		n, k := sh[0], sh[1]
		r := newRand(1)
		nk := randSlice(r, n*k)
		x := randSlice(r, k)
		y := make([]float32, n)
		wb := lowbit.BF16FromNK(nk, n, k)
		wq, err := lowbit.Int8FromNK(nk, n, k)
		if err != nil {
			b.Fatal(err)
		}
		name := fmt.Sprintf("%dx%d", n, k)
		b.Run("f32/"+name, func(b *testing.B) {
			b.SetBytes(int64(4 * n * k))
			for b.Loop() {
				Gemv(false, n, k, 1, nk, k, x, 0, y)
			}
		})
		b.Run("bf16/"+name, func(b *testing.B) {
			b.SetBytes(int64(2 * len(wb.Data)))
			for b.Loop() {
				GemvBF16(1, wb, x, 0, y)
			}
		})
		b.Run("int8/"+name, func(b *testing.B) {
			b.SetBytes(int64(unsafe.Sizeof(lowbit.Int8Block{})) * int64(len(wq.Blocks)))
			for b.Loop() {
				GemvInt8(1, wq, x, 0, y)
			}
		})
	}
}

// BenchmarkGemmWeights measures C = A·Wᵀ for m rows of A (a prompt or an
// evaluation batch of m tokens) with the default implementation, W
// 3072×768 (GPT-2 small's MLP input) in float32 (Gemm with B transposed:
// the skinny path up to SmallM rows, blocked beyond), bfloat16 and int8,
// in GFLOP/s: how the low-bit products, which stream W once per pass of
// up to 8 rows, compare with the blocked GEMM once there are many rows.
func BenchmarkGemmWeights(b *testing.B) {
	const n, k = 3072, 768
	r := newRand(1)
	nk := randSlice(r, n*k)
	wb := lowbit.BF16FromNK(nk, n, k)
	wq, err := lowbit.Int8FromNK(nk, n, k)
	if err != nil {
		b.Fatal(err)
	}
	for _, m := range []int{1, 8, 64, 256} {
		a := randSlice(r, m*k)
		c := make([]float32, m*n)
		for _, f := range []struct {
			name string
			run  func()
		}{
			{"f32", func() { Gemm(false, true, m, n, k, 1, a, k, nk, k, 0, c, n) }},
			{"bf16", func() { GemmBF16(m, 1, a, k, wb, 0, c, n) }},
			{"int8", func() { GemmInt8(m, 1, a, k, wq, 0, c, n) }},
		} {
			b.Run(fmt.Sprintf("m=%d/%s", m, f.name), func(b *testing.B) {
				for b.Loop() {
					f.run()
				}
				b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
