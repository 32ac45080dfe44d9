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

var (
	vecSizes   = []int{0, 1, 2, 3, 7, 16, 33, 65}
	increments = []int{1, 2, -1, -3}
	alphas     = []float32{0, 1, -0.5, 2}
)

// TestSdotAgainstGonum compares Sdot with gonum's for every pair of
// increments in {1, 2, -1, -3} and n in {0, 1, 2, 3, 7, 16, 33, 65}, on
// slices of exactly the length gonum requires. Unit increments run on
// kernels.Dot, whose summation order differs: the tolerance is
// 2·(n+1)·eps·Σ|x[i]·y[i]|. Other increments are gonum's code: equal bits.
func TestSdotAgainstGonum(t *testing.T) {
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		impl := simdblas.Implementation{Kernels: p}
		var ref gonum.Implementation
		rng := rand.New(rand.NewPCG(7, 8))
		for _, incX := range increments {
			for _, incY := range increments {
				for _, n := range vecSizes {
					name := fmt.Sprintf("Sdot(n=%d, incX=%d, incY=%d)", n, incX, incY)
					x, xFull := guarded(rng, vecLen(n, incX))
					y, yFull := guarded(rng, vecLen(n, incY))
					x0, y0 := append([]float32(nil), x...), append([]float32(nil), y...)
					got := impl.Sdot(n, x, incX, y, incY)
					want := ref.Sdot(n, x0, incX, y0, incY)
					checkGuard(t, name+": x", xFull, len(x))
					checkGuard(t, name+": y", yFull, len(y))
					if !same(x, x0) || !same(y, y0) {
						t.Fatalf("%s changed x or y", name)
					}
					var mag float64
					for i := 0; i < n; i++ {
						mag += math.Abs(float64(x[element(i, n, incX)]) * float64(y[element(i, n, incY)]))
					}
					tol := 2 * float64(n+1) * eps * mag
					if incX != 1 || incY != 1 {
						tol = 0
					}
					if d := math.Abs(float64(got) - float64(want)); !(d <= tol) {
						t.Fatalf("%s = %v, gonum %v (difference %g > %g)", name, got, want, d, tol)
					}
				}
			}
		}
	})
}

// TestSaxpyAgainstGonum compares Saxpy with gonum's for every pair of
// increments in {1, 2, -1, -3}, n in {0, 1, 2, 3, 7, 16, 33, 65} and alpha
// in {0, 1, -0.5, 2}. Unit increments run on kernels.Axpy, which may fuse
// the multiply and the add: each element within 2·eps·(|y|+|alpha·x|) of
// gonum's. Elements of y between the n taken must not change.
func TestSaxpyAgainstGonum(t *testing.T) {
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		impl := simdblas.Implementation{Kernels: p}
		var ref gonum.Implementation
		rng := rand.New(rand.NewPCG(9, 10))
		for _, incX := range increments {
			for _, incY := range increments {
				for _, n := range vecSizes {
					for _, alpha := range alphas {
						name := fmt.Sprintf("Saxpy(n=%d, alpha=%v, incX=%d, incY=%d)", n, alpha, incX, incY)
						x, xFull := guarded(rng, vecLen(n, incX))
						y, yFull := guarded(rng, vecLen(n, incY))
						x0, y0 := append([]float32(nil), x...), append([]float32(nil), y...)
						want := append([]float32(nil), y...)
						ref.Saxpy(n, alpha, x0, incX, want, incY)
						impl.Saxpy(n, alpha, x, incX, y, incY)
						checkGuard(t, name+": x", xFull, len(x))
						checkGuard(t, name+": y", yFull, len(y))
						if !same(x, x0) {
							t.Fatalf("%s changed x", name)
						}
						exact := incX != 1 || incY != 1 || alpha == 0
						if exact && !same(y, want) {
							t.Fatalf("%s: y = %v, gonum %v (want the same bits)", name, y, want)
						}
						for i := range y {
							tol := 0.0
							if i%abs(incY) == 0 {
								// y[i] is taken: find its position in y's
								// sequence, then x's element at that position.
								pos := i / abs(incY)
								if incY < 0 {
									pos = n - 1 - pos
								}
								xv := x0[element(pos, n, incX)]
								tol = 2 * eps * (math.Abs(float64(y0[i])) + math.Abs(float64(alpha)*float64(xv)))
							}
							if d := math.Abs(float64(y[i]) - float64(want[i])); !(d <= tol) {
								t.Fatalf("%s: y[%d] = %v, gonum %v (difference %g > %g)", name, i, y[i], want[i], d, tol)
							}
						}
					}
				}
			}
		}
	})
}

