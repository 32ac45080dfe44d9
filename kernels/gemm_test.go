package kernels

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// gemmCase is one GEMM problem: sizes, transposes, scalars and the extra
// columns added to each leading dimension (odd pads give odd strides).
type gemmCase struct {
	transA, transB bool
	m, n, k        int
	alpha, beta    float32
	pad            int // added to every leading dimension
	off            int // elements before the first one of each slice
}

// gemmData holds a case's inputs, built deterministically.
type gemmData struct {
	a, b, c       []float32
	lda, ldb, ldc int
}

func (tc gemmCase) data(r *rand.Rand) gemmData {
	ar, ac := opShape(tc.transA, tc.m, tc.k)
	br, bc := opShape(tc.transB, tc.k, tc.n)
	d := gemmData{lda: ac + tc.pad, ldb: bc + tc.pad, ldc: tc.n + tc.pad}
	size := func(rows, ld int) int { return rows * ld }
	d.a = offsetCopy(randSlice(r, size(ar, d.lda)), tc.off)
	d.b = offsetCopy(randSlice(r, size(br, d.ldb)), tc.off)
	d.c = offsetCopy(randSlice(r, size(tc.m, d.ldc)), tc.off)
	return d
}

// gemmRef returns C = alpha*op(A)*op(B) + beta*C in float64, and for each
// entry the bound |alpha|*sum|a*b| + |beta*c| used to scale tolerances.
func gemmRef(tc gemmCase, d gemmData) (ref, mag []float64) {
	ref = make([]float64, tc.m*tc.n)
	mag = make([]float64, tc.m*tc.n)
	at := func(s []float32, trans bool, ld, i, j int) float64 {
		if trans {
			return float64(s[j*ld+i])
		}
		return float64(s[i*ld+j])
	}
	for i := 0; i < tc.m; i++ {
		for j := 0; j < tc.n; j++ {
			var s, sa float64
			for p := 0; p < tc.k; p++ {
				v := at(d.a, tc.transA, d.lda, i, p) * at(d.b, tc.transB, d.ldb, p, j)
				s += v
				sa += math.Abs(v)
			}
			cv := 0.0
			if tc.beta != 0 {
				cv = float64(tc.beta) * float64(d.c[i*d.ldc+j])
			}
			ref[i*tc.n+j] = float64(tc.alpha)*s + cv
			mag[i*tc.n+j] = math.Abs(float64(tc.alpha))*sa + math.Abs(cv)
		}
	}
	return ref, mag
}

// Tolerance for GEMM: every implementation may sum the k products in any
// order and fuse multiply-adds, so each entry may differ from the exact
// result by up to (k+2)·eps32·(|alpha|·Σ|a·b| + |beta·c|) (the standard
// bound for recursive summation), plus a tiny absolute term for entries
// that cancel to near zero.
func gemmTol(k int, mag float64) float64 {
	return float64(k+2)*float32Eps*mag + 1e-30
}

// checkGemm runs one case on p and compares C, and everything around C
// in its backing array (which must be untouched), against the reference.
func checkGemmCase(t *testing.T, p *Impl, tc gemmCase, seed uint64) {
	t.Helper()
	d := tc.data(newRand(seed))
	ref, mag := gemmRef(tc, d)
	// Fill the padding of C with a sentinel to catch stray writes.
	full := d.c[:cap(d.c)]
	for i := 0; i < tc.m; i++ {
		for j := tc.n; j < d.ldc && i*d.ldc+j < len(full); j++ {
			full[i*d.ldc+j] = 12345
		}
	}
	if tc.beta == 0 {
		// C must not be read: poison it.
		for i := 0; i < tc.m; i++ {
			for j := 0; j < tc.n; j++ {
				d.c[i*d.ldc+j] = float32(math.NaN())
			}
		}
	}
	p.Gemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, d.a, d.lda, d.b, d.ldb, tc.beta, d.c, d.ldc)
	bad := 0
	for i := 0; i < tc.m; i++ {
		for j := 0; j < d.ldc && i*d.ldc+j < len(full); j++ {
			got := full[i*d.ldc+j]
			if j >= tc.n {
				if got != 12345 {
					t.Errorf("%+v: padding C[%d,%d] overwritten with %v", tc, i, j, got)
					return
				}
				continue
			}
			want := ref[i*tc.n+j]
			if math.Abs(float64(got)-want) > gemmTol(tc.k, mag[i*tc.n+j]) || got != got {
				if bad++; bad <= 3 {
					t.Errorf("%s %+v: C[%d,%d] = %v, want %v (tol %.3g)", p.Name(), tc, i, j, got, want, gemmTol(tc.k, mag[i*tc.n+j]))
				}
			}
		}
	}
}

