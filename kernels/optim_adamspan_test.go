//go:build amd64 && !amd64.v3

package kernels

import (
	"math"
	"testing"
)

// adamSpanCopy is gpt's adamSpan (gpt/optim.go) as written there, for one
// span that decays (decay = true) or not. The Go compiler fuses no
// multiply-add on amd64 below GOAMD64=v3, so its float32 arithmetic is
// the written one (on arm64 it may fuse, and gpt's loop then differs in
// the last bits).
func adamSpanCopy(p, g, m, v []float32, decay bool, scale, b1, b2, ic1, ic2, eps, wd, lr float32) {
	for i := range p {
		gi := g[i] * scale
		mi := b1*m[i] + (1-b1)*gi
		vi := b2*v[i] + (1-b2)*gi*gi
		m[i], v[i] = mi, vi
		upd := mi * ic1 / (float32(math.Sqrt(float64(vi*ic2))) + eps)
		if decay {
			upd += wd * p[i]
		}
		p[i] -= lr * upd
	}
}

// TestAdamWMatchesAdamSpan: AdamW with WeightDecay = wd (decayed spans) or
// 0 (the others) is bitwise the trainer's scalar update, on every
// implementation, so the trainer can switch to it without changing a bit.
func TestAdamWMatchesAdamSpan(t *testing.T) {
	for ci, h := range adamCases {
		for _, n := range []int{1, 15, 16, 17, 63, 64, 65, 1000} {
			for _, decay := range []bool{false, true} {
				p0, g0, m0, v0 := adamInputs(n, uint64(ci)+40)
				wd := h.WeightDecay
				if wd == 0 {
					wd = 0.1
				}
				wp := append([]float32(nil), p0...)
				wm := append([]float32(nil), m0...)
				wv := append([]float32(nil), v0...)
				adamSpanCopy(wp, g0, wm, wv, decay, h.GradScale, h.Beta1, h.Beta2, h.InvBiasCorr1, h.InvBiasCorr2, h.Eps, wd, h.LR)
				h.WeightDecay = 0
				if decay {
					h.WeightDecay = wd
				}
				forEachImpl(t, func(t *testing.T, p *Impl) {
					gp, gm, gv := runAdam(t, p, p0, g0, m0, v0, h, 1)
					sameBits(t, "params", gp, wp)
					sameBits(t, "m", gm, wm)
					sameBits(t, "v", gv, wv)
				})
			}
		}
	}
}