func abs(i int) int {
	if i < 0 {
		return -i
	}
	return i
}

// TestSaxpyOverlap checks that y overlapping x other than as the same
// elements, which gonum computes in its own order, is gonum's result to
// the bit, and that y = x (the same elements) is 2·x on every kernel.
func TestSaxpyOverlap(t *testing.T) {
	const n = 37
	rng := rand.New(rand.NewPCG(11, 12))
	buf := make([]float32, n+8)
	for i := range buf {
		buf[i] = 2*rng.Float32() - 1
	}
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		impl := simdblas.Implementation{Kernels: p}
		for _, shift := range []int{1, 3, 5, 8} {
			for _, yAhead := range []bool{false, true} {
				got, want := append([]float32(nil), buf...), append([]float32(nil), buf...)
				xo, yo := 0, shift
				if !yAhead {
					xo, yo = shift, 0
				}
				gonum.Implementation{}.Saxpy(n, 0.75, want[xo:], 1, want[yo:], 1)
				impl.Saxpy(n, 0.75, got[xo:], 1, got[yo:], 1)
				if !same(got, want) {
					t.Fatalf("x at %d, y at %d: buffer %v, gonum %v", xo, yo, got, want)
				}
			}
		}
		x := append([]float32(nil), buf[:n]...)
		impl.Saxpy(n, 1, x, 1, x, 1)
		for i := range x {
			if x[i] != 2*buf[i] {
				t.Fatalf("Saxpy with y = x: x[%d] = %v, want %v", i, x[i], 2*buf[i])
			}
		}
	})
}

// TestSscalAgainstGonum compares Sscal with gonum's for increments in
// {1, 2, -1, -3} (gonum does nothing for a negative one), n in {0, 1, 2,
// 3, 7, 16, 33, 65} and alpha in {0, 1, -0.5, 2}, with NaNs in x: scaling
// rounds once, so the bits must be gonum's, and alpha = 0 must zero the
// NaNs.
func TestSscalAgainstGonum(t *testing.T) {
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		impl := simdblas.Implementation{Kernels: p}
		rng := rand.New(rand.NewPCG(13, 14))
		for _, inc := range increments {
			for _, n := range vecSizes {
				for _, alpha := range alphas {
					name := fmt.Sprintf("Sscal(n=%d, alpha=%v, incX=%d)", n, alpha, inc)
					x, xFull := guarded(rng, vecLen(n, inc))
					if len(x) > 0 {
						x[len(x)/2] = float32(math.NaN())
					}
					want := append([]float32(nil), x...)
					gonum.Implementation{}.Sscal(n, alpha, want, inc)
					impl.Sscal(n, alpha, x, inc)
					checkGuard(t, name+": x", xFull, len(x))
					if !same(x, want) {
						t.Fatalf("%s: x = %v, gonum %v", name, x, want)
					}
				}
			}
		}
	})
}

