//go:build amd64 && !purego

package amd64

import (
	"math"
	"testing"
	"unsafe"
)

// TestLowbitInt8RowsAgree checks that every AVX-512 int8 kernel of r rows
// of x gives each row bitwise what the 2-row kernel gives it (the same
// operations on each accumulator in the same order, whatever the rows of W
// a block takes at once and however the kernel places its registers), for
// row counts of W around each kernel's block sizes and beta 0 and not 0.
func TestLowbitInt8RowsAgree(t *testing.T) {
	if !hasAVX512 {
		t.Skip("no AVX-512")
	}
	const groups, maxR = 5, 8
	kernels := lowbitAVX512.Int8
	for _, rows := range []int{1, 2, 3, 4, 5, 6, 7, 8, 13} {
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
			for r := 3; r <= maxR; r++ {
				c0 := make([]float32, maxR*ldc)
				for i := range c0 {
					c0[i] = float32(i%7) - 3
				}
				got, want := append([]float32(nil), c0...), append([]float32(nil), c0...)
				kernels[r-1](rows, groups, &w[0], ldw, &x[0], ldx, &xs[0], &got[0], ldc, beta)
				for i := 0; i < r; i += 2 {
					if i+1 < r {
						kernels[1](rows, groups, &w[0], ldw, &x[i*ldx], ldx, &xs[i], &want[i*ldc], ldc, beta)
					} else {
						// The last of an odd r: a pair whose second row is discarded.
						tmp := append([]float32(nil), c0[i*ldc:]...)
						tmp = append(tmp, make([]float32, ldc)...)
						xx := append(append([]int16(nil), x[i*ldx:(i+1)*ldx]...), x[:ldx]...)
						xxs := []float32{xs[i], xs[0]}
						kernels[1](rows, groups, &w[0], ldw, &xx[0], ldx, &xxs[0], &tmp[0], ldc, beta)
						copy(want[i*ldc:(i+1)*ldc], tmp[:ldc])
					}
				}
				for i := 0; i < r; i++ {
					for j := 0; j < rows; j++ {
						g, e := got[i*ldc+j], want[i*ldc+j]
						if math.Float32bits(g) != math.Float32bits(e) {
							t.Fatalf("rows %d, r %d, beta %g: c[%d][%d] = %g, want %g (2-row kernel)", rows, r, beta, i, j, g, e)
						}
					}
				}
			}
		}
	}
}
