// Package xent is the row loop the SIMD implementations of
// kernels.SoftmaxCrossEntropy share: per row, the exponentials and their
// sum from an ISA's exponential kernel, the scaling of the exponentials
// into the gradient by its scale kernel, the target's correction and the
// loss. Only the two kernels differ between ISAs.
package xent

import "math"

// ExpRow writes dst[j] = exp(src[j] - c) for j < len(src) (len(src) >= 1,
// dst at least as long and possibly src itself) and returns the shift c
// and the sum of the dst[j]: sum = 0 for a row whose entries are all
// -Inf, NaN for a row holding NaN or +Inf, and sum >= exp(-0.35)
// otherwise (c is within 0.35 of the row's maximum).
type ExpRow func(dst, src []float32) (c float32, sum float64)

// Rows computes kernels.SoftmaxCrossEntropy with expRow and scale, the
// ISA's scaling kernel (x[i] *= alpha). The arguments are checked by
// package kernels (kernelset.Set.SoftmaxCrossEntropy): m, n >= 1, the
// matrices fit their slices, every target is in [0, n), and dlogits is
// logits or apart from it.
//
// For each row, with t its target and xt = logits[i,t] (read before the
// row is overwritten when dlogits is logits):
//
//	c, sum = expRow(dlogits[i,:], logits[i,:])
//	dlogits[i,:] *= float32(scale/sum)
//	dlogits[i,t] -= scale
//	losses[i] = float32((c - xt) + log(sum))     in float64
//
// A row with sum 0 or NaN (only -Inf, or a NaN or +Inf present) gets a
// NaN loss and NaN gradients.
func Rows(m, n int, logits []float32, ldl int, targets []int32, scale float32, dlogits []float32, lddl int, losses []float32,
	expRow ExpRow, scaleRow func(alpha float32, x []float32)) {
	nan := float32(math.NaN())
	for i := 0; i < m; i++ {
		src := logits[i*ldl : i*ldl+n]
		dst := dlogits[i*lddl : i*lddl+n]
		t := int(targets[i])
		xt := src[t]
		c, sum := expRow(dst, src)
		if !(sum > 0) {
			for j := range dst {
				dst[j] = nan
			}
			losses[i] = nan
			continue
		}
		scaleRow(float32(float64(scale)/sum), dst)
		dst[t] -= scale
		losses[i] = float32((float64(c) - float64(xt)) + math.Log(sum))
	}
}