// TestLevel1Panics checks that Sdot, Saxpy and Sscal reject what gonum's
// reject, with gonum's messages in gonum's order, and accept what gonum
// accepts.
func TestLevel1Panics(t *testing.T) {
	s := func(n int) []float32 { return make([]float32, n) }
	cases := []struct {
		name string
		call func(blasL1)
		want any
	}{
		{"Sdot: incX = 0", func(b blasL1) { b.Sdot(3, s(3), 0, s(3), 1) }, "blas: zero x index increment"},
		{"Sdot: incY = 0", func(b blasL1) { b.Sdot(3, s(3), 1, s(3), 0) }, "blas: zero y index increment"},
		{"Sdot: incX = 0 before n < 0", func(b blasL1) { b.Sdot(-1, s(3), 0, s(3), 1) }, "blas: zero x index increment"},
		{"Sdot: n < 0", func(b blasL1) { b.Sdot(-1, s(3), 1, s(3), 1) }, "blas: n < 0"},
		{"Sdot: n = 0, nil", func(b blasL1) { b.Sdot(0, nil, 1, nil, 1) }, nil},
		{"Sdot: short x", func(b blasL1) { b.Sdot(3, s(2), 1, s(3), 1) }, "blas: insufficient length of x"},
		{"Sdot: short y", func(b blasL1) { b.Sdot(3, s(3), 1, s(2), 1) }, "blas: insufficient length of y"},
		{"Sdot: short x before short y", func(b blasL1) { b.Sdot(3, nil, 1, nil, 1) }, "blas: insufficient length of x"},
		{"Sdot: short x, incX = 2", func(b blasL1) { b.Sdot(3, s(4), 2, s(3), 1) }, "blas: insufficient length of x"},
		{"Sdot: short y, incY = -3", func(b blasL1) { b.Sdot(3, s(3), 1, s(6), -3) }, "blas: insufficient length of y"},
		{"Sdot: long slices", func(b blasL1) { b.Sdot(3, s(9), 1, s(9), 1) }, nil},
		{"Saxpy: incX = 0", func(b blasL1) { b.Saxpy(3, 1, s(3), 0, s(3), 1) }, "blas: zero x index increment"},
		{"Saxpy: incY = 0", func(b blasL1) { b.Saxpy(3, 1, s(3), 1, s(3), 0) }, "blas: zero y index increment"},
		{"Saxpy: n < 0", func(b blasL1) { b.Saxpy(-2, 1, s(3), 1, s(3), 1) }, "blas: n < 0"},
		{"Saxpy: n = 0, nil", func(b blasL1) { b.Saxpy(0, 1, nil, 1, nil, 1) }, nil},
		{"Saxpy: short x", func(b blasL1) { b.Saxpy(3, 1, s(2), 1, s(3), 1) }, "blas: insufficient length of x"},
		{"Saxpy: short y", func(b blasL1) { b.Saxpy(3, 1, s(3), 1, s(2), 1) }, "blas: insufficient length of y"},
		{"Saxpy: alpha = 0 still checks lengths", func(b blasL1) { b.Saxpy(3, 0, s(3), 1, s(2), 1) }, "blas: insufficient length of y"},
		{"Saxpy: short x, incX = -1", func(b blasL1) { b.Saxpy(3, 1, s(2), -1, s(3), 1) }, "blas: insufficient length of x"},
		{"Sscal: incX = 0", func(b blasL1) { b.Sscal(3, 2, s(3), 0) }, "blas: zero x index increment"},
		{"Sscal: incX < 0 and n < 0: nothing", func(b blasL1) { b.Sscal(-1, 2, nil, -1) }, nil},
		{"Sscal: n < 0", func(b blasL1) { b.Sscal(-1, 2, s(3), 1) }, "blas: n < 0"},
		{"Sscal: n = 0, nil", func(b blasL1) { b.Sscal(0, 2, nil, 1) }, nil},
		{"Sscal: short x", func(b blasL1) { b.Sscal(3, 2, s(2), 1) }, "blas: insufficient length of x"},
		{"Sscal: short x, alpha = 0", func(b blasL1) { b.Sscal(3, 0, s(2), 1) }, "blas: insufficient length of x"},
		{"Sscal: short x, incX = 2", func(b blasL1) { b.Sscal(3, 2, s(4), 2) }, "blas: insufficient length of x"},
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

// blasL1 is the part of blas.Float32Level1 TestLevel1Panics calls.
type blasL1 = interface {
	Sdot(n int, x []float32, incX int, y []float32, incY int) float32
	Saxpy(n int, alpha float32, x []float32, incX int, y []float32, incY int)
	Sscal(n int, alpha float32, x []float32, incX int)
}
