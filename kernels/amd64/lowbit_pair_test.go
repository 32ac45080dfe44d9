//go:build amd64 && !purego

package amd64

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

// splitScale is the power of two lowbitSplitBF16AVX512 scales x by: the one
// that moves max|x| into [2⁶³, 2⁶⁴), or 2¹²⁷ when max|x| < 2⁻⁶⁴.
func splitScale(x []float32) float32 {
	var mx float64
	for _, v := range x {
		mx = math.Max(mx, math.Abs(float64(v)))
	}
	if mx < 0x1p-64 {
		return 0x1p127
	}
	_, e := math.Frexp(mx) // mx in [2^(e-1), 2^e)
	return float32(math.Ldexp(1, 64-e))
}

// TestSplitBF16 checks lowbitSplitBF16AVX512 bit for bit against
// lowbit.ToBF16: for v = scale·x, hi = ToBF16(v) and lo = ToBF16(v - hi)
// at their interleaved places, for whole groups and every tail length,
// zeros for the tail's missing elements, nothing written beyond the
// groups, the scale, and ok: false when x holds a NaN or an infinity, or
// a nonzero element whose v or lo has a zero exponent (a part VDPBF16PS
// would count as 0), true otherwise.
func TestSplitBF16(t *testing.T) {
	if !hasAVX512 || !hasAVX512BF16 {
		t.Skip("the CPU lacks AVX-512 or AVX512_BF16")
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, k := range []int{1, 2, 15, 16, 17, 31, 32, 33, 48, 63, 64, 65, 100, 768} {
		for _, kind := range []string{"normal", "wide", "specials", "tiny", "huge"} {
			x := make([]float32, k)
			for i := range x {
				switch kind {
				case "normal":
					x[i] = float32(r.NormFloat64())
				case "wide":
					x[i] = float32(math.Ldexp(r.Float64()*2-1, r.IntN(200)-100))
				case "specials":
					x[i] = []float32{0, float32(math.Copysign(0, -1)), 1, -1, 0x1.fffffep127, 0x1p-149, 0x1p-126, 3.0000002}[i%8]
				case "tiny": // max|x| below 2^-64: scaled by 2^127
					x[i] = float32(math.Ldexp(r.Float64()*2-1, -149+r.IntN(80)))
				case "huge": // parts near float32's ends before the scale
					x[i] = float32(math.Ldexp(r.Float64()*2-1, 128-r.IntN(60)))
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
			scale, ok := lowbitSplitBF16AVX512(full, &x[0], &out[0], ld, tail)
			want := splitScale(x)
			if scale != want {
				t.Errorf("k=%d %s: scale = %v, want %v", k, kind, scale, want)
			}
			wantOK := true
			for g := 0; g < groups; g++ {
				for e := 0; e < 32; e++ {
					p := 32*g + e // element of x
					at := 32*g + 2*(e%16) + e/16
					var hi, lo uint16
					if p < k {
						v := want * x[p]
						hi = lowbit.ToBF16(v)
						lo = lowbit.ToBF16(v - lowbit.FromBF16(hi))
						if x[p] != 0 && (math.Float32bits(v)&0x7f800000 == 0 || lo&0x7f80 == 0 && lo&0x7fff != 0) {
							wantOK = false
						}
					}
					if out[at] != hi || out[ld+at] != lo {
						t.Fatalf("k=%d %s: x[%d] = %v split to %#04x, %#04x, want %#04x, %#04x", k, kind, p, x[p%k], out[at], out[ld+at], hi, lo)
					}
				}
			}
			if ok != wantOK {
				t.Errorf("k=%d %s: ok = %v, want %v", k, kind, ok, wantOK)
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
			if _, ok := lowbitSplitBF16AVX512(k/32, &x[0], &out[0], len(out)/2, tail); ok {
				t.Errorf("k=%d, x[%d] = %v: ok, want refused", k, k-1, v)
			}
		}
	}
}
