//go:build amd64 && !purego

package amd64

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/simdgpt/simdgpt/kernels/internal/gemm"
)

// TestSkinnyKernels checks every skinny kernel of both sets, each row
// count r, directly against a float64 loop: n and k across the vector,
// block and tail edges, strided a (both layouts) and c with spare columns
// that must stay untouched, beta 0 over NaN and beta != 0. Each stream
// kernel must also give bitwise the results of the axpys kernel of its r,
// its scratch sized exactly.
func TestSkinnyKernels(t *testing.T) {
	for _, set := range []struct {
		name string
		s    gemm.Skinny
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
		for _, n := range []int{1, 5, 8, 15, 16, 17, 40, 71, 100, 129, 130} {
			for _, k := range []int{1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 50} {
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
							ref := func(i, j int) float64 {
								var s float64
								for p := 0; p < k; p++ {
									s += float64(a[i*rsa+p*csa]) * float64(b[p*ldb+j])
								}
								return 1.5 * s
							}
							check("axpys", r, c, c0, ref)
							if r > len(set.s.Stream) {
								continue
							}
							cs := append([]float32(nil), c0...)
							acc := fill(r*n + 1)
							guard := acc[r*n]
							set.s.Stream[r-1](k, n, &a[0], rsa, csa, &b[0], ldb, &cs[0], ldc, 1.5, beta, &acc[0])
							if acc[r*n] != guard {
								t.Fatalf("%s stream%d n=%d k=%d: wrote past its scratch", set.name, r, n, k)
							}
							check("stream", r, cs, c0, ref)
							for i := range cs {
								if math.Float32bits(cs[i]) != math.Float32bits(c[i]) {
									t.Fatalf("%s stream%d n=%d k=%d transA=%v: c[%d] = %v, axpys gives %v", set.name, r, n, k, transA, i, cs[i], c[i])
								}
							}
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

// TestStreamDriver checks that the drivers' stream path (SetStream) gives
// bitwise the results of the axpys path for transposed Gemv and small-M
// products with B k×n, whatever the columns a stream call takes, and
// that a bad block width panics.
func TestStreamDriver(t *testing.T) {
	for _, set := range []struct {
		name string
		g    *gemm.Driver
		ok   bool
	}{{"avx2", gemmAVX2, hasAVX2}, {"avx512", gemmAVX512, hasAVX512}} {
		if !set.ok {
			continue
		}
		rnd := rand.New(rand.NewPCG(3, 4))
		fill := func(n int) []float32 {
			s := make([]float32, n)
			for i := range s {
				s[i] = rnd.Float32()*2 - 1
			}
			return s
		}
		for _, sh := range [][3]int{{1, 9, 300}, {1, 130, 1000}, {3, 70, 515}, {4, 5, 129}} {
			m, k, n := sh[0], sh[1], sh[2]
			a, b := fill(m*k), fill(k*(n+1))
			c0 := fill(m * n)
			run := func(minElems, cols int, beta float32) []float32 {
				set.g.SetStream(minElems, cols)
				defer set.g.SetStream(1<<18, 4096)
				c := append([]float32(nil), c0...)
				if m == 1 {
					set.g.Gemv(true, k, n, 1.25, b, n+1, a, beta, c)
				} else {
					set.g.Gemm(false, false, m, n, k, 1.25, a, k, b, n+1, beta, c, n)
				}
				return c
			}
			for _, beta := range []float32{0, -0.5} {
				want := run(1<<62, 1, beta)
				for _, cols := range []int{1, 17, 64, 4096} {
					got := run(0, cols, beta)
					for i := range got {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%s m=%d k=%d n=%d cols=%d beta=%v: c[%d] = %v streamed, %v by axpys", set.name, m, k, n, cols, beta, i, got[i], want[i])
						}
					}
				}
			}
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Fatalf("%s: SetStream(0, 0) did not panic", set.name)
				}
			}()
			set.g.SetStream(0, 0)
		}()
	}
}

// TestSmallMRule checks the sets' small-M rules (smallM, with the avx512
// set's wide 8-row axpys kernel): which m of op(A) take the skinny path,
// with B k×n and n×k.
func TestSmallMRule(t *testing.T) {
	for _, tc := range []struct {
		set     string
		g       *gemm.Driver
		skinny  []int // m with B k×n on the skinny path, of 1..17
		skinnyT int   // the largest m with B n×k on it
	}{
		{"avx512", gemmAVX512, []int{1, 2, 3, 4, 8}, 16},
		{"avx2", gemmAVX2, []int{1, 2, 3, 4, 5, 6, 7, 8}, 16},
	} {
		for m := 1; m <= 17; m++ {
			want := false
			for _, s := range tc.skinny {
				want = want || s == m
			}
			if got := tc.g.SmallM(false, m); got != want {
				t.Errorf("%s: SmallM(false, %d) = %v, want %v", tc.set, m, got, want)
			}
			if got := tc.g.SmallM(true, m); got != (m <= tc.skinnyT) {
				t.Errorf("%s: SmallM(true, %d) = %v, want %v", tc.set, m, got, m <= tc.skinnyT)
			}
		}
	}
}

// TestSmallMRowsAlone checks that on the skinny path each row of C comes
// out bitwise as it does computed alone (m = 1), for every m the rule
// sends there, both layouts of B, B large enough for the stream kernels
// and the wide axpys kernel, and odd sizes: decoding several sequences
// at once then gives each the logits it gets alone.
func TestSmallMRowsAlone(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for _, set := range []struct {
		name string
		g    *gemm.Driver
		ok   bool
	}{{"avx2", gemmAVX2, hasAVX2}, {"avx512", gemmAVX512, hasAVX512}} {
		if !set.ok {
			continue
		}
		for _, sh := range [][2]int{{37, 101}, {768, 517}, {333, 1601}} {
			k, n := sh[0], sh[1]
			b := make([]float32, k*n+1)
			for i := range b {
				b[i] = rnd.Float32()*2 - 1
			}
			for _, transB := range []bool{false, true} {
				ldb := n
				if transB {
					ldb = k
				}
				for m := 1; m <= 16; m++ {
					if !set.g.SmallM(transB, m) {
						continue
					}
					lda := k + 3
					a := make([]float32, m*lda+1)
					for i := range a {
						a[i] = rnd.Float32()*2 - 1
					}
					c := make([]float32, m*n)
					set.g.Gemm(false, transB, m, n, k, 1, a[1:], lda, b[1:], ldb, 0, c, n)
					one := make([]float32, n)
					for i := 0; i < m; i++ {
						set.g.Gemm(false, transB, 1, n, k, 1, a[1+i*lda:], lda, b[1:], ldb, 0, one, n)
						for j := range one {
							if math.Float32bits(one[j]) != math.Float32bits(c[i*n+j]) {
								t.Fatalf("%s k=%d n=%d transB=%v m=%d: C[%d][%d] = %v, alone %v", set.name, k, n, transB, m, i, j, c[i*n+j], one[j])
							}
						}
					}
				}
			}
		}
	}
}
