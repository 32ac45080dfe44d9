//go:build unix

package kernels

import (
	"testing"

	"github.com/simdgpt/simdgpt/kernels/internal/guard"
)

// guardLens are the lengths of the memory-safety tests of the vector and
// softmax kernels: every tail and unroll boundary of both vector widths,
// and a run of larger ones.
var guardLens = func() []int {
	var s []int
	for n := 0; n <= 70; n++ {
		s = append(s, n)
	}
	for n := 1000; n <= 1040; n++ {
		s = append(s, n)
	}
	return s
}()

// TestVecGuard runs every vector kernel of every SIMD implementation with
// each input and output slice flush against an unmapped page, at its end
// and then at its start, so that reading or writing one element outside a
// slice faults. Results must be bitwise those of the same implementation
// on ordinary memory (the kernels' arithmetic does not depend on where the
// data lies).
func TestVecGuard(t *testing.T) {
	for _, p := range nonGeneric() {
		t.Run(p.Name(), func(t *testing.T) {
			for _, side := range []guard.Side{guard.End, guard.Start} {
				for _, n := range guardLens {
					guardCase(t, p, side, n)
				}
			}
		})
	}
}

func guardCase(t *testing.T, p *Impl, side guard.Side, n int) {
	t.Helper()
	x0, y0 := vecInputs(n)
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
	fail := func(op string, i int, got, want float32) {
		t.Fatalf("%s side=%d n=%d: %s: element %d = %v, want %v", p.Name(), side, n, op, i, got, want)
	}
	checkSlice := func(op string, got, want []float32) {
		for i := range want {
			if !bitsEqual(got[i], want[i]) {
				fail(op, i, got[i], want[i])
			}
		}
	}

	if got, want := p.Dot(g(x0), g(y0)), p.Dot(x0, y0); !bitsEqual(got, want) {
		fail("Dot", -1, got, want)
	}
	if got, want := p.Sum(g(x0)), p.Sum(x0); !bitsEqual(got, want) {
		fail("Sum", -1, got, want)
	}
	if got, want := p.Max(g(x0)), p.Max(x0); !bitsEqual(got, want) {
		fail("Max", -1, got, want)
	}
	if n > 0 {
		// A NaN in the last element exercises the scan of the NaN path.
		xn := append([]float32(nil), x0...)
		xn[n-1] = vecNaN(7)
		if got := p.Max(g(xn)); !bitsEqual(got, xn[n-1]) {
			fail("Max(NaN last)", n-1, got, xn[n-1])
		}
	}

	want := append([]float32(nil), y0...)
	p.Axpy(0.37, x0, want)
	y := g(y0)
	p.Axpy(0.37, g(x0), y)
	checkSlice("Axpy", y, want)

	want = append(want[:0], x0...)
	p.Scale(-1.5, want)
	x := g(x0)
	p.Scale(-1.5, x)
	checkSlice("Scale", x, want)

	want = make([]float32, n)
	p.Add(want, x0, y0)
	d := g(make([]float32, n))
	p.Add(d, g(x0), g(y0))
	checkSlice("Add", d, want)
	x = g(x0)
	p.Add(x, x, g(y0))
	checkSlice("Add(dst=x)", x, want)
}
