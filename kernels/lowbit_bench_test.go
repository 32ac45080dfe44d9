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
