package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"
)

// goKernel returns a pure-Go micro-kernel of mr×nr with the KernelFunc
// contract; packed kernels (packed true) read A as a panel of ps floats
// per k step.
func goKernel(mr, nr, ps int, packed bool) KernelFunc {
	return func(k int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, rows, cols int, alpha, beta float32) {
		if rows > mr || cols > nr {
			panic(fmt.Sprintf("tile %dx%d beyond %dx%d", rows, cols, mr, nr))
		}
		at := func(p *float32, i int) float32 { return *(*float32)(unsafe.Add(unsafe.Pointer(p), 4*i)) }
		for i := 0; i < rows; i++ {
			for j := 0; j < cols; j++ {
				var s float32
				for p := 0; p < k; p++ {
					ai := i*rsa + p*csa
					if packed {
						ai = p*ps + i
					}
					s += at(a, ai) * at(b, p*ldb+j)
				}
				cp := (*float32)(unsafe.Add(unsafe.Pointer(c), 4*(i*ldc+j)))
				v := alpha * s
				if beta != 0 {
					v += beta * *cp
				}
				*cp = v
			}
		}
	}
}

// goDriver is a Driver over pure-Go kernels of mr×nr (narrow nr/2), so
// that the driver's loops can be tested under any blocking on any
// platform.
func goDriver(mr, nr, ps int) *Driver {
	mk := func(nr int) MicroKernel {
		return MicroKernel{MR: mr, NR: nr, Strided: goKernel(mr, nr, ps, false), Packed: goKernel(mr, nr, ps, true)}
	}
	return New("go", Kernels{Wide: mk(nr), Narrow: mk(nr / 2), PanelStride: ps}, zen4)
}

// TestDriverBlockings runs the driver's loop nest under blockings far
// from the model's (blocks of one tile, depths not a multiple of anything)
// and the model's own, over shapes that cross every block boundary, with
// every transpose and beta, against a float64 reference.
func TestDriverBlockings(t *testing.T) {
	g := goDriver(6, 8, 8)
	r := rand.New(rand.NewPCG(1, 2))
	blockings := []Blocking{{KC: 5, MC: 6, NC: 8}, {KC: 16, MC: 12, NC: 24}, {KC: 64, MC: 18, NC: 16}, g.Blocking()}
	shapes := [][3]int{{1, 1, 1}, {7, 9, 17}, {13, 33, 40}, {30, 70, 11}, {6, 8, 64}}
	for _, bl := range blockings {
		g.SetBlocking(bl)
		for _, s := range shapes {
			m, n, k := s[0], s[1], s[2]
			for tr := 0; tr < 4; tr++ {
				for _, beta := range []float32{0, 1, 0.5} {
					transA, transB := tr&1 != 0, tr&2 != 0
					lda, ldb, ldc := k+1, n+3, n+2
					ar, br := m, k
					if transA {
						lda, ar = m+2, k
					}
					if transB {
						ldb, br = k+3, n
					}
					if !transB && beta == 1 {
						ldb = (n + 15) / 16 * 16 // rows on cache lines: B read in place
					}
					a, b, c := randSlice(r, ar*lda), aligned(randSlice(r, br*ldb+16)), randSlice(r, m*ldc)
					if !transB && beta == 1 && !BInPlace(transB, m, b, ldb) {
						t.Fatalf("%dx%dx%d: B not read in place", m, n, k)
					}
					c0 := append([]float32(nil), c...)
					const alpha = 1.5
					g.Gemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
					for i := 0; i < m; i++ {
						for j := 0; j < n; j++ {
							var want, mag float64
							for p := 0; p < k; p++ {
								ai, bi := i*lda+p, p*ldb+j
								if transA {
									ai = p*lda + i
								}
								if transB {
									bi = j*ldb + p
								}
								av, bv := a[ai], b[bi]
								want += float64(av) * float64(bv)
								mag += math.Abs(float64(av) * float64(bv))
							}
							want = alpha*want + float64(beta)*float64(c0[i*ldc+j])
							if got := c[i*ldc+j]; math.Abs(float64(got)-want) > 1e-5*(mag+2) {
								t.Fatalf("blocking %+v, %dx%dx%d trans %v %v beta %v: C[%d,%d] = %v, want %v", bl, m, n, k, transA, transB, beta, i, j, got, want)
							}
						}
						// Beyond n in each row of C: untouched.
						for j := n; j < ldc && i*ldc+j < len(c); j++ {
							if c[i*ldc+j] != c0[i*ldc+j] {
								t.Fatalf("blocking %+v, %dx%dx%d: C[%d,%d] beyond n written", bl, m, n, k, i, j)
							}
						}
					}
				}
			}
		}
	}
}

