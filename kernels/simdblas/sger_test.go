package simdblas_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/gonum"

	"github.com/simdgpt/simdgpt/kernels"
	"github.com/simdgpt/simdgpt/kernels/kernelstest"
	"github.com/simdgpt/simdgpt/kernels/simdblas"
)

// sgerSizes are the m and n TestSgerAgainstGonum takes: empty, below,
// at and past the kernels' vector widths and unrolls.
var sgerSizes = []int{0, 1, 2, 3, 7, 8, 15, 16, 17, 31, 33, 64, 100}

// TestSgerAgainstGonum compares Sger with gonum's on every kernel
// implementation, for m and n in sgerSizes, lda = max(1, n) and n+3,
// increments of x and y in {1, 2, -1, -3} and alpha in {0, 1.5, -0.75},
// on slices of exactly the length gonum requires followed by sentinels.
//
// Each element of A gets one product and one sum, a + s·y[j] with
// s = alpha·x[i] rounded to float32 first in both. gonum rounds the
// product and then the sum; kernels.Axpy may fuse them into one rounding.
// The two results differ by at most eps/2·|s·y[j]| (the product's
// rounding) plus eps/2 of each result's magnitude, so the test allows
// 2·eps·(|a| + |s·y[j]|). With m, n or alpha 0, A must keep its bits.
// The padding of A's rows (columns n to lda-1), the sentinels after A, x
// and y, and x and y themselves must not change.
func TestSgerAgainstGonum(t *testing.T) {
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		impl := simdblas.Implementation{Kernels: p}
		var ref gonum.Implementation
		rng := rand.New(rand.NewPCG(17, 18))
		for _, m := range sgerSizes {
			for _, n := range sgerSizes {
				for _, lda := range []int{max(1, n), n + 3} {
					for _, incX := range increments {
						for _, incY := range increments {
							for _, alpha := range []float32{0, 1.5, -0.75} {
								name := fmt.Sprintf("Sger(m=%d, n=%d, alpha=%v, incX=%d, incY=%d, lda=%d)", m, n, alpha, incX, incY, lda)
								checkSger(t, name, impl, ref, rng, m, n, alpha, incX, incY, lda)
							}
						}
					}
				}
			}
		}
	})
}

// checkSger runs one case of TestSgerAgainstGonum.
func checkSger(t *testing.T, name string, impl simdblas.Implementation, ref gonum.Implementation, rng *rand.Rand, m, n int, alpha float32, incX, incY, lda int) {
	t.Helper()
	lenA := 0
	if m > 0 && n > 0 {
		lenA = lda*(m-1) + n
	}
	a, aFull := guarded(rng, lenA)
	for i := 0; i < lenA; i++ {
		if i%lda >= n {
			a[i] = sentinel
		}
	}
	x, xFull := guarded(rng, vecLen(m, incX))
	y, yFull := guarded(rng, vecLen(n, incY))
	a0, x0, y0 := append([]float32(nil), a...), append([]float32(nil), x...), append([]float32(nil), y...)
	want := append([]float32(nil), a...)
	if incX > 0 && incY > 0 {
		ref.Sger(m, n, alpha, x0, incX, y0, incY, want, lda)
	} else {
		// gonum's amd64 assembly Ger starts a vector with a negative
		// increment outside its slice; its pure-Go Ger, like the BLAS
		// convention, takes the elements from the end. Gathered in that
		// order, they go to gonum with unit increments.
		xg, yg := make([]float32, m), make([]float32, n)
		for i := range xg {
			xg[i] = x0[element(i, m, incX)]
		}
		for j := range yg {
			yg[j] = y0[element(j, n, incY)]
		}
		ref.Sger(m, n, alpha, xg, 1, yg, 1, want, lda)
	}
	impl.Sger(m, n, alpha, x, incX, y, incY, a, lda)
	checkGuard(t, name+": a", aFull, len(a))
	checkGuard(t, name+": x", xFull, len(x))
	checkGuard(t, name+": y", yFull, len(y))
	if !same(x, x0) || !same(y, y0) {
		t.Fatalf("%s changed x or y", name)
	}
	if (m == 0 || n == 0 || alpha == 0) && !same(a, a0) {
		t.Fatalf("%s changed A", name)
	}
	for i := range a {
		r, c := i/lda, i%lda
		if c >= n {
			if math.Float32bits(a[i]) != math.Float32bits(sentinel) {
				t.Fatalf("%s: padding a[%d] (row %d, column %d) = %v, want it untouched", name, i, r, c, a[i])
			}
			continue
		}
		s := alpha * x0[element(r, m, incX)]
		sy := float64(s) * float64(y0[element(c, n, incY)])
		tol := 2 * eps * (math.Abs(float64(a0[i])) + math.Abs(sy))
		if d := math.Abs(float64(a[i]) - float64(want[i])); !(d <= tol) {
			t.Fatalf("%s: a[%d] (row %d, column %d) = %v, gonum %v (difference %g > %g)", name, i, r, c, a[i], want[i], d, tol)
		}
	}
}

