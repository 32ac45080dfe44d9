//go:build arm64 && !purego

package arm64

import "github.com/simdgpt/simdgpt/kernels/internal/kernelset"

// adamwSetNEON passes the AdamW scalars to adamwNEON one by one, with
// 1-Beta1 and 1-Beta2 computed here in float32 as generic.AdamW computes
// them.
func adamwSetNEON(p, g, m, v []float32, h kernelset.AdamWParams) {
	adamwNEON(p, g, m, v, h.GradScale, h.Beta1, 1-h.Beta1, h.Beta2, 1-h.Beta2,
		h.InvBiasCorr1, h.InvBiasCorr2, h.Eps, h.WeightDecay, h.LR)
}
