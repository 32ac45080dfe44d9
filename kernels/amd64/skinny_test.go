//go:build amd64 && !purego

package amd64

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/simdgpt/simdgpt/kernels/internal/blocked"
)

// TestSkinnyKernels checks every skinny kernel of both sets, each row
// count r, directly against a float64 loop: n and k across the vector,
// block and tail edges, strided a (both layouts) and c with spare columns
// that must stay untouched, beta 0 over NaN and beta != 0.
func TestSkinnyKernels(t *testing.T) {
	for _, set := range []struct {
		name string
		s    blocked.Skinny
		ok   bool
	}{{"avx2", skinnyAVX2, hasAVX2}, {"avx512", skinnyAVX512, hasAVX512}} {
		if !set.ok {
			continue
		}
		rnd := rand.New(rand.NewPCG(1, 2))
		fill := func(n int) []float32 {
			s := make([]float32, n)
			for i := range s {
				s[i] = rnd.Float32()*2 - 1
			}
			return s
		}
		for _, n := range []int{1, 5, 8, 15, 16, 17, 40, 129, 130} {
			for _, k := range []int{1, 3, 16, 17, 50} {
				for _, beta := range []float32{0, 0.5} {
					ldc := n + 3
					check := func(kind string, r int, c, c0 []float32, ref func(i, j int) float64) {
						for i := 0; i < r+1; i++ {
							for j := 0; j < ldc; j++ {
								got := c[i*ldc+j]
								if i == r || j >= n {
									if math.Float32bits(got) != math.Float32bits(c0[i*ldc+j]) {
										t.Fatalf("%s %s%d n=%d k=%d: c[%d,%d] outside the result changed", set.name, kind, r, n, k, i, j)
									}
									continue
								}
								want := ref(i, j)
								if beta != 0 {
									want += float64(beta) * float64(c0[i*ldc+j])
								}
								if math.Abs(float64(got)-want) > 1e-5*float64(k+2) {
									t.Fatalf("%s %s%d n=%d k=%d beta=%v: c[%d,%d] = %v, want %v", set.name, kind, r, n, k, beta, i, j, got, want)
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
					for r, f := range set.s.Axpys {
						r++
						for _, transA := range []bool{false, true} {
							rsa, csa := k+1, 1
							if transA {
								rsa, csa = 1, r+2
							}
							a := fill(max((r-1)*rsa+(k-1)*csa+1, 1))
							ldb := n + 1
							b := fill(k * ldb)
							c, c0 := newC(r)
							f(k, n, &a[0], rsa, csa, &b[0], ldb, &c[0], ldc, 1.5, beta)
							check("axpys", r, c, c0, func(i, j int) float64 {
								var s float64
								for p := 0; p < k; p++ {
									s += float64(a[i*rsa+p*csa]) * float64(b[p*ldb+j])
								}
								return 1.5 * s
							})
						}
					}
					for r, f := range set.s.Dots {
						r++
						ldw, ldx := k+2, k+1
						w, x := fill(n*ldw), fill(r*ldx)
						c, c0 := newC(r)
						f(n, k, &w[0], ldw, &x[0], ldx, &c[0], ldc, 1.5, beta)
						check("dots", r, c, c0, func(i, j int) float64 {
							var s float64
							for p := 0; p < k; p++ {
								s += float64(x[i*ldx+p]) * float64(w[j*ldw+p])
							}
							return 1.5 * s
						})
					}
				}
			}
		}
	}
}