// TestSgerOverlap checks Sger when A overlaps x or y in memory, on
// every kernel implementation. With positive increments the result must
// be gonum's to the bit (gonum reads x and y as it writes A, in its own
// order). With a negative one it must be, to the bit, the reference
// BLAS's order as sgerInOrder computes it: gonum's amd64 assembly reads
// outside x and y there, so it is no reference.
func TestSgerOverlap(t *testing.T) {
	const m, n, lda = 9, 21, 24
	const end = (m-1)*lda + n // A's span, from its first element to its last
	rng := rand.New(rand.NewPCG(19, 20))
	buf := make([]float32, m*lda+64)
	for i := range buf {
		buf[i] = 2*rng.Float32() - 1
	}
	cases := []struct {
		name       string
		xOff, incX int // x is buf[xOff:]
		yOff, incY int // y is buf[yOff:]
		aOff       int // A is buf[aOff:]
	}{
		{"x is column 0 of A", 0, lda, m * lda, 1, 0},
		{"x is column 3 of A, y strided", 3, lda, m * lda, 2, 0},
		{"y is row 0 of A", m * lda, 1, 0, 1, 0},
		{"y is row 4 of A", m * lda, 1, 4 * lda, 1, 0},
		{"y is row 2 of A, every other element", m * lda, 1, 2 * lda, 2, 0},
		{"x in the padding of row 1", lda + n, 1, m * lda, 1, 0},
		{"x straddles the end of A", 30 + end - 4, 1, 0, 1, 30},
		{"x is column 5 of A backwards", 5, -lda, m * lda, 1, 0},
		{"y is row 4 of A backwards", m * lda, 1, 4 * lda, -1, 0},
		{"y starts in the padding of row 3, backwards", m * lda, -1, 3*lda + n, -1, 0},
		{"x straddles the start of A backwards", 0, -3, 0, 1, 10},
	}
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		impl := simdblas.Implementation{Kernels: p}
		for _, tc := range cases {
			got, want := append([]float32(nil), buf...), append([]float32(nil), buf...)
			if tc.incX > 0 && tc.incY > 0 {
				gonum.Implementation{}.Sger(m, n, -1.25, want[tc.xOff:], tc.incX, want[tc.yOff:], tc.incY, want[tc.aOff:], lda)
			} else {
				sgerInOrder(m, n, -1.25, want[tc.xOff:], tc.incX, want[tc.yOff:], tc.incY, want[tc.aOff:], lda)
			}
			impl.Sger(m, n, -1.25, got[tc.xOff:], tc.incX, got[tc.yOff:], tc.incY, got[tc.aOff:], lda)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%s: buf[%d] = %v, want %v", tc.name, i, got[i], want[i])
				}
			}
		}
	})
}

// sgerInOrder is A += alpha·x·yᵀ in the reference BLAS's order: row i
// of A takes s = alpha·x[i] as it begins, then a[i][j] += s·y[j] for j
// from 0 up, reading each element when it is used, with gonum's
// convention for negative increments.
func sgerInOrder(m, n int, alpha float32, x []float32, incX int, y []float32, incY int, a []float32, lda int) {
	for i := 0; i < m; i++ {
		s := alpha * x[element(i, m, incX)]
		for j := 0; j < n; j++ {
			a[i*lda+j] += s * y[element(j, n, incY)]
		}
	}
}

