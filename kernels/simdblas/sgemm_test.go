package simdblas_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/simdgpt/simdgpt/kernels"
	"github.com/simdgpt/simdgpt/kernels/kernelstest"
	"github.com/simdgpt/simdgpt/kernels/simdblas"
)

var transposes = []blas.Transpose{blas.NoTrans, blas.Trans, blas.ConjTrans}

// stored returns the stored shape of a matrix whose op is rows×cols.
func stored(t blas.Transpose, rows, cols int) (int, int) {
	if t == blas.NoTrans {
		return rows, cols
	}
	return cols, rows
}

// matLen is the shortest slice gonum's Sgemm accepts for a stored
// rows×cols matrix with leading dimension ld in a product of m×n: none
// when m or n is 0, else (rows-1)*ld + cols (which for k = 0 is not 0).
func matLen(m, n, rows, cols, ld int) int {
	if m == 0 || n == 0 {
		return 0
	}
	return max(0, (rows-1)*ld+cols)
}

// TestSgemmAgainstGonum compares Sgemm with gonum's over every transpose
// pair gonum defines, m, n, k in {0, 1, 2, 3, 7, 16, 33, 65}, leading
// dimensions 0, 2 or 4 larger than needed, and alpha and beta cycling
// through {0, 1, -0.5, 2}² (each pair of transposes meets all 16). C
// holds NaNs whenever beta is 0, which must overwrite them. On every
// kernel implementation.
func TestSgemmAgainstGonum(t *testing.T) {
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		testSgemmAgainstGonum(t, simdblas.Implementation{Kernels: p})
	})
}

// TestSgemmZeroValue runs the same sweep on the zero Implementation,
// which runs on kernels.Default().
func TestSgemmZeroValue(t *testing.T) {
	testSgemmAgainstGonum(t, simdblas.Implementation{})
}

func testSgemmAgainstGonum(t *testing.T, impl simdblas.Implementation) {
	sizes := []int{0, 1, 2, 3, 7, 16, 33, 65}
	scalars := []float32{0, 1, -0.5, 2}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tA := range transposes {
		for _, tB := range transposes {
			count := 0
			for _, m := range sizes {
				for _, n := range sizes {
					for _, k := range sizes {
						alpha := scalars[count%4]
						beta := scalars[count/4%4]
						pad := 2 * (count % 3)
						count++
						checkSgemm(t, impl, rng, tA, tB, m, n, k, alpha, beta, pad)
					}
				}
			}
		}
	}
}

// TestSgemmLarge compares Sgemm with gonum's on a product large enough
// (70 MFLOP) for kernels.Gemm to split it across goroutines when
// GOMAXPROCS > 1, with odd leading dimensions, for every transpose pair.
func TestSgemmLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("70 MFLOP per call, four calls per implementation")
	}
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		rng := rand.New(rand.NewPCG(17, 18))
		for _, tA := range transposes[:2] {
			for _, tB := range transposes[:2] {
				checkSgemm(t, simdblas.Implementation{Kernels: p}, rng, tA, tB, 257, 263, 520, 0.75, -1.25, 3)
			}
		}
	})
}

