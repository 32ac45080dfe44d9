package generic

import (
	"math"

	"github.com/simdgpt/simdgpt/kernels/internal/kernelset"
)

// AdamW applies one AdamW step (Adam with decoupled weight decay) to every
// parameter, with the clipping factor h.GradScale and the inverse bias
// corrections h.InvBiasCorr1 = 1/(1-Beta1^t) and h.InvBiasCorr2 =
// 1/(1-Beta2^t) given by the caller. With b1 = h.Beta1, b2 = h.Beta2 and
// the float32 constants c1 = 1-b1, c2 = 1-b2, it computes, in float32 and
// in exactly this order (each product rounded, no fused multiply-add):
//
//	for i := range params {
//		g := grads[i] * h.GradScale
//		mi := b1*m[i] + c1*g
//		vi := b2*v[i] + (c2*g)*g
//		m[i], v[i] = mi, vi
//		upd := (mi * h.InvBiasCorr1) / (sqrt(vi * h.InvBiasCorr2) + h.Eps)
//		if h.WeightDecay != 0 {
//			upd += h.WeightDecay * params[i]
//		}
//		params[i] -= h.LR * upd
//	}
//
// where sqrt is the correctly rounded float32 square root. The SIMD
// implementations perform the same operations (their square roots and
// divisions are correctly rounded too), so every implementation gives the
// same bits. grads, m and v must be at least as long as params.
func AdamW(params, grads, m, v []float32, h kernelset.AdamWParams) {
	n := len(params)
	grads, m, v = grads[:n], m[:n], v[:n]
	b1, b2 := h.Beta1, h.Beta2
	c1, c2 := 1-b1, 1-b2
	for i := range params {
		// The explicit conversions round every product, so that no
		// compiler fuses a multiply and an add (Go may, on arm64).
		g := grads[i] * h.GradScale
		mi := float32(b1*m[i]) + float32(c1*g)
		vi := float32(b2*v[i]) + float32(float32(c2*g)*g)
		m[i], v[i] = mi, vi
		den := float32(math.Sqrt(float64(vi*h.InvBiasCorr2))) + h.Eps
		upd := float32(mi*h.InvBiasCorr1) / den
		if h.WeightDecay != 0 {
			upd += float32(h.WeightDecay * params[i])
		}
		params[i] -= float32(h.LR * upd)
	}
}

// SumSquares returns the sum of x[i]*x[i] in float64 (0 for an empty
// slice):
//
//	var s float64
//	for _, v := range x {
//		s += float64(v) * float64(v)
//	}
//
// Every square is exact in float64 (a float32 has 24 significant bits), so
// the only roundings are those of the additions: the relative error is at
// most len(x)*2^-53. It is NaN if x holds a NaN, otherwise +Inf if x holds
// ±Inf; no finite input overflows.
func SumSquares(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return s
}
