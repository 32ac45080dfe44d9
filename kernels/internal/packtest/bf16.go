//go:build unix

package packtest

import (
	"math"
	"math/rand/v2"
	"testing"

	weights "github.com/simdgpt/simdgpt/kernels/lowbit"
)

// Round checks a set's rounding of float32 to bfloat16 (the RoundBF16 of
// gemm.Family) against weights.FromBF16(weights.ToBF16(x)) bit for bit, on
// random bit patterns and special values (zeros, ties, the largest
// finite values, subnormals, infinities, NaNs of both signs), every
// length from 0 past the unrolled loops and the tails of the sets'
// kernels, unaligned starts, in place, and that nothing past dst is
// written.
func Round(t *testing.T, round func(dst, x []float32)) {
	t.Helper()
	special := []uint32{0, 0x80000000, 0x3f800000, 0x3f808000, 0x3f818000, 0x3f80ffff, 0x7f7fffff, 0xff7fffff,
		0x00000001, 0x807fffff, 0x00008000, 0x00018000, 0x7f800000, 0xff800000, 0x7f800001, 0xffc00000, 0x7fffffff, 0xffbfffff}
	r := rand.New(rand.NewPCG(5, 6))
	for n := 0; n <= 4*16+2*16+3; n++ {
		for _, off := range []int{0, 1, 3} {
			src := make([]float32, off+n+1)
			for i := range src {
				b := r.Uint32()
				if r.IntN(3) == 0 {
					b = special[r.IntN(len(special))]
				}
				src[i] = math.Float32frombits(b)
			}
			x := src[off : off+n]
			want := make([]float32, n)
			for i, v := range x {
				want[i] = weights.FromBF16(weights.ToBF16(v))
			}
			buf := make([]float32, off+n+1)
			buf[off+n] = 42
			dst := buf[off : off+n]
			round(dst, x)
			for i := range dst {
				if math.Float32bits(dst[i]) != math.Float32bits(want[i]) {
					t.Fatalf("n=%d off=%d: [%d] of %#x = %#x, want %#x", n, off, i, math.Float32bits(x[i]), math.Float32bits(dst[i]), math.Float32bits(want[i]))
				}
			}
			if buf[off+n] != 42 {
				t.Fatalf("n=%d off=%d: wrote past dst", n, off)
			}
			round(x, x) // in place
			for i := range x {
				if math.Float32bits(x[i]) != math.Float32bits(want[i]) {
					t.Fatalf("n=%d off=%d in place: [%d] = %#x, want %#x", n, off, i, math.Float32bits(x[i]), math.Float32bits(want[i]))
				}
			}
		}
	}
}

// Widen checks a set's widening of whole groups of bfloat16 weights (the
// WidenBF16 of gemm.Family) against the layout of weights.BF16 (w[d] in
// element 2d, w[16+d] in 2d+1 of a group), bit for bit, for 0 to 5 whole
// groups and lengths that end inside a group (not written).
func Widen(t *testing.T, widen func(dst []float32, src []uint16)) {
	t.Helper()
	r := rand.New(rand.NewPCG(7, 8))
	for n := 0; n <= 5*32+31; n++ {
		groups := n / 32
		src := make([]uint16, 32*groups+32)
		for i := range src {
			src[i] = uint16(r.Uint32())
		}
		dst := make([]float32, n+1)
		for i := range dst {
			dst[i] = -7
		}
		widen(dst[:n], src)
		for g := 0; g < groups; g++ {
			for d := 0; d < 16; d++ {
				for _, e := range [][2]int{{32*g + d, 32*g + 2*d}, {32*g + 16 + d, 32*g + 2*d + 1}} {
					want := weights.FromBF16(src[e[1]])
					if math.Float32bits(dst[e[0]]) != math.Float32bits(want) {
						t.Fatalf("n=%d: dst[%d] = %#x, want %#x", n, e[0], math.Float32bits(dst[e[0]]), math.Float32bits(want))
					}
				}
			}
		}
		for i := 32 * groups; i <= n; i++ {
			if dst[i] != -7 {
				t.Fatalf("n=%d: dst[%d] written past the whole groups", n, i)
			}
		}
	}
}
