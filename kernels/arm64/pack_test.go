//go:build arm64 && !purego

package arm64

import (
	"testing"

	"github.com/simdgpt/simdgpt/kernels/internal/packtest"
)

// TestPackInt8 checks the dequantizing packer of int8 weights
// (lowbitPackInt8NEON, through lowbit.Int8Source) against W.At bit for
// bit on 4-column blocks (packtest.Int8).
func TestPackInt8(t *testing.T) {
	packtest.Int8(t, lowbitPackInt8NEON)
}

// TestPackBF16 checks the widening packer of bfloat16 weights
// (packBF16NEON, through bf16compute's source of FloatWeights) against
// W.At bit for bit, on weights of every bit pattern (packtest.BF16).
func TestPackBF16(t *testing.T) {
	packtest.BF16(t, packBF16NEON)
}

// TestRoundBF16 checks roundBF16NEON against lowbit's rounding bit for
// bit, NaNs, infinities and subnormals included (packtest.Round).
func TestRoundBF16(t *testing.T) {
	packtest.Round(t, roundBF16NEON)
}

// TestWidenBF16 checks widenBF16NEON against lowbit.BF16's layout
// (packtest.Widen).
func TestWidenBF16(t *testing.T) {
	packtest.Widen(t, widenBF16NEON)
}
