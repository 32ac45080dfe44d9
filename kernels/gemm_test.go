package kernels

import (
	"math"
	"math/rand/v2"
	"runtime"
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
	forEachGemmImpl(t, func(t *testing.T, p *Impl) {
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
	forEachGemmImpl(t, func(t *testing.T, p *Impl) {
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
	for _, p := range gemmNonGeneric() {
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
	forEachGemmImpl(t, func(t *testing.T, p *Impl) {
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
	forEachGemmImpl(t, func(t *testing.T, p *Impl) {
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

// gemmBiasGELUCase runs GemmBiasGELU of every implementation on one case
// (alpha and beta of tc are ignored) and checks it: pre against the
// float64 product plus bias within Gemm's tolerance (the bias counts as
// one more term), out against gelu of pre with GELU's accuracy
// (geluCheckOut), and both bitwise against the same implementation's Gemm
// followed by its BiasGELU, as GemmBiasGELU documents. pre and out are
// poisoned with NaN (they must not be read), and their padding beyond n
// columns, which must stay untouched, holds a sentinel.
func gemmBiasGELUCase(t *testing.T, impls []*Impl, tc gemmCase, seed uint64) {
	t.Helper()
	tc.alpha, tc.beta = 1, 0
	r := newRand(seed)
	d := tc.data(r)
	bias := offsetCopy(randSlice(r, tc.n), (tc.off+1)%5)
	ref, mag := gemmRef(tc, d)
	ldpre, ldout := tc.n+tc.pad, tc.n+(tc.pad+2)%5
	fill := func(ld, off int) []float32 {
		s := make([]float32, tc.m*ld)
		for i := range s {
			s[i] = float32(math.NaN())
			if i%ld >= tc.n {
				s[i] = 12345
			}
		}
		return offsetCopy(s, off)
	}
	name := func(p *Impl) string {
		return fmtShape("impl", p.Name(), "transA", tc.transA, "transB", tc.transB, "m", tc.m, "n", tc.n, "k", tc.k, "ldpre", ldpre, "ldout", ldout)
	}
	for _, p := range impls {
		pre, out := fill(ldpre, tc.off), fill(ldout, (tc.off+3)%5)
		p.GemmBiasGELU(tc.transA, tc.transB, tc.m, tc.n, tc.k, d.a, d.lda, d.b, d.ldb, bias, pre, ldpre, out, ldout)
		wantPre, wantOut := fill(ldpre, 0), fill(ldout, 0)
		p.Gemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, 1, d.a, d.lda, d.b, d.ldb, 0, wantPre, ldpre)
		p.BiasGELU(tc.m, tc.n, wantPre, ldpre, bias, wantOut, ldout)
		for i := range wantPre {
			if !bitsEqual(pre[i], wantPre[i]) {
				t.Fatalf("%s: pre[%d] = %v, Gemm then BiasGELU gives %v", name(p), i, pre[i], wantPre[i])
			}
		}
		for i := range wantOut {
			if !bitsEqual(out[i], wantOut[i]) {
				t.Fatalf("%s: out[%d] = %v, Gemm then BiasGELU gives %v", name(p), i, out[i], wantOut[i])
			}
		}
		for i := 0; i < tc.m; i++ {
			for j := 0; j < tc.n; j++ {
				want := ref[i*tc.n+j] + float64(bias[j])
				tol := gemmTol(tc.k+1, mag[i*tc.n+j]+math.Abs(float64(bias[j])))
				if got := pre[i*ldpre+j]; math.Abs(float64(got)-want) > tol || got != got {
					t.Fatalf("%s: pre[%d,%d] = %v, want %v (tol %.3g)", name(p), i, j, got, want, tol)
				}
			}
			geluCheckOut(t, p, name(p), pre[i*ldpre:i*ldpre+tc.n], out[i*ldout:i*ldout+tc.n], false, nil)
		}
	}
}

// TestGemmBiasGELU runs GemmBiasGELU over shapes that cross the
// micro-tiles' edges (m around MR = 6, 8 and 14, n around NR = 12, 16
// and 32 and the narrow and dot paths), k = 0 and k across the unroll and
// kc, with all four transposes and odd leading dimensions.
func TestGemmBiasGELU(t *testing.T) {
	epilogueSweep(500, []int{1, 2, 13, 14, 15, 29, 100}, func(tc gemmCase, seed uint64) {
		gemmBiasGELUCase(t, gemmImpls(), tc, seed)
	})
}

// epilogueSweep calls check on the cases of a GEMM-with-epilogue sweep:
// m from ms (1, 15 and 29 under -short), n across the micro-tiles' edges
// and the narrow and dot paths, k = 0 and k across the unroll and kc, all
// four transposes, odd leading dimensions and offsets, seeds from seed0+1.
func epilogueSweep(seed0 uint64, ms []int, check func(tc gemmCase, seed uint64)) {
	ns := []int{1, 3, 17, 32, 33, 65, 200}
	ks := []int{0, 1, 7, 129, 300}
	if testing.Short() {
		ms, ns, ks = []int{1, 15, 29}, []int{3, 33, 65}, []int{0, 7, 300}
	}
	seed := seed0
	for ti := 0; ti < 4; ti++ {
		for _, m := range ms {
			for _, n := range ns {
				for _, k := range ks {
					seed++
					check(gemmCase{transA: ti&1 != 0, transB: ti&2 != 0, m: m, n: n, k: k, pad: 1 + int(seed%3), off: int(seed % 5)}, seed)
				}
			}
		}
	}
}

// TestGemmBiasGELULarge runs GemmBiasGELU past the column block of the
// SIMD drivers (nc is 768 or 1536 on Zen 4) and above the size at which
// their GEMM splits C into strips of rows (m >= n) or of columns (m < n)
// over goroutines, with GOMAXPROCS at least 2 so that it does: the
// epilogue of each strip must take its own part of bias and out. Smaller
// blockings are tested in kernels/amd64 and kernels/arm64.
func TestGemmBiasGELULarge(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	epilogueLarge(900, func(tc gemmCase, seed uint64) { gemmBiasGELUCase(t, gemmNonGeneric(), tc, seed) })
}

// epilogueLarge calls check on shapes past the SIMD drivers' column block
// and large enough to be split into strips, with all four transposes,
// seeds from seed0+1 (two shapes under -short).
func epilogueLarge(seed0 uint64, check func(tc gemmCase, seed uint64)) {
	shapes := [][3]int{{512, 256, 256}, {258, 520, 257}, {300, 1600, 40}}
	if testing.Short() {
		shapes = shapes[:2]
	}
	seed := seed0
	for _, s := range shapes {
		for ti := 0; ti < 4; ti++ {
			seed++
			check(gemmCase{transA: ti&1 != 0, transB: ti&2 != 0, m: s[0], n: s[1], k: s[2], pad: int(seed % 3), off: int(seed % 5)}, seed)
		}
	}
}

// TestGemmBiasGELUAllocs checks that a warm GemmBiasGELU allocates
// nothing, on one goroutine and on parallel strips.
func TestGemmBiasGELUAllocs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	forEachGemmImpl(t, func(t *testing.T, p *Impl) {
		for _, s := range [][3]int{{7, 9, 5}, {100, 130, 0}, {100, 130, 300}, {512, 256, 256}, {256, 512, 256}} {
			m, n, k := s[0], s[1], s[2]
			if p == genericImpl && m*n*k > 1e6 {
				continue
			}
			a, b, bias := make([]float32, m*k), make([]float32, k*n), make([]float32, n)
			pre, out := make([]float32, m*n), make([]float32, m*n)
			for _, tb := range []bool{false, true} {
				ldb := n
				if tb {
					ldb = k
				}
				p.GemmBiasGELU(false, tb, m, n, k, a, k, b, ldb, bias, pre, n, out, n) // warm up
				allocs := testing.AllocsPerRun(5, func() {
					p.GemmBiasGELU(false, tb, m, n, k, a, k, b, ldb, bias, pre, n, out, n)
				})
				if allocs != 0 {
					t.Errorf("%v transB=%v: %v allocations per call, want 0", s, tb, allocs)
				}
			}
		}
	})
}

// TestGemmBiasGELUBadArgs checks that bad arguments panic in Go with a
// message that names the function, the argument and the numbers, and
// that overlapping matrices are refused.
func TestGemmBiasGELUBadArgs(t *testing.T) {
	buf := make([]float32, 100)
	a, b, bias := make([]float32, 12), make([]float32, 12), make([]float32, 3)
	pre, out := make([]float32, 9), make([]float32, 9)
	call := func(m, n, k int, a []float32, lda int, b []float32, ldb int, bias, pre []float32, ldpre int, out []float32, ldout int) func() {
		return func() { GemmBiasGELU(false, false, m, n, k, a, lda, b, ldb, bias, pre, ldpre, out, ldout) }
	}
	cases := []struct {
		name string
		call func()
		want string
	}{
		{"negative m", call(-1, 3, 4, a, 4, b, 3, bias, pre, 3, out, 3), "kernels.GemmBiasGELU: m = -1, must be >= 0"},
		{"negative k", call(3, 3, -2, a, 4, b, 3, bias, pre, 3, out, 3), "kernels.GemmBiasGELU: k = -2, must be >= 0"},
		{"short a", call(3, 3, 5, a, 5, b, 3, bias, pre, 3, out, 3), "kernels.GemmBiasGELU: len(a) = 12, want >= 15"},
		{"small lda", call(3, 3, 4, a, 3, b, 3, bias, pre, 3, out, 3), "kernels.GemmBiasGELU: lda = 3 is smaller than the row length 4"},
		{"short b transposed", func() { GemmBiasGELU(false, true, 3, 3, 5, buf, 5, b, 5, bias, pre, 3, out, 3) }, "kernels.GemmBiasGELU: len(b) = 12, want >= 15"},
		{"short bias", call(3, 3, 4, a, 4, b, 3, bias[:2], pre, 3, out, 3), "kernels.GemmBiasGELU: len(bias) = 2, want >= 3"},
		{"short pre", call(3, 3, 4, a, 4, b, 3, bias, pre[:8], 3, out, 3), "kernels.GemmBiasGELU: len(pre) = 8, want >= 9"},
		{"small ldpre", call(3, 3, 4, a, 4, b, 3, bias, pre, 2, out, 3), "kernels.GemmBiasGELU: ldpre = 2 is smaller than the row length 3"},
		{"short out", call(3, 3, 4, a, 4, b, 3, bias, pre, 3, out, 4), "kernels.GemmBiasGELU: len(out) = 9, want >= 11"},
		{"pre overlaps a", call(3, 3, 4, buf, 4, b, 3, bias, buf[10:], 3, out, 3), "kernels.GemmBiasGELU: pre overlaps a"},
		{"pre overlaps b", call(3, 3, 4, a, 4, buf, 3, bias, buf[5:], 3, out, 3), "kernels.GemmBiasGELU: pre overlaps b"},
		{"out overlaps a", call(3, 3, 4, buf, 4, b, 3, bias, pre, 3, buf[11:], 3), "kernels.GemmBiasGELU: out overlaps a"},
		{"out overlaps b", call(3, 3, 4, a, 4, buf[20:], 3, bias, pre, 3, buf[30:], 3), "kernels.GemmBiasGELU: out overlaps b"},
		{"out overlaps pre", call(3, 3, 4, a, 4, b, 3, bias, buf, 3, buf[8:], 3), "kernels.GemmBiasGELU: out overlaps pre"},
		{"out is pre", call(3, 3, 4, a, 4, b, 3, bias, buf, 3, buf, 3), "kernels.GemmBiasGELU: out overlaps pre"},
		{"bias in pre", call(3, 3, 4, a, 4, b, 3, buf[4:], buf, 3, out, 3), "kernels.GemmBiasGELU: pre overlaps bias"},
		{"bias in out", call(3, 3, 4, a, 4, b, 3, buf[2:], pre, 3, buf, 3), "kernels.GemmBiasGELU: out overlaps bias"},
		{"k = 0, out overlaps pre", call(2, 3, 0, nil, 0, nil, 3, bias, buf, 3, buf[3:], 3), "kernels.GemmBiasGELU: out overlaps pre"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msg := panicMessage(tc.call)
			if !strings.Contains(msg, tc.want) {
				t.Errorf("panic %q, want it to contain %q", msg, tc.want)
			}
		})
	}
	// Empty shapes, and A and B overlapping pre or out when k = 0 (they
	// are not read), are fine.
	for _, f := range []func(){
		call(0, 3, 4, a, 4, b, 3, bias, nil, 3, nil, 3),
		call(3, 0, 4, a, 4, b, 0, nil, nil, 0, nil, 0),
		call(3, 3, 0, buf, 0, buf, 3, bias, buf, 3, buf[50:], 3),
	} {
		if msg := panicMessage(f); msg != "" {
			t.Errorf("unexpected panic %q", msg)
		}
	}
}
