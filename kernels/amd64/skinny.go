//go:build amd64 && !purego

package amd64

import "github.com/simdgpt/simdgpt/kernels/internal/gemm"

// The skinny kernels of each set (skinny_amd64.s, from asm/gen/skinny):
// Gemv and the products with few rows of op(A).
var (
	skinnyAVX512 = gemm.Skinny{
		Dots:   []gemm.DotsFunc{skinnyDots1AVX512, skinnyDots2AVX512, skinnyDots3AVX512, skinnyDots4AVX512, skinnyDots5AVX512, skinnyDots6AVX512, skinnyDots7AVX512, skinnyDots8AVX512},
		Axpys:  []gemm.AxpysFunc{skinnyAxpys1AVX512, skinnyAxpys2AVX512, skinnyAxpys3AVX512, skinnyAxpys4AVX512, skinnyAxpys5AVX512, skinnyAxpys6AVX512, skinnyAxpys7AVX512, skinnyAxpys8AVX512},
		Stream: []gemm.StreamFunc{skinnyStream1AVX512, skinnyStream2AVX512, skinnyStream3AVX512, skinnyStream4AVX512},
		// The 8-row kernel holds 8×48 columns of C and prefetches b.
		WideAxpys: 8,
	}
	skinnyAVX2 = gemm.Skinny{
		Dots:   []gemm.DotsFunc{skinnyDots1AVX2, skinnyDots2AVX2, skinnyDots3AVX2, skinnyDots4AVX2, skinnyDots5AVX2, skinnyDots6AVX2, skinnyDots7AVX2, skinnyDots8AVX2},
		Axpys:  []gemm.AxpysFunc{skinnyAxpys1AVX2, skinnyAxpys2AVX2, skinnyAxpys3AVX2, skinnyAxpys4AVX2, skinnyAxpys5AVX2, skinnyAxpys6AVX2, skinnyAxpys7AVX2, skinnyAxpys8AVX2},
		Stream: []gemm.StreamFunc{skinnyStream1AVX2, skinnyStream2AVX2, skinnyStream3AVX2, skinnyStream4AVX2},
	}
)
