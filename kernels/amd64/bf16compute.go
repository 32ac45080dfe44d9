//go:build amd64 && !purego

package amd64

import (
	"github.com/simdgpt/simdgpt/kernels/internal/bf16compute"
	"github.com/simdgpt/simdgpt/kernels/internal/gemm"
	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

// The bfloat16 products of the sets. On AVX512_BF16 (hasAVX512BF16) the
// avx512 set runs them on the generated VDPBF16PS micro-kernel and
// packers (bf16compute_amd64.s, their table bf16KernelsAVX512 in
// families_gen.go); otherwise, and in the avx2 set, they round
// the operands and run the set's float32 GEMM (bf16compute.Rounded).

// bf16DriverAVX512 is the VDPBF16PS driver, nil without AVX512_BF16.
var bf16DriverAVX512 = func() *bf16compute.Driver {
	if !hasAVX512BF16 {
		return nil
	}
	return bf16compute.New(bf16KernelsAVX512, caches)
}()

// bf16FamilyAVX2 and bf16FamilyAVX512 return the bfloat16 products of a
// set whose float32 GEMM family is g: the avx512 set's on the VDPBF16PS
// driver where the CPU has it, else on g's GEMM (operands rounded).
func bf16FamilyAVX2(g *gemm.Family) *bf16compute.Family { return bf16Family(g, nil) }

func bf16FamilyAVX512(g *gemm.Family) *bf16compute.Family {
	return bf16Family(g, bf16DriverAVX512)
}

// bf16Family returns the bfloat16 products of a set whose float32 GEMM
// family is g, on packed, or on g's GEMM when packed is nil.
func bf16Family(g *gemm.Family, packed *bf16compute.Driver) *bf16compute.Family {
	return &bf16compute.Family{
		Packed:   packed,
		Rounded:  &bf16compute.Rounded{Gemm: g.Gemm, Epilogue: g.GemmEpilogue},
		BiasRows: g.Bias,
		BiasGELU: g.BiasGELU,
	}
}

// bf16Peak returns the avx512 set's BF16Loop and BF16Flops: 24
// independent VDPBF16PS of 16 lanes, each lane two products and their
// sum with the accumulator; none without AVX512_BF16.
func bf16Peak() (func(int), int) {
	if !hasAVX512BF16 {
		return nil, 0
	}
	return bf16PeakAVX512, 24 * 16 * 4
}

// gemmBF16Rows returns a set's GemmBF16: few, the kernels that convert
// the weights in registers on every pass of up to 8 rows of A, below
// bf16compute.ManyRows rows; from there the weights converted once to
// float32 and the set's float32 GEMM f (the same float32 sums of the
// same exact products, in the GEMM's order).
func gemmBF16Rows(g *gemm.Family, few func(m int, alpha float32, a []float32, lda int, w *lowbit.BF16, beta float32, c []float32, ldc int)) func(m int, alpha float32, a []float32, lda int, w *lowbit.BF16, beta float32, c []float32, ldc int) {
	return func(m int, alpha float32, a []float32, lda int, w *lowbit.BF16, beta float32, c []float32, ldc int) {
		if m < bf16compute.ManyRows || alpha == 0 || w.K == 0 || w.N == 0 {
			few(m, alpha, a, lda, w, beta, c, ldc)
			return
		}
		bf16compute.FloatWeights(g.Gemm, m, alpha, a, lda, w, beta, c, ldc)
	}
}