// checkSgemm runs one Sgemm on random A, B and C (NaNs when beta is 0),
// with leading dimensions pad larger than needed, and compares the result
// with gonum's: C within the rounding of either sum, A and B unchanged,
// nothing written outside C's m×n elements or past any slice's end.
func checkSgemm(t *testing.T, impl simdblas.Implementation, rng *rand.Rand, tA, tB blas.Transpose, m, n, k int, alpha, beta float32, pad int) {
	t.Helper()
	ar, ac := stored(tA, m, k)
	br, bc := stored(tB, k, n)
	lda, ldb, ldc := max(1, ac)+pad, max(1, bc)+pad, max(1, n)+pad
	a, aFull := guarded(rng, matLen(m, n, ar, ac, lda))
	b, bFull := guarded(rng, matLen(m, n, br, bc, ldb))
	c, cFull := guarded(rng, matLen(m, n, m, n, ldc))
	if beta == 0 {
		for i := range c {
			c[i] = float32(math.NaN())
		}
	}
	a0, b0, c0 := append([]float32(nil), a...), append([]float32(nil), b...), append([]float32(nil), c...)
	want := append([]float32(nil), c...)
	gonum.Implementation{}.Sgemm(tA, tB, m, n, k, alpha, a0, lda, b0, ldb, beta, want, ldc)

	name := fmt.Sprintf("Sgemm(%c, %c, m=%d, n=%d, k=%d, alpha=%v, lda=%d, ldb=%d, beta=%v, ldc=%d)", tA, tB, m, n, k, alpha, lda, ldb, beta, ldc)
	impl.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	checkGuard(t, name+": a", aFull, len(a))
	checkGuard(t, name+": b", bFull, len(b))
	checkGuard(t, name+": c", cFull, len(c))
	if !same(a, a0) || !same(b, b0) {
		t.Fatalf("%s changed A or B", name)
	}
	for i := range c {
		row, col := i/ldc, i%ldc
		if col >= n {
			if math.Float32bits(c[i]) != math.Float32bits(c0[i]) {
				t.Fatalf("%s wrote c[%d] = %v, outside the %d×%d matrix (was %v)", name, i, c[i], m, n, c0[i])
			}
			continue
		}
		if alpha == 0 || k == 0 {
			// Both only scale C: the same single rounding.
			if math.Float32bits(c[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s: C[%d,%d] = %v, gonum %v (want bit-identical: only beta*C)", name, row, col, c[i], want[i])
			}
			continue
		}
		// Bound of the rounding of either sum: the magnitudes of its
		// terms times (k+2)·eps, twice.
		mag := 0.0
		if beta != 0 {
			mag = math.Abs(float64(beta) * float64(c0[i]))
		}
		for l := 0; l < k; l++ {
			mag += math.Abs(float64(alpha) * float64(at(a0, tA, lda, row, l)) * float64(at(b0, tB, ldb, l, col)))
		}
		tol := 2 * float64(k+2) * eps * mag
		if d := math.Abs(float64(c[i]) - float64(want[i])); !(d <= tol) {
			t.Fatalf("%s: C[%d,%d] = %v, gonum %v (difference %g > %g)", name, row, col, c[i], want[i], d, tol)
		}
	}
}

// at returns op(X)[i,j] for X stored row-major with leading dimension ld.
func at(x []float32, t blas.Transpose, ld, i, j int) float32 {
	if t == blas.NoTrans {
		return x[i*ld+j]
	}
	return x[j*ld+i]
}

// TestSgemmPanics checks that every bad argument gonum's Sgemm rejects
// makes Sgemm panic with the same message, checked in the same order, and
// that the edge cases gonum accepts (zero sizes with short or nil slices,
// k = 0) are accepted and give gonum's result.
func TestSgemmPanics(t *testing.T) {
	const (
		N = blas.NoTrans
		T = blas.Trans
		C = blas.ConjTrans
	)
	s := func(n int) []float32 { return make([]float32, n) }
	type args struct {
		tA, tB      blas.Transpose
		m, n, k     int
		alpha       float32
		a           []float32
		lda         int
		b           []float32
		ldb         int
		beta        float32
		c           []float32
		ldc         int
		description string
	}
	cases := []struct {
		args
		want any // gonum's panic value; nil for none
	}{
		{args{0, N, 2, 2, 2, 1, s(4), 2, s(4), 2, 0, s(4), 2, "tA = 0"}, "blas: illegal transpose"},
		{args{N, 'n', 2, 2, 2, 1, s(4), 2, s(4), 2, 0, s(4), 2, "tB = 'n' (lower case)"}, "blas: illegal transpose"},
		{args{111, N, 2, 2, 2, 1, s(4), 2, s(4), 2, 0, s(4), 2, "tA = 111 (CBLAS's CblasNoTrans, not gonum's)"}, "blas: illegal transpose"},
		{args{0, N, -1, 2, 2, 1, s(4), 2, s(4), 2, 0, s(4), 2, "bad tA before m < 0"}, "blas: illegal transpose"},
		{args{N, N, -1, 2, 2, 1, s(4), 2, s(4), 2, 0, s(4), 2, "m < 0"}, "blas: m < 0"},
		{args{N, N, -1, -1, -1, 1, nil, 0, nil, 0, 0, nil, 0, "m < 0 before n, k < 0 and bad ld"}, "blas: m < 0"},
		{args{N, N, 2, -1, 2, 1, s(4), 2, s(4), 2, 0, s(4), 2, "n < 0"}, "blas: n < 0"},
		{args{N, N, 2, 2, -1, 1, s(4), 2, s(4), 2, 0, s(4), 2, "k < 0"}, "blas: k < 0"},
		{args{N, N, 2, 3, 4, 1, s(8), 3, s(12), 3, 0, s(6), 3, "lda < k"}, "blas: bad leading dimension of A"},
		{args{T, N, 2, 3, 4, 1, s(8), 1, s(12), 3, 0, s(6), 3, "Trans: lda < m"}, "blas: bad leading dimension of A"},
		{args{C, N, 2, 3, 4, 1, s(8), 1, s(12), 3, 0, s(6), 3, "ConjTrans: lda < m"}, "blas: bad leading dimension of A"},
		{args{N, N, 2, 3, 0, 1, nil, 0, nil, 3, 0, s(6), 3, "k = 0: lda < 1"}, "blas: bad leading dimension of A"},
		{args{T, N, 0, 3, 2, 1, nil, 0, s(6), 3, 0, nil, 3, "m = 0, Trans: lda < 1"}, "blas: bad leading dimension of A"},
		{args{N, N, 2, 3, 4, 1, s(8), 4, s(12), 2, 0, s(6), 3, "ldb < n"}, "blas: bad leading dimension of B"},
		{args{N, T, 2, 3, 4, 1, s(8), 4, s(12), 3, 0, s(6), 3, "Trans: ldb < k"}, "blas: bad leading dimension of B"},
		{args{N, C, 2, 3, 4, 1, s(8), 4, s(12), 3, 0, s(6), 3, "ConjTrans: ldb < k"}, "blas: bad leading dimension of B"},
		{args{N, N, 2, 3, 4, 1, s(8), 4, s(12), 3, 0, s(6), 2, "ldc < n"}, "blas: bad leading dimension of C"},
		{args{N, N, 2, 0, 4, 1, s(8), 4, nil, 1, 0, nil, 0, "n = 0: ldc < 1"}, "blas: bad leading dimension of C"},
		{args{N, N, 2, 3, 4, 1, s(8), 1, s(12), 1, 0, s(6), 1, "bad lda before bad ldb and ldc"}, "blas: bad leading dimension of A"},
		{args{N, N, 2, 3, 4, 1, s(7), 4, s(12), 3, 0, s(6), 3, "short a"}, "blas: insufficient length of a"},
		{args{T, N, 2, 3, 4, 1, s(7), 2, s(12), 3, 0, s(6), 3, "Trans: short a"}, "blas: insufficient length of a"},
		{args{N, N, 2, 3, 4, 1, s(8), 4, s(11), 3, 0, s(6), 3, "short b"}, "blas: insufficient length of b"},
		{args{N, T, 2, 3, 4, 1, s(8), 4, s(11), 4, 0, s(6), 3, "Trans: short b"}, "blas: insufficient length of b"},
		{args{N, N, 2, 3, 4, 1, s(8), 4, s(12), 3, 0, s(5), 3, "short c"}, "blas: insufficient length of c"},
		{args{N, N, 2, 3, 4, 1, nil, 4, nil, 3, 0, nil, 3, "short a before short b and c"}, "blas: insufficient length of a"},
		{args{N, N, 3, 2, 0, 1, s(1), 1, nil, 2, 0.5, s(6), 2, "k = 0: a shorter than (m-1)*lda"}, "blas: insufficient length of a"},
		{args{N, N, 3, 2, 0, 1, s(2), 1, nil, 2, 0.5, s(6), 2, "k = 0: a of (m-1)*lda"}, nil},
		{args{T, T, 2, 3, 0, 1, nil, 2, s(6), 1, 0, s(6), 3, "k = 0, Trans: empty a"}, nil},
		{args{N, N, 2, 3, 4, 0, nil, 4, nil, 3, 1, nil, 3, "alpha = 0, beta = 1 still checks lengths"}, "blas: insufficient length of a"},
		{args{N, N, 0, 3, 4, 1, nil, 4, nil, 3, 0, nil, 3, "m = 0: nil slices"}, nil},
		{args{N, N, 2, 0, 4, 1, nil, 4, nil, 1, 0, nil, 1, "n = 0: nil slices"}, nil},
		{args{T, C, 0, 0, 0, 1, nil, 1, nil, 1, 0, nil, 1, "all zero"}, nil},
		{args{N, N, 2, 3, 4, 0, s(8), 4, s(12), 3, 1, s(6), 3, "alpha = 0, beta = 1: nothing to do"}, nil},
		{args{N, N, 2, 3, 4, 1.5, s(8), 4, s(12), 3, -2, s(6), 3, "valid"}, nil},
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var ref gonum.Implementation
	for _, tc := range cases {
		t.Run(tc.description, func(t *testing.T) {
			a := tc.args
			for _, x := range [][]float32{a.a, a.b, a.c} {
				for i := range x {
					x[i] = 2*rng.Float32() - 1
				}
			}
			want := append([]float32(nil), a.c...)
			gonumPanic := panicValue(func() {
				ref.Sgemm(a.tA, a.tB, a.m, a.n, a.k, a.alpha, a.a, a.lda, a.b, a.ldb, a.beta, want, a.ldc)
			})
			if gonumPanic != tc.want {
				t.Fatalf("gonum's Sgemm panicked with %v, the table says %v", gonumPanic, tc.want)
			}
			kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
				c := append([]float32(nil), a.c...)
				ours := panicValue(func() {
					simdblas.Implementation{Kernels: p}.Sgemm(a.tA, a.tB, a.m, a.n, a.k, a.alpha, a.a, a.lda, a.b, a.ldb, a.beta, c, a.ldc)
				})
				if ours != tc.want {
					t.Fatalf("Sgemm panicked with %#v, gonum with %#v", ours, tc.want)
				}
				if ours == nil {
					for i := range c {
						if d := math.Abs(float64(c[i] - want[i])); d > 1e-5 {
							t.Fatalf("c = %v, gonum %v", c, want)
						}
					}
				}
			})
		})
	}
}

