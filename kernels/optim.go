package kernels

import "github.com/simdgpt/simdgpt/kernels/internal/kernelset"

// AdamWParams are the scalars of one AdamW step (see AdamW).
type AdamWParams struct {
	// LR is the learning rate.
	LR float32
	// Beta1 and Beta2 are the decay rates of the first and second moment
	// estimates (typically 0.9 and 0.95 or 0.999).
	Beta1, Beta2 float32
	// Eps is added to the square root of the corrected second moment.
	Eps float32
	// WeightDecay is the decoupled weight decay; 0 leaves the decay term
	// out entirely (for the parameters that are not decayed).
	WeightDecay float32
	// GradScale multiplies every gradient first: the clipping factor,
	// min(1, clip/‖g‖), or 1.
	GradScale float32
	// InvBiasCorr1 and InvBiasCorr2 are the inverse bias corrections
	// 1/(1-Beta1^t) and 1/(1-Beta2^t) of step t (1-based).
	InvBiasCorr1, InvBiasCorr2 float32
}

// AdamW applies one AdamW step to params from grads, updating the first
// and second moment estimates m and v in place. All four slices must have
// the same length and must not overlap one another (it panics
// otherwise). With c1 = 1-Beta1 and c2 = 1-Beta2 it computes, in float32,
// for every i:
//
//	g := grads[i] * h.GradScale
//	m[i] = Beta1*m[i] + c1*g
//	v[i] = Beta2*v[i] + (c2*g)*g
//	upd := (m[i]*h.InvBiasCorr1) / (sqrt(v[i]*h.InvBiasCorr2) + h.Eps)
//	if h.WeightDecay != 0 { upd += h.WeightDecay*params[i] }
//	params[i] -= h.LR * upd
//
// in exactly this order, every product and sum rounded (no fused
// multiply-add) and the square root and the division correctly rounded, so
// every implementation gives bitwise the same results (NaN payloads
// aside). A parameter vector whose elements are decayed differently is
// updated span by span, with WeightDecay 0 for the spans that are not.
func (p *Impl) AdamW(params, grads, m, v []float32, h AdamWParams) {
	checkSameLen("AdamW", "params", "grads", len(params), len(grads))
	checkSameLen("AdamW", "params", "m", len(params), len(m))
	checkSameLen("AdamW", "params", "v", len(params), len(v))
	n := len(params)
	if n == 0 {
		return
	}
	vecs := [...]struct {
		name string
		s    []float32
	}{{"params", params}, {"grads", grads}, {"m", m}, {"v", v}}
	for i := range vecs {
		for j := i + 1; j < len(vecs); j++ {
			checkNoOverlap("AdamW", vecs[i].name, vecs[i].s, 1, n, n, vecs[j].name, vecs[j].s, 1, n, n)
		}
	}
	p.set.AdamW(params, grads, m, v, kernelset.AdamWParams(h))
}

// SumSquares returns the sum of the squares of the elements of x in
// float64 (0 if x is empty), for example the squared global norm of a
// gradient. Every square is exact in float64 and the sum is accumulated in
// float64 (in several lanes by the SIMD implementations), so the relative
// error is at most (len(x)+8)·2^-53 whatever the length, and no finite
// input overflows. The result is NaN if x holds a NaN, otherwise +Inf if x
// holds ±Inf.
func (p *Impl) SumSquares(x []float32) float64 { return p.set.SumSquares(x) }
