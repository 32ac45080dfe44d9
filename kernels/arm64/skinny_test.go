//go:build arm64 && !purego

package arm64

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSkinnyKernels checks every NEON skinny kernel, each row count r,
// directly against a float64 loop: n and k across the vector, block and
// tail edges, strided a (both layouts) and c with spare columns and a
// spare row that must stay untouched, beta 0 over NaN and beta != 0. It
// also checks the contract that makes splits deterministic: every element
// of c is bitwise the same when computed by the kernel of one row and
// when the columns are computed one at a time.
func TestSkinnyKernels(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	fill := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = rnd.Float32()*2 - 1
		}
		return s
	}
	same := func(a, b []float32) bool {
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				return false
			}
		}
		return true
	}
	ns := []int{1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 33, 40, 63, 129, 130}
	ks := []int{1, 2, 3, 4, 5, 7, 8, 16, 17, 50}
	if testing.Short() {
		ns, ks = []int{1, 3, 6, 9, 17, 23, 33, 130}, []int{1, 3, 4, 7, 17}
	}
	for _, n := range ns {
		for _, k := range ks {
			for _, beta := range []float32{0, 0.5} {
				const alpha = 1.5
				ldc := n + 3
				check := func(kind string, r int, c, c0 []float32, ref func(i, j int) float64) {
					t.Helper()
					for i := 0; i < r+1; i++ {
						for j := 0; j < ldc; j++ {
							got := c[i*ldc+j]
							if i == r || j >= n {
								if math.Float32bits(got) != math.Float32bits(c0[i*ldc+j]) {
									t.Fatalf("%s%d n=%d k=%d: c[%d,%d] outside the result changed", kind, r, n, k, i, j)
								}
								continue
							}
							want := alpha * ref(i, j)
							if beta != 0 {
								want += float64(beta) * float64(c0[i*ldc+j])
							}
							if math.Abs(float64(got)-want) > 1e-5*float64(k+2) {
								t.Fatalf("%s%d n=%d k=%d beta=%v: c[%d,%d] = %v, want %v", kind, r, n, k, beta, i, j, got, want)
							}
						}
					}
				}
				newC := func(r int) (c, c0 []float32) {
					c0 = fill((r + 1) * ldc)
					if beta == 0 {
						for i := 0; i < r*ldc; i++ {
							c0[i] = float32(math.NaN())
						}
					}
					return append([]float32(nil), c0...), c0
				}
				for r, f := range skinnyNEON.Axpys {
					r++
					for _, transA := range []bool{false, true} {
						rsa, csa := k+1, 1
						if transA {
							rsa, csa = 1, r+2
						}
						a := fill((r-1)*rsa + (k-1)*csa + 1)
						ldb := n + 1
						b := fill(k * ldb)
						c, c0 := newC(r)
						f(k, n, &a[0], rsa, csa, &b[0], ldb, &c[0], ldc, alpha, beta)
						check("axpys", r, c, c0, func(i, j int) float64 {
							var s float64
							for p := 0; p < k; p++ {
								s += float64(a[i*rsa+p*csa]) * float64(b[p*ldb+j])
							}
							return s
						})
						// Each row alone and each column alone.
						for i := 0; i < r; i++ {
							_, one := newC(r)
							copy(one[i*ldc:], c0[i*ldc:i*ldc+n])
							skinnyNEON.Axpys[0](k, n, &a[i*rsa], rsa, csa, &b[0], ldb, &one[i*ldc], ldc, alpha, beta)
							if !same(one[i*ldc:i*ldc+n], c[i*ldc:i*ldc+n]) {
								t.Fatalf("axpys%d n=%d k=%d beta=%v: row %d differs from axpys1's", r, n, k, beta, i)
							}
						}
						col := append([]float32(nil), c0...)
						for j := 0; j < n; j++ {
							f(k, 1, &a[0], rsa, csa, &b[j], ldb, &col[j], ldc, alpha, beta)
						}
						if !same(col, c) {
							t.Fatalf("axpys%d n=%d k=%d beta=%v: columns one at a time differ", r, n, k, beta)
						}
					}
				}
				for r, f := range skinnyNEON.Dots {
					r++
					ldw, ldx := k+2, k+1
					w, x := fill(n*ldw), fill(r*ldx)
					c, c0 := newC(r)
					f(n, k, &w[0], ldw, &x[0], ldx, &c[0], ldc, alpha, beta)
					check("dots", r, c, c0, func(i, j int) float64 {
						var s float64
						for p := 0; p < k; p++ {
							s += float64(x[i*ldx+p]) * float64(w[j*ldw+p])
						}
						return s
					})
					for i := 0; i < r; i++ {
						one := append([]float32(nil), c0...)
						skinnyNEON.Dots[0](n, k, &w[0], ldw, &x[i*ldx], ldx, &one[i*ldc], ldc, alpha, beta)
						if !same(one[i*ldc:i*ldc+n], c[i*ldc:i*ldc+n]) {
							t.Fatalf("dots%d n=%d k=%d beta=%v: row %d differs from dots1's", r, n, k, beta, i)
						}
					}
					col := append([]float32(nil), c0...)
					for j := 0; j < n; j++ {
						f(1, k, &w[j*ldw], ldw, &x[0], ldx, &col[j], ldc, alpha, beta)
					}
					if !same(col, c) {
						t.Fatalf("dots%d n=%d k=%d beta=%v: rows of w one at a time differ", r, n, k, beta)
					}
				}
			}
		}
	}
}