// aligned returns the part of s from its first 64-byte boundary.
func aligned(s []float32) []float32 {
	off := (64 - int(uintptr(unsafe.Pointer(&s[0]))%64)) % 64 / 4
	return s[off:]
}

func randSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64())
	}
	return s
}

func TestSetBlockingPanics(t *testing.T) {
	g := goDriver(6, 8, 8)
	for _, b := range []Blocking{{0, 6, 8}, {16, 0, 8}, {16, 7, 8}, {16, 6, 0}, {16, 6, 12}} {
		func() {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.Contains(s, "gemm.SetBlocking") {
					t.Errorf("SetBlocking(%+v) panicked with %v, want a message naming gemm.SetBlocking", b, r)
				}
			}()
			g.SetBlocking(b)
		}()
	}
}

// goBiasGELU is an EpilogueFunc like a set's BiasGELU (vec the bias, mat
// written), with an element-wise function standing in for GELU (its
// arithmetic does not depend on an element's position, as every set's
// BiasGELU).
func goBiasGELU(m, n int, x []float32, ldx int, bias []float32, y []float32, ldy int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			v := x[i*ldx+j] + bias[j]
			x[i*ldx+j] = v
			y[i*ldy+j] = float32(math.Tanh(float64(v)))
		}
	}
}

// goBias is an EpilogueFunc like GemmBias's (vec the bias, mat an optional
// residual, read).
func goBias(m, n int, c []float32, ldc int, bias []float32, r []float32, ldr int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			c[i*ldc+j] += bias[j]
			if r != nil {
				c[i*ldc+j] += r[i*ldr+j]
			}
		}
	}
}

// goScaleBy is an EpilogueFunc like GemmGELUBackward's (no vector, mat
// read): c times a function of mat.
func goScaleBy(m, n int, c []float32, ldc int, vec []float32, x []float32, ldx int) {
	if vec != nil {
		panic("goScaleBy: a vector")
	}
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			c[i*ldc+j] *= float32(math.Cos(float64(x[i*ldx+j])))
		}
	}
}

// TestDriverGemmEpilogue checks the epilogues under blockings of a few
// tiles (so that they run once per sliver of every block of rows and
// columns, on the last block of k only) and on parallel strips of rows
// and of columns, with a vector and a matrix, with a vector alone and
// with a matrix alone: C and the matrix must be bitwise Gemm followed by
// the epilogue over the whole matrix, and nothing beyond n columns of
// either may be written.
func TestDriverGemmEpilogue(t *testing.T) {
	g := goDriver(6, 8, 8)
	r := rand.New(rand.NewPCG(5, 6))
	blockings := []Blocking{{KC: 5, MC: 6, NC: 8}, {KC: 16, MC: 12, NC: 24}, g.Blocking()}
	shapes := [][3]int{{1, 1, 1}, {7, 9, 17}, {13, 33, 40}, {30, 70, 11}, {6, 8, 64}, {20, 5, 0}, {40, 90, 33}, {50, 20, 9}}
	epis := []struct {
		name     string
		fn       EpilogueFunc
		vec, mat bool
	}{
		{"bias and GELU", goBiasGELU, true, true},
		{"bias", goBias, true, false},
		{"bias and residual", goBias, true, true},
		{"scaled by a matrix", goScaleBy, false, true},
	}
	for _, ep := range epis {
		for _, bl := range blockings {
			g.SetBlocking(bl)
			for _, s := range shapes {
				m, n, k := s[0], s[1], s[2]
				for tr := 0; tr < 4; tr++ {
					// workers 0: GemmEpilogue itself (one goroutine at
					// these sizes); otherwise the parallel strips.
					for _, workers := range []int{0, 2, 3, 5} {
						transA, transB := tr&1 != 0, tr&2 != 0
						lda, ldb, ldc, ldmat := k+1, n+3, n+2, n+5
						ar, br := m, k
						if transA {
							lda, ar = m+2, k
						}
						if transB {
							ldb, br = k+3, n
						}
						a, b := randSlice(r, ar*lda+1), randSlice(r, br*ldb+1)
						var vec []float32
						if ep.vec {
							vec = randSlice(r, n+2)
						}
						fill := func(ld int) []float32 {
							s := make([]float32, m*ld)
							for i := range s {
								s[i] = float32(math.NaN()) // not read
								if i%ld >= n {
									s[i] = 777 // never written
								}
							}
							return s
						}
						mats := func() ([]float32, []float32) { return nil, nil }
						if ep.mat {
							base := randSlice(r, m*ldmat)
							mats = func() ([]float32, []float32) {
								return append([]float32(nil), base...), append([]float32(nil), base...)
							}
						}
						c, want := fill(ldc), fill(ldc)
						mat, wantMat := mats()
						g.Gemm(transA, transB, m, n, k, 1, a, lda, b, ldb, 0, want, ldc)
						ep.fn(m, n, want, ldc, vec, wantMat, ldmat)
						if workers == 0 {
							g.GemmEpilogue(transA, transB, m, n, k, a, lda, b, ldb, c, ldc, ep.fn, vec, mat, ldmat)
						} else {
							if k == 0 {
								continue // GemmEpilogue handles k = 0 before any strip
							}
							args := gemmArgs{transA: transA, transB: transB, m: m, n: n, k: k, alpha: 1, a: a, lda: lda, b: b, ldb: ldb, c: c, ldc: ldc, epi: epilogue{ep.fn, vec, mat, ldmat}}
							g.parallel(&args, workers)
						}
						name := fmt.Sprintf("%s, blocking %+v, %dx%dx%d trans %v %v, workers %d", ep.name, bl, m, n, k, transA, transB, workers)
						for i := range want {
							if math.Float32bits(c[i]) != math.Float32bits(want[i]) {
								t.Fatalf("%s: c[%d] = %v, want %v", name, i, c[i], want[i])
							}
						}
						for i := range wantMat {
							if math.Float32bits(mat[i]) != math.Float32bits(wantMat[i]) {
								t.Fatalf("%s: mat[%d] = %v, want %v", name, i, mat[i], wantMat[i])
							}
						}
					}
				}
			}
		}
	}
}

