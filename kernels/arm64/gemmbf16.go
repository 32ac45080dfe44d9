//go:build arm64 && !purego

package arm64

import "github.com/simdgpt/simdgpt/kernels/internal/bf16gemm"

// bf16NEON is the neon set's bfloat16 products: the operands rounded to
// bfloat16 and multiplied on the set's float32 GEMM (bf16gemm.Rounded),
// within the products' error contract.
var bf16NEON = &bf16gemm.Family{
	Rounded:  &bf16gemm.Rounded{Gemm: gemmNEON.Gemm, Epilogue: gemmNEON.GemmEpilogue},
	BiasRows: biasRowsNEON,
	BiasGELU: biasGeluNEON,
}
