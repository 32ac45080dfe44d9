//go:build unix

package kernels

import (
	"math"
	"testing"

	"github.com/simdgpt/simdgpt/kernels/internal/guard"
)

// TestSoftmaxGuard runs Softmax and SoftmaxBackward of every SIMD
// implementation with every input and output flush against an unmapped
// page, at its end (guard.End) and then at its start (guard.Start), so
// that reading or writing one element outside the matrix faults. The
// matrices have one row, or two rows with ld = n, so the slice ends where
// the last row does. Results must be bitwise those of the same
// implementation on ordinary memory.
func TestSoftmaxGuard(t *testing.T) {
	impls := nonGeneric()
	if len(impls) == 0 {
		t.Skip("no SIMD implementation on this machine or build")
	}
	r := newRand(7)
	for _, p := range impls {
		t.Run(p.Name(), func(t *testing.T) {
			for _, side := range []guard.Side{guard.End, guard.Start} {
				for _, n := range guardLens {
					for _, m := range []int{1, 2} {
						smGuardCase(t, p, side, m, n, r.Uint64())
					}
				}
			}
		})
	}
}

func smGuardCase(t *testing.T, p *Impl, side guard.Side, m, n int, seed uint64) {
	t.Helper()
	r := newRand(seed)
	// Inputs with some -Inf, so the masked paths run; no NaN, so that the
	// outputs are not all NaN.
	x := make([]float32, m*n)
	for i := range x {
		x[i] = float32(r.Float64()*20 - 10)
		if r.IntN(7) == 0 {
			x[i] = smNegInf
		}
	}
	y := make([]float32, m*n)
	genericImpl.Softmax(m, n, x, n, y, n)
	dy := randSlice(r, m*n)

	var bufs []*guard.Buffer
	g := func(src []float32) []float32 {
		s, b := guard.Copy(src, side)
		bufs = append(bufs, b)
		return s
	}
	defer func() {
		for _, b := range bufs {
			b.Free()
		}
	}()
	same := func(op string, got, want []float32) {
		t.Helper()
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s side=%d m=%d n=%d: %s: element %d = %v, want %v", p.Name(), side, m, n, op, i, got[i], want[i])
			}
		}
	}

	// Forward, out of place and in place.
	want := make([]float32, m*n)
	p.Softmax(m, n, x, n, want, n)
	gx, gy := g(x), g(make([]float32, m*n))
	p.Softmax(m, n, gx, n, gy, n)
	same("Softmax", gy, want)
	same("Softmax input", gx, x)
	gxy := g(x)
	p.Softmax(m, n, gxy, n, gxy, n)
	same("Softmax in place", gxy, want)

	// Backward, out of place and in place (dx = dy).
	wantDx := make([]float32, m*n)
	p.SoftmaxBackward(m, n, y, n, dy, n, wantDx, n)
	gyy, gdy, gdx := g(y), g(dy), g(make([]float32, m*n))
	p.SoftmaxBackward(m, n, gyy, n, gdy, n, gdx, n)
	same("SoftmaxBackward", gdx, wantDx)
	gdy2 := g(dy)
	p.SoftmaxBackward(m, n, gyy, n, gdy2, n, gdy2, n)
	same("SoftmaxBackward in place", gdy2, wantDx)
}