// TestGemmSweep crosses every unroll and tail boundary of every
// micro-kernel: each of m, n and k runs over 0..70 while the other two
// take a few fixed values, for all four transpose combinations.
func TestGemmSweep(t *testing.T) {
	fixed := []int{1, 17, 45}
	if testing.Short() {
		fixed = []int{17}
	}
	forEachImpl(t, func(t *testing.T, p *Impl) {
		seed := uint64(1)
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				for dim := 0; dim < 3; dim++ {
					for v := 0; v <= 70; v++ {
						for _, f := range fixed {
							sz := [3]int{f, f + 3, f + 1}
							sz[dim] = v
							tc := gemmCase{transA: ta, transB: tb, m: sz[0], n: sz[1], k: sz[2], alpha: 1, beta: 0, pad: v % 3, off: v % 5}
							if v%2 == 1 {
								tc.alpha, tc.beta = -0.5, 1
							}
							seed++
							checkGemmCase(t, p, tc, seed)
						}
					}
				}
			}
		}
	})
}

// TestGemmScalarsAndLarge covers alpha and beta in {0, 1, other} and a
// sample of sizes past the cache-blocking boundaries (kc, mc, nc) and the
// parallel threshold.
func TestGemmScalarsAndLarge(t *testing.T) {
	type shape struct{ m, n, k int }
	shapes := []shape{{33, 65, 300}, {200, 97, 257}, {350, 40, 513}, {129, 300, 64}, {768, 65, 128}}
	if !testing.Short() {
		shapes = append(shapes, shape{300, 4200, 30}, shape{520, 530, 540})
	}
	scalars := [][2]float32{{1, 0}, {1, 1}, {0, 0}, {0, 1}, {0, 0.5}, {2.5, -0.75}, {1, 0.5}}
	forEachImpl(t, func(t *testing.T, p *Impl) {
		seed := uint64(100)
		for _, s := range shapes {
			for ti := 0; ti < 4; ti++ {
				for _, ab := range scalars {
					seed++
					tc := gemmCase{transA: ti&1 != 0, transB: ti&2 != 0, m: s.m, n: s.n, k: s.k, alpha: ab[0], beta: ab[1], pad: int(seed % 4), off: int(seed % 3)}
					checkGemmCase(t, p, tc, seed)
					if testing.Short() || s.m*s.n*s.k > 1e7 {
						break // one (alpha, beta) per transpose for the big ones
					}
				}
			}
		}
	})
}

// TestGemmMatchesGeneric compares every implementation with generic
// directly on random shapes (generic itself is held to float64 above).
func TestGemmMatchesGeneric(t *testing.T) {
	r := newRand(7)
	for _, p := range nonGeneric() {
		for it := 0; it < 300; it++ {
			tc := gemmCase{transA: r.IntN(2) == 1, transB: r.IntN(2) == 1, m: r.IntN(90), n: r.IntN(90), k: r.IntN(300), alpha: r.Float32()*2 - 1, beta: float32(r.IntN(3)) * 0.5, pad: r.IntN(5), off: r.IntN(4)}
			d := tc.data(r)
			want := append([]float32(nil), d.c...)
			genericImpl.Gemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, d.a, d.lda, d.b, d.ldb, tc.beta, want, d.ldc)
			p.Gemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, d.a, d.lda, d.b, d.ldb, tc.beta, d.c, d.ldc)
			_, mag := gemmRef(tc, d)
			for i := 0; i < tc.m; i++ {
				for j := 0; j < tc.n; j++ {
					g, w := d.c[i*d.ldc+j], want[i*d.ldc+j]
					if math.Abs(float64(g-w)) > 2*gemmTol(tc.k, mag[i*tc.n+j]) {
						t.Fatalf("%s %+v: C[%d,%d] = %v, generic %v", p.Name(), tc, i, j, g, w)
					}
				}
			}
		}
	}
}

