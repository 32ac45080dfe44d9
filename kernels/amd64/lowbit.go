//go:build amd64 && !purego

package amd64

import (
	"golang.org/x/sys/cpu"

	"github.com/simdgpt/simdgpt/kernels/internal/lowbit"
)

// The kernels of the products over low-bit weights of each set
// (lowbit_amd64.s, from asm/gen/lowbit): 1 to 8 rows of A at a time. The
// avx512 set takes the YMM kernels for one row of A (decoding a token),
// which stream weights from memory at least as fast as ZMM ones on the
// CPUs measured (PERF.md, "GEMV with 16- and 8-bit weights"), and the
// ZMM kernels from two rows of A up, where they compute more per byte.
// On CPUs with AVX512_BF16 the avx512 set multiplies one row of A by BF16
// weights with the pair kernel instead (hasAVX512BF16; see package
// kernels' low-bit products for its accuracy), two VDPBF16PS with a
// memory operand for every 64 bytes of weights.
var (
	lowbitAVX512 = &lowbit.Kernels{
		BF16:        []lowbit.Kernel{lowbitBF161AVX2, lowbitBF162AVX512, lowbitBF163AVX512, lowbitBF164AVX512, lowbitBF165AVX512, lowbitBF166AVX512, lowbitBF167AVX512, lowbitBF168AVX512},
		Int8:        []lowbit.Int8Kernel{lowbitInt81AVX2, lowbitInt82AVX512, lowbitInt83AVX512, lowbitInt84AVX512, lowbitInt85AVX512, lowbitInt86AVX512, lowbitInt87AVX512, lowbitInt88AVX512},
		DequantInt8: lowbitDequantInt8AVX512,
	}
	lowbitAVX2 = &lowbit.Kernels{
		BF16:        []lowbit.Kernel{lowbitBF161AVX2, lowbitBF162AVX2, lowbitBF163AVX2, lowbitBF164AVX2, lowbitBF165AVX2, lowbitBF166AVX2, lowbitBF167AVX2, lowbitBF168AVX2},
		Int8:        []lowbit.Int8Kernel{lowbitInt81AVX2, lowbitInt82AVX2, lowbitInt83AVX2, lowbitInt84AVX2, lowbitInt85AVX2, lowbitInt86AVX2, lowbitInt87AVX2, lowbitInt88AVX2},
		DequantInt8: lowbitDequantInt8AVX2,
	}
)

// hasAVX512BF16 reports what the avx512 set's one-row BF16 product on
// VDPBF16PS needs besides hasAVX512: AVX512_BF16, and AVX512VL for the
// YMM forms of its EVEX instructions (every CPU with AVX512_BF16 has it).
var hasAVX512BF16 = hasAVX512 && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512BF16

func init() {
	if hasAVX512BF16 {
		lowbitAVX512.BF16Pair = lowbitBF16Pair1AVX512
		lowbitAVX512.SplitBF16 = lowbitSplitBF16AVX512
	}
}
