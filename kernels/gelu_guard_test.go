//go:build unix

package kernels

import (
	"testing"

	"github.com/simdgpt/simdgpt/kernels/internal/guard"
)

// TestGELUGuard runs GELU, GELUBackward and BiasGELU of every SIMD
// implementation with every input and output flush against an unmapped
// page, at its end and then at its start, so that reading or writing one
// element outside a slice faults (the NEON tail goes through a stack
// buffer, the AVX tails through masked moves). BiasGELU has one row, or
// two rows with ld = n, so the slices end where the last row does.
// Results must be bitwise those of the same implementation on ordinary
// memory.
func TestGELUGuard(t *testing.T) {
	impls := nonGeneric()
	if len(impls) == 0 {
		t.Skip("no SIMD implementation on this machine or build")
	}
	for _, p := range impls {
		t.Run(p.Name(), func(t *testing.T) {
			for _, side := range []guard.Side{guard.End, guard.Start} {
				for _, n := range guardLens {
					geluGuardCase(t, p, side, n)
				}
			}
		})
	}
}

func geluGuardCase(t *testing.T, p *Impl, side guard.Side, n int) {
	t.Helper()
	x0 := geluInputs(2*n, uint64(n)+5)
	dy0 := randSlice(newRand(uint64(n)), n)
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
			if !bitsEqual(got[i], want[i]) {
				t.Fatalf("%s side=%d n=%d: %s: element %d = %v, want %v", p.Name(), side, n, op, i, got[i], want[i])
			}
		}
	}
	x := x0[:n]

	want := make([]float32, n)
	p.GELU(want, x)
	d := g(make([]float32, n))
	p.GELU(d, g(x))
	same("GELU", d, want)
	gx := g(x)
	p.GELU(gx, gx)
	same("GELU in place", gx, want)

	p.GELUBackward(want, dy0, x)
	d = g(make([]float32, n))
	p.GELUBackward(d, g(dy0), g(x))
	same("GELUBackward", d, want)
	gdy := g(dy0)
	p.GELUBackward(gdy, gdy, g(x))
	same("GELUBackward in place", gdy, want)

	bias := x0[n:]
	for _, m := range []int{1, 2} {
		xm := make([]float32, m*n)
		for i := range xm {
			xm[i] = x0[i%len(x0)]
		}
		wx := append([]float32(nil), xm...)
		wy := make([]float32, m*n)
		p.BiasGELU(m, n, wx, n, bias, wy, n)
		gxm, gy := g(xm), g(make([]float32, m*n))
		p.BiasGELU(m, n, gxm, n, g(bias), gy, n)
		same("BiasGELU x", gxm, wx)
		same("BiasGELU y", gy, wy)
		gxm = g(xm)
		p.BiasGELU(m, n, gxm, n, g(bias), gxm, n)
		same("BiasGELU in place", gxm, wy)
	}
}