func TestMatMul(t *testing.T) {
	forEachImpl(t, func(t *testing.T, p *Impl) {
		a := []float32{1, 2, 3, 4, 5, 6}    // 2×3
		b := []float32{7, 8, 9, 10, 11, 12} // 3×2
		c := []float32{-1, -1, -1, -1}      // overwritten
		p.MatMul(2, 2, 3, a, b, c)
		want := []float32{58, 64, 139, 154}
		for i := range want {
			if c[i] != want[i] {
				t.Fatalf("MatMul = %v, want %v", c, want)
			}
		}
	})
}

// TestGemmAllocs checks that a warm GEMM allocates nothing, packing
// buffers included.
func TestGemmAllocs(t *testing.T) {
	forEachImpl(t, func(t *testing.T, p *Impl) {
		for _, s := range [][3]int{{7, 9, 5}, {100, 130, 300}, {256, 256, 256}} {
			m, n, k := s[0], s[1], s[2]
			a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
			for _, tb := range []bool{false, true} {
				ldb := n
				if tb {
					ldb = k
				}
				p.Gemm(false, tb, m, n, k, 1, a, k, b, ldb, 0, c, n) // warm up
				allocs := testing.AllocsPerRun(10, func() {
					p.Gemm(false, tb, m, n, k, 1, a, k, b, ldb, 0.5, c, n)
				})
				if allocs != 0 {
					t.Errorf("%v transB=%v: %v allocations per call, want 0", s, tb, allocs)
				}
			}
		}
	})
}

// TestGemmBadShapes checks that bad arguments panic in Go with a message
// that names the function, the argument and the numbers.
func TestGemmBadShapes(t *testing.T) {
	a, b, c := make([]float32, 12), make([]float32, 12), make([]float32, 9)
	cases := []struct {
		name string
		call func()
		want string
	}{
		{"negative m", func() { Gemm(false, false, -1, 3, 4, 1, a, 4, b, 3, 0, c, 3) }, "kernels.Gemm: m = -1"},
		{"short a", func() { Gemm(false, false, 3, 3, 5, 1, a, 5, b, 3, 0, c, 3) }, "kernels.Gemm: len(a) = 12, want >= 15"},
		{"small lda", func() { Gemm(false, false, 3, 3, 4, 1, a, 3, b, 3, 0, c, 3) }, "kernels.Gemm: lda = 3 is smaller than the row length 4"},
		{"short b transposed", func() { Gemm(false, true, 3, 4, 4, 1, a, 4, b, 4, 0, c, 4) }, "kernels.Gemm: len(b) = 12, want >= 16"},
		{"short c", func() { Gemm(false, false, 3, 4, 3, 1, a, 4, b, 4, 0, c, 4) }, "kernels.Gemm: len(c) = 9, want >= 12"},
		{"small ldc", func() { Gemm(false, false, 3, 3, 4, 1, a, 4, b, 3, 0, c, 2) }, "kernels.Gemm: ldc = 2"},
		{"matmul short c", func() { MatMul(3, 3, 4, a, b, c[:8]) }, "kernels.MatMul: len(c) = 8, want >= 9"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msg := panicMessage(tc.call)
			if !strings.Contains(msg, tc.want) {
				t.Errorf("panic %q, want it to contain %q", msg, tc.want)
			}
		})
	}
}

// panicMessage runs f and returns the message it panicked with ("" if
// none).
func panicMessage(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg, _ = r.(string)
			if msg == "" {
				msg = "non-string panic"
			}
		}
	}()
	f()
	return ""
}