// TestAInPlace checks the rule that decides whether an untransposed A is
// read in place however wide the block: the MR rows of a sliver, lda
// floats apart, must not put more than W1 − 1 rows into one L1 set.
func TestAInPlace(t *testing.T) {
	wide := goDriver(14, 32, 16) // Zen 4's L1d: 32 KiB, 8 ways of 4 KiB
	narrow := goDriver(6, 16, 8)
	noStrided := goDriver(6, 16, 8)
	noStrided.Wide.Strided, noStrided.Narrow.Strided = nil, nil
	cases := []struct {
		name string
		g    *Driver
		lda  int
		want bool
	}{
		{"14 rows, lda 384: 8 offsets", wide, 384, true},
		{"14 rows, lda 1152: 8 offsets", wide, 1152, true},
		{"14 rows, lda 1536: 2 offsets, 7 rows a set", wide, 1536, true},
		{"14 rows, lda 512: 2 offsets", wide, 512, true},
		{"14 rows, lda 1024: all in one set", wide, 1024, false},
		{"14 rows, lda 2048", wide, 2048, false},
		{"14 rows, lda 3072: 4 KiB·3", wide, 3072, false},
		{"14 rows, odd lda", wide, 1031, true},
		{"14 rows, huge lda", wide, math.MaxInt/4*4 - 1024 + 1, true},
		{"14 rows, huge lda multiple of 1024", wide, math.MaxInt &^ 1023, false},
		{"6 rows, lda 1024: 6 rows fit 7 ways", narrow, 1024, true},
		{"no strided kernel", noStrided, 385, false},
	}
	for _, tc := range cases {
		if got := tc.g.AInPlace(tc.lda); got != tc.want {
			t.Errorf("%s: AInPlace(%d) = %v, want %v", tc.name, tc.lda, got, tc.want)
		}
	}
}

// TestBInPlaceRows checks which drivers read an untransposed B in place
// for how many rows of A: up to 512 with a kernel of 8 rows or more, up
// to 64 with fewer (bInPlaceMaxRows), and never for a transposed B, rows
// off cache lines or a 4 KiB stride.
func TestBInPlaceRows(t *testing.T) {
	wide := goDriver(14, 32, 16)
	neon := goDriver(8, 12, 8)
	narrow := goDriver(6, 16, 8)
	b := aligned(make([]float32, 64*1040+16))
	cases := []struct {
		name   string
		g      *Driver
		m, ldb int
		transB bool
		want   bool
	}{
		{"14 rows, m 512", wide, 512, 384, false, true},
		{"14 rows, m 513", wide, 513, 384, false, false},
		{"8 rows, m 512", neon, 512, 384, false, true},
		{"6 rows, m 64", narrow, 64, 512, false, true},
		{"6 rows, m 65", narrow, 65, 512, false, false},
		{"6 rows, m 512", narrow, 512, 384, false, false},
		{"14 rows, transposed", wide, 64, 384, true, false},
		{"14 rows, ldb 1024", wide, 64, 1024, false, false},
		{"14 rows, ldb not a multiple of 16", wide, 64, 385, false, false},
	}
	for _, tc := range cases {
		p := &gemmArgs{transB: tc.transB, m: tc.m, b: b, ldb: tc.ldb}
		if got := tc.g.bInPlace(p); got != tc.want {
			t.Errorf("%s: bInPlace(m=%d, ldb=%d) = %v, want %v", tc.name, tc.m, tc.ldb, got, tc.want)
		}
	}
	if p := (&gemmArgs{m: 8, b: b[1:], ldb: 384}); wide.bInPlace(p) {
		t.Errorf("B off a cache line read in place")
	}
}

