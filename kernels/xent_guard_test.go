//go:build unix

package kernels

import (
	"fmt"
	"testing"

	"github.com/simdgpt/simdgpt/kernels/internal/guard"
)

// TestSoftmaxCrossEntropyGuard runs SoftmaxCrossEntropy of every SIMD
// implementation with logits, dlogits and losses flush against an
// unmapped page, at their end and then at their start, so that reading or
// writing one element outside them faults. The matrices have one row, or
// two with ld = n, so each slice ends where its last row does. Results
// must be bitwise those of the same implementation on ordinary memory.
func TestSoftmaxCrossEntropyGuard(t *testing.T) {
	impls := nonGeneric()
	if len(impls) == 0 {
		t.Skip("no SIMD implementation on this machine or build")
	}
	r := newRand(12)
	for _, p := range impls {
		t.Run(p.Name(), func(t *testing.T) {
			for _, side := range []guard.Side{guard.End, guard.Start} {
				for _, n := range guardLens {
					for _, m := range []int{1, 2} {
						if n > 0 {
							xeGuardCase(t, p, side, m, n, r.Uint64())
						}
					}
				}
			}
		})
	}
}

func xeGuardCase(t *testing.T, p *Impl, side guard.Side, m, n int, seed uint64) {
	t.Helper()
	r := newRand(seed)
	x := make([]float32, m*n)
	for i := range x {
		x[i] = float32(r.Float64()*20 - 10)
		if r.IntN(7) == 0 {
			x[i] = smNegInf
		}
	}
	targets := make([]int32, m)
	for i := range targets {
		targets[i] = int32(r.IntN(n))
	}
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
	what := fmt.Sprintf("%s side=%d m=%d n=%d", p.Name(), side, m, n)
	wantD, wantL := make([]float32, m*n), make([]float32, m)
	p.SoftmaxCrossEntropy(m, n, x, n, targets, 0.5, wantD, n, wantL)

	gx, gd, gl := g(x), g(make([]float32, m*n)), g(make([]float32, m))
	p.SoftmaxCrossEntropy(m, n, gx, n, targets, 0.5, gd, n, gl)
	sameBits(t, what+" dlogits", gd, wantD)
	sameBits(t, what+" losses", gl, wantL)
	sameBits(t, what+" logits", gx, x)

	gxd, gl2 := g(x), g(make([]float32, m))
	p.SoftmaxCrossEntropy(m, n, gxd, n, targets, 0.5, gxd, n, gl2)
	sameBits(t, what+" in place dlogits", gxd, wantD)
	sameBits(t, what+" in place losses", gl2, wantL)
}
