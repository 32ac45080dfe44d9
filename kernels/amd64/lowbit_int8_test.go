//go:build amd64 && !purego

package amd64

import (
	"fmt"
	"math"
	"testing"
	"unsafe"

	"github.com/simdgpt/simdgpt/kernels/internal/lowbit"
	weights "github.com/simdgpt/simdgpt/kernels/lowbit"
)

// TestLowbitInt8RowsAgree checks that every int8 kernel of both sets, of
// any r rows of x, gives each row bitwise what the AVX2 one-row kernel
// (which decoding takes) gives that row alone: the same operations on each
// accumulator lane in the same order, whatever the rows of x and of W a
// block takes at once (rows of W around every kernel's block sizes), for
// beta 0 and not 0, and that no element of c outside the r×rows block
// changes.
func TestLowbitInt8RowsAgree(t *testing.T) {
	const groups, maxR = 5, 8
	sets := []struct {
		name    string
		kernels []lowbit.Int8Kernel
		ok      bool
	}{
		{"avx2", lowbitAVX2.Int8, hasAVX2},
		{"avx512", lowbitAVX512.Int8, hasAVX512},
	}
	if !hasAVX2 {
		t.Skip("no AVX2")
	}
	alone := lowbitAVX2.Int8[0]
	for _, rows := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 17} {
		ldw := 36*groups + 4
		w := make([]byte, rows*ldw)
		seed := uint32(rows)
		next := func() uint32 { seed = seed*1664525 + 1013904223; return seed >> 8 }
		for j := 0; j < rows; j++ {
			for g := 0; g < groups; g++ {
				b := w[j*ldw+36*g:]
				s := float32(next()%1000)/997 + 0.01
				*(*float32)(unsafe.Pointer(&b[0])) = s
				for q := 4; q < 36; q++ {
					b[q] = byte(next())
				}
			}
		}
		ldx := 32*groups + 16
		x := make([]int16, maxR*ldx)
		for i := range x {
			x[i] = int16(next())
		}
		xs := make([]float32, maxR)
		for i := range xs {
			xs[i] = float32(next()%100)/37 + 0.5
		}
		ldc := rows + 3
		for _, beta := range []float32{0, -0.75} {
			c0 := make([]float32, maxR*ldc)
			for i := range c0 {
				c0[i] = float32(i%7) - 3
			}
			want := append([]float32(nil), c0...)
			for i := 0; i < maxR; i++ {
				alone(rows, groups, &w[0], ldw, &x[i*ldx], ldx, &xs[i], &want[i*ldc], ldc, beta)
			}
			for _, set := range sets {
				if !set.ok {
					continue
				}
				for r := 1; r <= maxR; r++ {
					got := append([]float32(nil), c0...)
					set.kernels[r-1](rows, groups, &w[0], ldw, &x[0], ldx, &xs[0], &got[0], ldc, beta)
					for i := 0; i < maxR; i++ {
						for j := 0; j < ldc; j++ {
							g, e := got[i*ldc+j], want[i*ldc+j]
							if i >= r || j >= rows {
								e = c0[i*ldc+j]
							}
							if math.Float32bits(g) != math.Float32bits(e) {
								t.Fatalf("%s, rows %d, r %d, beta %g: c[%d][%d] = %g, want %g", set.name, rows, r, beta, i, j, g, e)
							}
						}
					}
				}
			}
		}
	}
}

// TestLowbitQuantInt16 checks the quantize kernels against
// lowbit.QuantizeInt16Scaled bit for bit: blocks 0 to 5, x and q at
// unaligned starts, scales from Int16Scale of rows spanning many
// magnitudes, ties of x·inv halfway between integers (to even), values
// that round past ±32767 (clamped), zeros of both signs and subnormals.
// It also checks that no element past 16·blocks is written.
func TestLowbitQuantInt16(t *testing.T) {
	type kern struct {
		name string
		ok   bool
		fn   func(blocks int, x *float32, inv float64, q *int16)
	}
	seed := uint32(7)
	next := func() uint32 { seed = seed*1664525 + 1013904223; return seed >> 8 }
	for _, k := range []kern{{"avx2", hasAVX2, lowbitQuantInt16AVX2}, {"avx512", hasAVX512, lowbitQuantInt16AVX512}} {
		if !k.ok {
			t.Logf("%s: not available on this CPU", k.name)
			continue
		}
		for blocks := 0; blocks <= 5; blocks++ {
			for _, off := range []int{0, 1, 3} {
				for _, mag := range []float32{1, 3e-30, 7e25, 0.5} {
					n := 16 * blocks
					x := make([]float32, n+off+16)[off : off+n]
					for p := range x {
						x[p] = (float32(next()%20001)/10000 - 1) * mag
					}
					switch {
					case n >= 16:
						x[0] = mag  // the largest: ±32767 exactly
						x[1] = -mag // and its opposite
						x[2] = float32(math.Copysign(0, -1))
						x[3] = 0x1p-140 * mag // subnormal or tiny
					}
					scale, inv, ok := weights.Int16Scale(x)
					if !ok || scale == 0 {
						if n > 0 {
							t.Fatalf("%s: Int16Scale refused a row of magnitude %g", k.name, mag)
						}
						inv = 1
					}
					if n >= 16 {
						// Ties: elements whose x·inv is an odd integer plus a half
						// (exact in float32 at these magnitudes for mag = 1).
						for p := 4; p < 8; p++ {
							x[p] = float32((float64(2*p+1) / 2) / inv)
						}
					}
					want := make([]int16, n)
					weights.QuantizeInt16Scaled(want, x, inv)
					buf := make([]int16, n+off+16)
					for i := range buf {
						buf[i] = 0x5a5a
					}
					got := buf[off : off+n]
					if blocks > 0 {
						k.fn(blocks, &x[0], inv, &got[0])
					}
					for p := range want {
						if got[p] != want[p] {
							t.Fatalf("%s blocks=%d off=%d mag=%g: q[%d] = %d, want %d (x %g, inv %g)", k.name, blocks, off, mag, p, got[p], want[p], x[p], inv)
						}
					}
					for i, v := range buf {
						if (i < off || i >= off+n) && v != 0x5a5a {
							t.Fatalf("%s blocks=%d off=%d: wrote element %d outside q", k.name, blocks, off, i-off)
						}
					}
				}
			}
		}
	}
}

// BenchmarkQuantInt16 measures quantizing one row of activations of
// GPT-2 small's widths: Go (lowbit.QuantizeInt16Scaled) against the
// AVX2 and AVX-512 kernels, in ns per row.
func BenchmarkQuantInt16(b *testing.B) {
	for _, k := range []int{768, 3072} {
		x := make([]float32, k)
		for p := range x {
			x[p] = float32(math.Sin(float64(p))) * 3
		}
		q := make([]int16, k)
		_, inv, _ := weights.Int16Scale(x)
		b.Run(fmt.Sprintf("go/k=%d", k), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				weights.QuantizeInt16Scaled(q, x, inv)
			}
		})
		for _, kn := range []struct {
			name string
			ok   bool
			fn   func(blocks int, x *float32, inv float64, q *int16)
		}{{"avx2", hasAVX2, lowbitQuantInt16AVX2}, {"avx512", hasAVX512, lowbitQuantInt16AVX512}} {
			b.Run(fmt.Sprintf("%s/k=%d", kn.name, k), func(b *testing.B) {
				if !kn.ok {
					b.Skipf("%s: not available on this CPU", kn.name)
				}
				for i := 0; i < b.N; i++ {
					kn.fn(k/16, &x[0], inv, &q[0])
				}
			})
		}
	}
}
