//go:build unix

package kernels

import (
	"testing"

	"github.com/simdgpt/simdgpt/kernels/internal/guard"
)

// TestLayerNormGuard runs both LayerNorm kernels of every SIMD
// implementation on two rows of every length of guardLens with each slice
// flush against an unmapped page, at its end and then at its start, so
// that touching one element outside a slice faults. Results must be
// bitwise those on ordinary memory.
func TestLayerNormGuard(t *testing.T) {
	for _, p := range nonGeneric() {
		t.Run(p.Name(), func(t *testing.T) {
			for _, side := range []guard.Side{guard.End, guard.Start} {
				for _, n := range guardLens {
					if n == 0 {
						continue
					}
					layerNormGuardCase(t, p, side, n)
				}
			}
		})
	}
}

func layerNormGuardCase(t *testing.T, p *Impl, side guard.Side, n int) {
	const m = 2
	x, gamma, beta := lnInput(uint64(n), m, n, n)
	dy := randSlice(newRand(uint64(n)+1), m*n)
	// On ordinary memory.
	y, mean, rstd := make([]float32, m*n), make([]float32, m), make([]float32, m)
	p.LayerNorm(m, n, x, n, gamma, beta, 1e-5, y, n, mean, rstd)
	dx, dg, db := make([]float32, m*n), make([]float32, n), make([]float32, n)
	p.LayerNormBackward(m, n, dy, n, x, n, mean, rstd, gamma, dx, n, dg, db)

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
	gx, ggamma, gbeta, gy := g(x), g(gamma), g(beta), g(make([]float32, m*n))
	gmean, grstd := g(make([]float32, m)), g(make([]float32, m))
	p.LayerNorm(m, n, gx, n, ggamma, gbeta, 1e-5, gy, n, gmean, grstd)
	gdx, gdg, gdb := g(make([]float32, m*n)), g(make([]float32, n)), g(make([]float32, n))
	p.LayerNormBackward(m, n, g(dy), n, gx, n, gmean, grstd, ggamma, gdx, n, gdg, gdb)
	same := func(what string, got, want []float32) {
		for i := range want {
			if got[i] != want[i] && !(got[i] != got[i] && want[i] != want[i]) {
				t.Fatalf("%s side=%d n=%d: %s[%d] = %v, want %v", p.Name(), side, n, what, i, got[i], want[i])
			}
		}
	}
	same("y", gy, y)
	same("mean", gmean, mean)
	same("rstd", grstd, rstd)
	same("dx", gdx, dx)
	same("dgamma", gdg, dg)
	same("dbeta", gdb, db)
}
