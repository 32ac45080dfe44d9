//go:build unix

package kernels

import (
	"fmt"
	"math"
	"testing"

	"github.com/simdgpt/simdgpt/kernels/internal/guard"
)

// TestOptimGuard runs AdamW and SumSquares of every SIMD implementation
// with each slice flush against an unmapped page, at its end and then at
// its start, so that reading or writing one element outside a slice
// faults. Results must be bitwise those of the same implementation on
// ordinary memory.
func TestOptimGuard(t *testing.T) {
	impls := nonGeneric()
	if len(impls) == 0 {
		t.Skip("no SIMD implementation on this machine or build")
	}
	for _, p := range impls {
		t.Run(p.Name(), func(t *testing.T) {
			for _, side := range []guard.Side{guard.End, guard.Start} {
				for _, n := range guardLens {
					optimGuardCase(t, p, side, n)
				}
			}
		})
	}
}

func optimGuardCase(t *testing.T, p *Impl, side guard.Side, n int) {
	t.Helper()
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
	p0, g0, m0, v0 := adamInputs(n, 11)
	if got, want := p.SumSquares(g(g0)), p.SumSquares(g0); math.Float64bits(got) != math.Float64bits(want) {
		t.Fatalf("%s side=%d n=%d: SumSquares = %v, want %v", p.Name(), side, n, got, want)
	}
	for _, h := range adamCases[:2] { // with and without weight decay
		wp, wm, wv := append([]float32(nil), p0...), append([]float32(nil), m0...), append([]float32(nil), v0...)
		p.AdamW(wp, g0, wm, wv, h)
		gp, gm, gv := g(p0), g(m0), g(v0)
		p.AdamW(gp, g(g0), gm, gv, h)
		what := fmt.Sprintf("%s side=%d n=%d wd=%v", p.Name(), side, n, h.WeightDecay)
		sameBits(t, what+" params", gp, wp)
		sameBits(t, what+" m", gm, wm)
		sameBits(t, what+" v", gv, wv)
	}
}