// TestSgerPanics checks that Sger rejects what gonum's rejects, with
// gonum's messages in gonum's order, and accepts what gonum accepts.
func TestSgerPanics(t *testing.T) {
	s := func(n int) []float32 { return make([]float32, n) }
	cases := []struct {
		name string
		call func(sger)
		want any
	}{
		{"m < 0", func(b sger) { b.Sger(-1, 2, 1, s(2), 1, s(2), 1, s(4), 2) }, "blas: m < 0"},
		{"n < 0", func(b sger) { b.Sger(2, -1, 1, s(2), 1, s(2), 1, s(4), 2) }, "blas: n < 0"},
		{"m < 0 before n < 0", func(b sger) { b.Sger(-1, -1, 1, s(2), 1, s(2), 1, s(4), 2) }, "blas: m < 0"},
		{"lda < n", func(b sger) { b.Sger(2, 3, 1, s(2), 1, s(3), 1, s(9), 2) }, "blas: bad leading dimension of A"},
		{"lda = 0 with n = 0", func(b sger) { b.Sger(2, 0, 1, s(2), 1, nil, 1, nil, 0) }, "blas: bad leading dimension of A"},
		{"n < 0 before lda", func(b sger) { b.Sger(2, -1, 1, s(2), 1, s(2), 1, s(4), 0) }, "blas: n < 0"},
		{"incX = 0", func(b sger) { b.Sger(2, 2, 1, s(2), 0, s(2), 1, s(4), 2) }, "blas: zero x index increment"},
		{"incY = 0", func(b sger) { b.Sger(2, 2, 1, s(2), 1, s(2), 0, s(4), 2) }, "blas: zero y index increment"},
		{"lda before incX = 0", func(b sger) { b.Sger(2, 2, 1, s(2), 0, s(2), 1, s(4), 1) }, "blas: bad leading dimension of A"},
		{"incX = 0 before incY = 0", func(b sger) { b.Sger(2, 2, 1, s(2), 0, s(2), 0, s(4), 2) }, "blas: zero x index increment"},
		{"incY = 0 with m = 0", func(b sger) { b.Sger(0, 2, 1, nil, 1, s(2), 0, nil, 2) }, "blas: zero y index increment"},
		{"m = 0, nil slices", func(b sger) { b.Sger(0, 3, 1, nil, 1, nil, 1, nil, 3) }, nil},
		{"n = 0, nil slices", func(b sger) { b.Sger(3, 0, 1, nil, -2, nil, 5, nil, 1) }, nil},
		{"short x", func(b sger) { b.Sger(3, 2, 1, s(2), 1, s(2), 1, s(6), 2) }, "blas: insufficient length of x"},
		{"short x, incX = 2", func(b sger) { b.Sger(3, 2, 1, s(4), 2, s(2), 1, s(6), 2) }, "blas: insufficient length of x"},
		{"short x, incX = -3", func(b sger) { b.Sger(3, 2, 1, s(6), -3, s(2), 1, s(6), 2) }, "blas: insufficient length of x"},
		{"short y", func(b sger) { b.Sger(3, 2, 1, s(3), 1, s(1), 1, s(6), 2) }, "blas: insufficient length of y"},
		{"short y, incY = -1", func(b sger) { b.Sger(3, 2, 1, s(3), 1, s(1), -1, s(6), 2) }, "blas: insufficient length of y"},
		{"short y, incY = 2", func(b sger) { b.Sger(3, 2, 1, s(3), 1, s(2), 2, s(6), 2) }, "blas: insufficient length of y"},
		{"short x before short y", func(b sger) { b.Sger(3, 2, 1, nil, 1, nil, 1, s(6), 2) }, "blas: insufficient length of x"},
		{"short a", func(b sger) { b.Sger(3, 2, 1, s(3), 1, s(2), 1, s(5), 2) }, "blas: insufficient length of a"},
		{"short a, lda > n", func(b sger) { b.Sger(3, 2, 1, s(3), 1, s(2), 1, s(9), 4) }, "blas: insufficient length of a"},
		{"short y before short a", func(b sger) { b.Sger(3, 2, 1, s(3), 1, nil, 1, nil, 2) }, "blas: insufficient length of y"},
		{"alpha = 0 still checks lengths", func(b sger) { b.Sger(3, 2, 0, s(3), 1, s(2), 1, s(5), 2) }, "blas: insufficient length of a"},
		{"exact lengths, lda > n", func(b sger) { b.Sger(3, 2, 1, s(7), 3, s(4), 3, s(10), 4) }, nil},
		{"exact lengths, negative increments", func(b sger) { b.Sger(3, 2, 0, s(7), -3, s(4), -3, s(6), 2) }, nil},
		{"long slices", func(b sger) { b.Sger(3, 2, 1, s(9), 1, s(9), 1, s(20), 2) }, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := panicValue(func() { tc.call(gonum.Implementation{}) }); got != tc.want {
				t.Fatalf("gonum panicked with %#v, the table says %#v", got, tc.want)
			}
			kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
				if got := panicValue(func() { tc.call(simdblas.Implementation{Kernels: p}) }); got != tc.want {
					t.Fatalf("panicked with %#v, gonum with %#v", got, tc.want)
				}
			})
		})
	}
}

// sger is the part of blas.Float32Level2 TestSgerPanics calls.
type sger = interface {
	Sger(m, n int, alpha float32, x []float32, incX int, y []float32, incY int, a []float32, lda int)
}
