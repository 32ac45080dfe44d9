//go:build amd64 && !purego

package amd64

import (
	"golang.org/x/sys/cpu"

	"github.com/simdgpt/simdgpt/kernels/internal/wdots"
)

//go:generate go -C ../../asm/gen run ./wdots -out ../../kernels/amd64/wdots_amd64.s -stubs ../../kernels/amd64/wdots_stubs_amd64.go -pkg amd64

// The kernels of the products over low-bit weights of each set
// (wdots_amd64.s, from asm/gen/wdots): 1 to 8 rows of A at a time. The
// avx512 set takes the YMM kernels for one row of A (decoding a token),
// which stream weights from memory at least as fast as ZMM ones on the
// CPUs measured (PERF.md, "GEMV with 16- and 8-bit weights"), and the
// ZMM kernels from two rows of A up, where they compute more per byte.
// On CPUs with AVX512_BF16 the avx512 set multiplies one row of A by BF16
// weights with the pair kernel instead (hasAVX512BF16; see package
// kernels' low-bit products for its accuracy), two VDPBF16PS with a
// memory operand for every 64 bytes of weights.
var (
	wdotsAVX512 = &wdots.Kernels{
		BF16: []wdots.Kernel{wdotsBF161AVX2, wdotsBF162AVX512, wdotsBF163AVX512, wdotsBF164AVX512, wdotsBF165AVX512, wdotsBF166AVX512, wdotsBF167AVX512, wdotsBF168AVX512},
		Int8: []wdots.Int8Kernel{wdotsInt81AVX2, wdotsInt82AVX512, wdotsInt83AVX512, wdotsInt84AVX512, wdotsInt85AVX512, wdotsInt86AVX512, wdotsInt87AVX512, wdotsInt88AVX512},
	}
	wdotsAVX2 = &wdots.Kernels{
		BF16: []wdots.Kernel{wdotsBF161AVX2, wdotsBF162AVX2, wdotsBF163AVX2, wdotsBF164AVX2, wdotsBF165AVX2, wdotsBF166AVX2, wdotsBF167AVX2, wdotsBF168AVX2},
		Int8: []wdots.Int8Kernel{wdotsInt81AVX2, wdotsInt82AVX2, wdotsInt83AVX2, wdotsInt84AVX2, wdotsInt85AVX2, wdotsInt86AVX2, wdotsInt87AVX2, wdotsInt88AVX2},
	}
)

// hasAVX512BF16 reports what the avx512 set's one-row BF16 product on
// VDPBF16PS needs besides hasAVX512: AVX512_BF16, and AVX512VL for the
// YMM forms of its EVEX instructions (every CPU with AVX512_BF16 has it).
var hasAVX512BF16 = hasAVX512 && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512BF16

func init() {
	if hasAVX512BF16 {
		wdotsAVX512.BF16Pair = wdotsBF16Pair1AVX512
		wdotsAVX512.SplitBF16 = wdotsSplitBF16AVX512
	}
}