// floatSource is a BSource over a float32 B (k×n, or n×k when trans).
type floatSource struct {
	b     []float32
	ldb   int
	trans bool
}

func (s *floatSource) PackB(dst []float32, pc, kc, j0, w, nr int) {
	for q := 0; q < kc; q++ {
		for j := 0; j < nr; j++ {
			v := float32(0)
			if j < w {
				if s.trans {
					v = s.b[(j0+j)*s.ldb+pc+q]
				} else {
					v = s.b[(pc+q)*s.ldb+j0+j]
				}
			}
			dst[q*nr+j] = v
		}
	}
}

// TestGemmSource checks that GemmSource's results are bitwise Gemm's on
// the B its source packs, under blockings far from the model's and the
// model's own, across every block boundary, both layouts of the source's
// B, every beta, alpha 0 and k 0, and with several workers (a parallel
// GEMM splits C by columns when n > m, which offsets the source's
// columns).
func TestGemmSource(t *testing.T) {
	g := goDriver(6, 8, 8)
	r := rand.New(rand.NewPCG(3, 4))
	blockings := []Blocking{{KC: 5, MC: 6, NC: 8}, {KC: 16, MC: 12, NC: 24}, g.Blocking()}
	shapes := [][3]int{{1, 1, 1}, {7, 9, 17}, {13, 33, 40}, {30, 70, 11}, {6, 8, 0}, {20, 130, 50}, {130, 20, 50}}
	for _, bl := range blockings {
		g.SetBlocking(bl)
		for _, s := range shapes {
			m, n, k := s[0], s[1], s[2]
			for _, trans := range []bool{false, true} {
				for _, ab := range [][2]float32{{1.5, 0}, {1, 1}, {0.5, 0.5}, {0, 2}} {
					alpha, beta := ab[0], ab[1]
					lda, ldb, ldc := k+1, n+3, n+2
					br := k
					if trans {
						ldb, br = k+3, n
					}
					a, b, c := randSlice(r, m*lda), randSlice(r, br*ldb+1), randSlice(r, m*ldc)
					want := append([]float32(nil), c...)
					g.Gemm(false, trans, m, n, k, alpha, a, lda, b, ldb, beta, want, ldc)
					c0 := append([]float32(nil), c...)
					g.GemmSource(m, n, k, alpha, a, lda, &floatSource{b, ldb, trans}, beta, c, ldc)
					for i, v := range c {
						if math.Float32bits(v) != math.Float32bits(want[i]) {
							t.Fatalf("blocking %+v, %dx%dx%d trans %v alpha %v beta %v: C[%d] = %v, Gemm's %v", bl, m, n, k, trans, alpha, beta, i, v, want[i])
						}
					}
					if alpha == 0 || k == 0 {
						continue // no strips
					}
					// The strips of a parallel GEMM (rows when m >= n,
					// else columns), as Gemm splits them.
					for _, workers := range []int{2, 3, 8, 64} {
						copy(c, c0)
						args := gemmArgs{m: m, n: n, k: k, alpha: alpha, a: a, lda: lda, beta: beta, c: c, ldc: ldc, src: &floatSource{b, ldb, trans}}
						g.parallel(&args, workers)
						for i, v := range c {
							if math.Float32bits(v) != math.Float32bits(want[i]) {
								t.Fatalf("blocking %+v, %dx%dx%d trans %v alpha %v beta %v, %d workers: C[%d] = %v, Gemm's %v", bl, m, n, k, trans, alpha, beta, workers, i, v, want[i])
							}
						}
					}
				}
			}
		}
	}
}

