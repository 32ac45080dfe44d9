//go:build arm64 && !purego

package arm64

import "github.com/simdgpt/simdgpt/kernels/internal/gemm"

// skinnyNEON are the set's skinny kernels (skinny_arm64.s, from
// asm/gen/neon): Gemv and the products with few rows of op(A).
var skinnyNEON = gemm.Skinny{
	Dots:  []gemm.DotsFunc{skinnyDots1NEON, skinnyDots2NEON, skinnyDots3NEON, skinnyDots4NEON},
	Axpys: []gemm.AxpysFunc{skinnyAxpys1NEON, skinnyAxpys2NEON, skinnyAxpys3NEON, skinnyAxpys4NEON, skinnyAxpys5NEON, skinnyAxpys6NEON, skinnyAxpys7NEON, skinnyAxpys8NEON},
}
