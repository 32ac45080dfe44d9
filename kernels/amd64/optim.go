//go:build amd64 && !purego

package amd64

import "github.com/simdgpt/simdgpt/kernels/internal/kernelset"

// The optimizer kernels (asm/gen/optim) take the AdamW scalars one by
// one, with 1-Beta1 and 1-Beta2 computed here in float32 as
// generic.AdamW computes them.

func adamwSetAVX2(p, g, m, v []float32, h kernelset.AdamWParams) {
	adamwAVX2(p, g, m, v, h.GradScale, h.Beta1, 1-h.Beta1, h.Beta2, 1-h.Beta2,
		h.InvBiasCorr1, h.InvBiasCorr2, h.Eps, h.WeightDecay, h.LR)
}

func adamwSetAVX512(p, g, m, v []float32, h kernelset.AdamWParams) {
	adamwAVX512(p, g, m, v, h.GradScale, h.Beta1, 1-h.Beta1, h.Beta2, 1-h.Beta2,
		h.InvBiasCorr1, h.InvBiasCorr2, h.Eps, h.WeightDecay, h.LR)
}