// roundHalf rounds x to 8 significant bits (nearest, ties away from
// zero): any rounding serves GemmRounded's tests, which need only that
// the operands' elements change.
func roundHalf(dst, x []float32) {
	for i := range dst {
		dst[i] = math.Float32frombits((math.Float32bits(x[i]) + 0x8000) &^ 0xffff)
	}
}

// TestGemmRounded checks that GemmRounded and GemmEpilogueRounded give
// bitwise Gemm's and GemmEpilogue's results on copies of A and B rounded
// beforehand, under blockings far from the model's and the model's own,
// across every block boundary, every transpose, every beta, B laid out to
// be read in place (which a rounding GEMM never does), on one goroutine and
// split into strips; and that they refuse k = 0 and alpha = 0.
func TestGemmRounded(t *testing.T) {
	g := goDriver(6, 8, 8)
	r := rand.New(rand.NewPCG(5, 6))
	blockings := []Blocking{{KC: 5, MC: 6, NC: 8}, {KC: 16, MC: 12, NC: 24}, g.Blocking()}
	shapes := [][3]int{{1, 1, 1}, {7, 9, 17}, {13, 33, 40}, {30, 70, 11}, {20, 130, 50}, {130, 20, 50}}
	for _, bl := range blockings {
		g.SetBlocking(bl)
		for _, s := range shapes {
			m, n, k := s[0], s[1], s[2]
			for tr := 0; tr < 4; tr++ {
				for _, ab := range [][2]float32{{1.5, 0}, {1, 1}, {0.5, 0.5}} {
					transA, transB := tr&1 != 0, tr&2 != 0
					alpha, beta := ab[0], ab[1]
					lda, ldb, ldc := k+1, (n+15)/16*16, n+2 // B's rows on cache lines
					ar, br := m, k
					if transA {
						lda, ar = m+2, k
					}
					if transB {
						ldb, br = k+3, n
					}
					a, b, c := randSlice(r, ar*lda), aligned(randSlice(r, br*ldb+16)), randSlice(r, m*ldc)
					ra, rb := make([]float32, len(a)), make([]float32, len(b))
					roundHalf(ra, a)
					roundHalf(rb, b)
					name := fmt.Sprintf("blocking %+v, %dx%dx%d trans %v %v alpha %v beta %v", bl, m, n, k, transA, transB, alpha, beta)
					want := append([]float32(nil), c...)
					g.Gemm(transA, transB, m, n, k, alpha, ra, lda, rb, ldb, beta, want, ldc)
					c0 := append([]float32(nil), c...)
					if !g.GemmRounded(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, roundHalf) {
						t.Fatalf("%s: GemmRounded refused", name)
					}
					same := func(what string) {
						t.Helper()
						for i, v := range c {
							if math.Float32bits(v) != math.Float32bits(want[i]) {
								t.Fatalf("%s, %s: C[%d] = %v, on rounded copies %v", name, what, i, v, want[i])
							}
						}
					}
					same("GemmRounded")
					for _, workers := range []int{2, 3, 8} {
						copy(c, c0)
						args := gemmArgs{transA: transA, transB: transB, m: m, n: n, k: k, alpha: alpha, a: a, lda: lda, b: b, ldb: ldb, beta: beta, c: c, ldc: ldc, round: roundHalf}
						g.parallel(&args, workers)
						same(fmt.Sprintf("%d workers", workers))
					}
					if alpha != 1.5 {
						continue
					}
					bias := randSlice(r, n)
					g.GemmEpilogue(transA, transB, m, n, k, ra, lda, rb, ldb, want, ldc, goBias, bias, nil, 0)
					if !g.GemmEpilogueRounded(transA, transB, m, n, k, a, lda, b, ldb, c, ldc, goBias, bias, nil, 0, roundHalf) {
						t.Fatalf("%s: GemmEpilogueRounded refused", name)
					}
					same("GemmEpilogueRounded")
				}
			}
		}
	}
	c := []float32{1}
	if g.GemmRounded(false, false, 1, 1, 0, 1, nil, 1, nil, 1, 0, c, 1, roundHalf) ||
		g.GemmRounded(false, false, 1, 1, 1, 0, []float32{1}, 1, []float32{1}, 1, 0, c, 1, roundHalf) ||
		g.GemmEpilogueRounded(false, false, 1, 1, 0, nil, 1, nil, 1, c, 1, goBias, []float32{1}, nil, 0, roundHalf) {
		t.Error("a rounding GEMM took k = 0 or alpha = 0")
	}
	if c[0] != 1 {
		t.Errorf("a refused rounding GEMM wrote C: %v", c[0])
	}
}
