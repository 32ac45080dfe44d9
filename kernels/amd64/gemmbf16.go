//go:build amd64 && !purego

package amd64

import (
	"github.com/simdgpt/simdgpt/kernels/internal/bf16gemm"
)

// The bfloat16 products of the sets. On AVX512_BF16 (hasAVX512BF16) the
// avx512 set runs them on the generated VDPBF16PS micro-kernel and
// packers (gemmbf16_amd64.s); otherwise, and in the avx2 set, they round
// the operands and run the set's float32 GEMM (bf16gemm.Rounded).

// bf16DriverAVX512 is the VDPBF16PS driver, nil without AVX512_BF16.
var bf16DriverAVX512 = func() *bf16gemm.Driver {
	if !hasAVX512BF16 {
		return nil
	}
	return bf16gemm.New(bf16gemm.Kernels{
		MR: 14, NR: 32,
		Micro:          gemmBF16Kernel14x32AVX512,
		PackRows:       bf16PackRowsAVX512,
		PackRowsHalves: bf16PackRowsHalvesAVX512,
		PackPairs:      bf16PackPairsAVX512,
	}, caches)
}()

// bf16Family returns the bfloat16 products of a set whose float32 GEMM
// family is f, on packed, or on f's GEMM when packed is nil.
func bf16Family(f *gemmFamily, packed *bf16gemm.Driver) *bf16gemm.Family {
	return &bf16gemm.Family{
		Packed:   packed,
		Rounded:  &bf16gemm.Rounded{Gemm: f.d.Gemm, Epilogue: f.d.GemmEpilogue},
		BiasRows: f.biasRows,
		BiasGELU: f.biasGelu,
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
