//go:build amd64 && !purego

package amd64

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

// TestSplitBF16 checks wdotsSplitBF16AVX512 bit for bit against
// lowbit.ToBF16: hi = ToBF16(x) and lo = ToBF16(x - hi) at their
// interleaved places, for whole groups and every tail length, zeros for
// the tail's missing elements, nothing written beyond the groups, and the
// returned max|x| (a NaN when x holds a NaN or an infinity).
func TestSplitBF16(t *testing.T) {
	if !hasAVX512 || !hasAVX512BF16 {
		t.Skip("the CPU lacks AVX-512 or AVX512_BF16")
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, k := range []int{1, 2, 15, 16, 17, 31, 32, 33, 48, 63, 64, 65, 100, 768} {
		for _, kind := range []string{"normal", "wide", "specials"} {
			x := make([]float32, k)
			for i := range x {
				switch kind {
				case "normal":
					x[i] = float32(r.NormFloat64())
				case "wide":
					x[i] = float32(math.Ldexp(r.Float64()*2-1, r.IntN(200)-100))
				case "specials":
					x[i] = []float32{0, float32(math.Copysign(0, -1)), 1, -1, 0x1.fffffep127, 0x1p-149, 0x1p-126, 3.0000002}[i%8]
				}
			}
			groups := lowbit.Groups(k)
			ld := groups*32 + 5
			out := make([]uint16, 2*ld+5)
			for i := range out {
				out[i] = 0xbeef
			}
			full := k / 32
			var tail uint32
			if rem := k % 32; rem > 0 {
				tail = 1<<rem - 1
			}
			got := wdotsSplitBF16AVX512(full, &x[0], &out[0], ld, tail)
			var want float32
			for _, v := range x {
				want = max(want, float32(math.Abs(float64(v))))
			}
			if got != want {
				t.Errorf("k=%d %s: max|x| = %v, want %v", k, kind, got, want)
			}
			for g := 0; g < groups; g++ {
				for e := 0; e < 32; e++ {
					p := 32*g + e // element of x
					at := 32*g + 2*(e%16) + e/16
					var hi, lo uint16
					if p < k {
						hi = lowbit.ToBF16(x[p])
						lo = lowbit.ToBF16(x[p] - lowbit.FromBF16(hi))
					}
					if out[at] != hi || out[ld+at] != lo {
						t.Fatalf("k=%d %s: x[%d] = %v split to %#04x, %#04x, want %#04x, %#04x", k, kind, p, x[p%k], out[at], out[ld+at], hi, lo)
					}
				}
			}
			for i := range out {
				if (i >= groups*32 && i < ld) || i >= ld+groups*32 {
					if out[i] != 0xbeef {
						t.Fatalf("k=%d %s: out[%d] written", k, kind, i)
					}
				}
			}
		}
		for _, v := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
			x := make([]float32, k)
			x[k-1] = v
			out := make([]uint16, 2*lowbit.Groups(k)*32)
			var tail uint32
			if rem := k % 32; rem > 0 {
				tail = 1<<rem - 1
			}
			if got := wdotsSplitBF16AVX512(k/32, &x[0], &out[0], len(out)/2, tail); !math.IsNaN(float64(got)) {
				t.Errorf("k=%d, x[%d] = %v: max|x| = %v, want NaN", k, k-1, v, got)
			}
		}
	}
}
