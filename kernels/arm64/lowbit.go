//go:build arm64 && !purego

package arm64

import "github.com/simdgpt/simdgpt/kernels/internal/lowbit"

// lowbitNEON are the neon set's kernels of the products over low-bit
// weights (lowbit_arm64.s, from asm/gen/neon), both weight types, 1 to 8
// rows of A at a time.
var lowbitNEON = &lowbit.Kernels{
	BF16:        []lowbit.Kernel{lowbitBF161NEON, lowbitBF162NEON, lowbitBF163NEON, lowbitBF164NEON, lowbitBF165NEON, lowbitBF166NEON, lowbitBF167NEON, lowbitBF168NEON},
	Int8:        []lowbit.Int8Kernel{lowbitInt81NEON, lowbitInt82NEON, lowbitInt83NEON, lowbitInt84NEON, lowbitInt85NEON, lowbitInt86NEON, lowbitInt87NEON, lowbitInt88NEON},
	DequantInt8: lowbitDequantInt8NEON,
}
