//go:build amd64 && !purego

package amd64

import "testing"

// TestBF16Transpose checks the transpose against its definition,
// dst[q*ldd+r] = src[r*lds+q], into a 32-word panel (ldd 32), and that it
// writes nothing else of the panel (the other half's words).
func TestBF16Transpose(t *testing.T) {
	if !hasAVX512 {
		t.Skip("no AVX-512")
	}
	for _, blocks := range []int{1, 2, 5} {
		lds := 16*blocks + 3
		src := make([]uint32, 16*lds)
		for i := range src {
			src[i] = uint32(i)*2654435761 + 1
		}
		dst := make([]uint32, 16*blocks*32)
		for i := range dst {
			dst[i] = 0xdeadbeef
		}
		bf16TransposeAVX512(&dst[0], &src[0], lds, 32, blocks)
		for q := 0; q < 16*blocks; q++ {
			for c := 0; c < 32; c++ {
				want := uint32(0xdeadbeef)
				if c < 16 {
					want = src[c*lds+q]
				}
				if got := dst[q*32+c]; got != want {
					t.Fatalf("blocks=%d: dst[%d*32+%d] = %#x, want %#x", blocks, q, c, got, want)
				}
			}
		}
	}
}