// TestSgemmOverlap checks that C overlapping A or B, which kernels.Gemm
// rejects, runs gonum's Sgemm instead: the same result to the bit, where
// the overlap makes the result depend on the order of the computation.
func TestSgemmOverlap(t *testing.T) {
	type layout struct {
		name                string
		tA, tB              blas.Transpose
		m, n, k             int
		aOff, bOff, cOff    int // offsets in one shared buffer
		lda, ldb, ldc, size int
	}
	cases := []layout{
		{"C is A", blas.NoTrans, blas.NoTrans, 8, 8, 8, 0, 64, 0, 8, 8, 8, 128},
		{"C is B", blas.NoTrans, blas.NoTrans, 8, 8, 8, 64, 0, 0, 8, 8, 8, 128},
		{"C inside A's span", blas.Trans, blas.NoTrans, 5, 6, 7, 0, 100, 3, 9, 6, 8, 160},
		{"C overlaps B's end", blas.NoTrans, blas.Trans, 5, 6, 7, 0, 40, 60, 7, 7, 6, 120},
		{"C interleaved with A", blas.NoTrans, blas.NoTrans, 4, 3, 3, 0, 80, 3, 6, 3, 6, 100},
		{"all three the same", blas.Trans, blas.Trans, 6, 6, 6, 0, 0, 0, 6, 6, 6, 36},
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			buf := make([]float32, tc.size)
			for i := range buf {
				buf[i] = 2*rng.Float32() - 1
			}
			run := func(impl blas.Float32) []float32 {
				x := append([]float32(nil), buf...)
				impl.Sgemm(tc.tA, tc.tB, tc.m, tc.n, tc.k, 1.5, x[tc.aOff:], tc.lda, x[tc.bOff:], tc.ldb, -0.5, x[tc.cOff:], tc.ldc)
				return x
			}
			want := run(gonum.Implementation{})
			kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
				if got := run(simdblas.Implementation{Kernels: p}); !same(got, want) {
					t.Fatalf("buffer after Sgemm differs from gonum's:\n got %v\nwant %v", got, want)
				}
			})
		})
	}
}

// TestSgemmAlphaZeroReadsNoAB checks the documented behaviour where
// Sgemm is stricter than gonum: with alpha = 0, A and B are not read, so
// their NaNs do not reach C.
func TestSgemmAlphaZeroReadsNoAB(t *testing.T) {
	nan := float32(math.NaN())
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		for _, tB := range transposes {
			a := []float32{nan, nan, nan, nan}
			b := []float32{nan, nan, nan, nan}
			c := []float32{1, 2, 3, 4}
			simdblas.Implementation{Kernels: p}.Sgemm(blas.NoTrans, tB, 2, 2, 2, 0, a, 2, b, 2, 0.5, c, 2)
			if want := []float32{0.5, 1, 1.5, 2}; !same(c, want) {
				t.Errorf("tB = %c: c = %v, want %v", tB, c, want)
			}
		}
	})
}
