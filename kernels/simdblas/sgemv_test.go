package simdblas_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	. "github.com/simdgpt/simdgpt/kernels/simdblas"
)

// TestSgemvAgainstGonum compares Sgemv with gonum's over shapes, both
// transposes, unit and other increments, scalars and odd leading
// dimensions; results within the summation-order bound.
func TestSgemvAgainstGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	fill := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = rng.Float32()*2 - 1
		}
		return s
	}
	var ref gonum.Implementation
	for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
		for _, m := range []int{0, 1, 7, 17, 64, 129} {
			for _, n := range []int{0, 1, 9, 33, 100} {
				for _, inc := range []int{1, 2, -1} {
					for _, sc := range [][2]float32{{1, 0}, {0.5, 1}, {-2, 0.25}, {0, 0.5}} {
						lda := max(n, 1) + 2
						a := fill(max(m*lda, 1))
						lenX, lenY := n, m
						if tA == blas.Trans {
							lenX, lenY = m, n
						}
						x := fill(max(1+(lenX-1)*abs(inc), 1))
						y := fill(max(1+(lenY-1)*abs(inc), 1))
						want := append([]float32(nil), y...)
						ref.Sgemv(tA, m, n, sc[0], a, lda, x, inc, sc[1], want, inc)
						Implementation{}.Sgemv(tA, m, n, sc[0], a, lda, x, inc, sc[1], y, inc)
						for i := range y {
							if math.Abs(float64(y[i]-want[i])) > 1e-6*float64(max(m, n)+2) {
								t.Fatalf("%v m=%d n=%d inc=%d %v: y[%d] = %v, gonum %v", tA, m, n, inc, sc, i, y[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}

// TestSgemvPanics checks that Sgemv panics with gonum's messages.
func TestSgemvPanics(t *testing.T) {
	a := make([]float32, 20)
	cases := []struct {
		f    func(Implementation)
		want string
	}{
		{func(im Implementation) { im.Sgemv('X', 2, 2, 1, a, 2, a, 1, 0, a[10:], 1) }, "blas: illegal transpose"},
		{func(im Implementation) { im.Sgemv(blas.NoTrans, -1, 2, 1, a, 2, a, 1, 0, a[10:], 1) }, "blas: m < 0"},
		{func(im Implementation) { im.Sgemv(blas.NoTrans, 2, 3, 1, a, 2, a, 1, 0, a[10:], 1) }, "blas: bad leading dimension of A"},
		{func(im Implementation) { im.Sgemv(blas.NoTrans, 2, 2, 1, a, 2, a, 0, 0, a[10:], 1) }, "blas: zero x index increment"},
		{func(im Implementation) { im.Sgemv(blas.NoTrans, 4, 4, 1, a[:10], 4, a[10:14], 1, 0, a[15:], 1) }, "blas: insufficient length of a"},
	}
	for _, c := range cases {
		if got := panicValue(func() { c.f(Implementation{}) }); got != c.want {
			t.Errorf("panic %v, want %q", got, c.want)
		}
	}
}
