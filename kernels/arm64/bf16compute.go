//go:build arm64 && !purego

package arm64

import (
	"github.com/simdgpt/simdgpt/kernels/internal/bf16compute"
	"github.com/simdgpt/simdgpt/kernels/internal/gemm"
)

// bf16FamilyNEON returns the neon set's bfloat16 products on its GEMM
// family g: the operands rounded to bfloat16 and multiplied on g's
// float32 GEMM (bf16compute.Rounded), within the products' error
// contract.
func bf16FamilyNEON(g *gemm.Family) *bf16compute.Family {
	return &bf16compute.Family{
		Rounded:  &bf16compute.Rounded{Gemm: g.Gemm, Epilogue: g.GemmEpilogue},
		BiasRows: g.Bias,
		BiasGELU: g.BiasGELU,
	}
}
