//go:build arm64 && !purego

package kernels

import (
	"math"
	"testing"
)

// TestNEONTileKernels checks the kernelFuncs that adapt the NEON
// micro-kernels to the driver, strided and packed, over every edge tile
// (rows 1..8, cols 1..nr), against a float64 product; elements of C
// outside the rows×cols corner must stay untouched. The driver itself
// always packs A for NEON (alwaysPackA), so the strided ones are only
// reached here.
func TestNEONTileKernels(t *testing.T) {
	kernels := []struct {
		name            string
		nr              int
		strided, packed kernelFunc
	}{
		{"8x12", 12, gemmStrided8x12NEON, gemmPacked8x12NEON},
		{"8x4", 4, gemmStrided8x4NEON, gemmPacked8x4NEON},
	}
	r := newRand(61)
	for _, kn := range kernels {
		for _, k := range []int{0, 1, 5, 33, neonKC} {
			const lda, ldc = neonKC + 3, 17
			a := randSlice(r, 8*lda)
			b := randSlice(r, max(k, 1)*kn.nr)
			packedA := make([]float32, 8*max(k, 1))
			for i := 0; i < 8; i++ {
				for p := 0; p < k; p++ {
					packedA[8*p+i] = a[i*lda+p]
				}
			}
			for rows := 1; rows <= 8; rows++ {
				for cols := 1; cols <= kn.nr; cols++ {
					for _, beta := range []float32{0, 0.5} {
						for _, strided := range []bool{false, true} {
							c0 := randSlice(r, 8*ldc)
							c := append([]float32(nil), c0...)
							if beta == 0 {
								for i := range c {
									if i%ldc < cols && i/ldc < rows {
										c[i] = float32(math.NaN()) // must not be read
									}
								}
							}
							const alpha = -1.5
							if strided {
								kn.strided(k, &a[0], lda, 1, &b[0], kn.nr, &c[0], ldc, rows, cols, alpha, beta)
							} else {
								kn.packed(k, &packedA[0], 0, 0, &b[0], kn.nr, &c[0], ldc, rows, cols, alpha, beta)
							}
							for i := 0; i < 8; i++ {
								for j := 0; j < ldc; j++ {
									got := c[i*ldc+j]
									if i >= rows || j >= cols {
										if got != c0[i*ldc+j] {
											t.Fatalf("%s k=%d %dx%d strided=%v: C[%d,%d] outside the tile changed", kn.name, k, rows, cols, strided, i, j)
										}
										continue
									}
									want, mag := 0.0, 0.0
									for p := 0; p < k; p++ {
										v := float64(a[i*lda+p]) * float64(b[p*kn.nr+j])
										want += v
										mag += math.Abs(v)
									}
									want *= alpha
									if beta != 0 {
										want += float64(beta) * float64(c0[i*ldc+j])
									}
									if math.Abs(float64(got)-want) > 1e-5*(1.5*mag+1) {
										t.Fatalf("%s k=%d %dx%d beta=%v strided=%v: C[%d,%d] = %v, want %v", kn.name, k, rows, cols, beta, strided, i, j, got, want)
									}
								}
							}
						}
					}
				}
			}
		}
	}
}
