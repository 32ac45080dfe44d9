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
