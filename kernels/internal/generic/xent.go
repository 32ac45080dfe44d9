package generic

import "math"

// SoftmaxCrossEntropy computes, for each row i of the m×n matrix logits
// (leading dimension ldl) with the class targets[i], the cross-entropy
// loss of the row's softmax and its gradient scaled by scale:
//
//	losses[i]    = logsumexp(logits[i,:]) - logits[i,t]        t = targets[i]
//	dlogits[i,j] = scale * (softmax(logits[i,:])[j] - onehot(t)[j])
//
// computed in float64 with the row maximum subtracted first:
//
//	mx  := max_j logits[i,j]
//	sum := sum_j exp(logits[i,j] - mx)
//	losses[i]    = (mx - logits[i,t]) + log(sum)
//	dlogits[i,j] = exp(logits[i,j] - mx) * (scale/sum) - (scale if j == t)
//
// each rounded once to float32. dlogits (leading dimension lddl) may be
// logits itself. Every target must be in [0, n) (not checked here).
//
// Special values: an entry of -Inf has probability exactly 0 (if it is the
// target's, the loss is +Inf and the gradient finite); a row holding NaN
// or +Inf, or whose entries are all -Inf, has a NaN loss and a row of NaN
// gradients.
func SoftmaxCrossEntropy(m, n int, logits []float32, ldl int, targets []int32, scale float32, dlogits []float32, lddl int, losses []float32) {
	for i := 0; i < m; i++ {
		src := logits[i*ldl : i*ldl+n]
		dst := dlogits[i*lddl : i*lddl+n]
		losses[i] = softmaxCrossEntropyRow(dst, src, int(targets[i]), scale)
	}
}

// softmaxCrossEntropyRow is SoftmaxCrossEntropy for one row; it returns
// the loss.
func softmaxCrossEntropyRow(dst, src []float32, t int, scale float32) float32 {
	xt := float64(src[t])
	mx := Max(src)
	if math.IsNaN(float64(mx)) || math.IsInf(float64(mx), 0) {
		nan := float32(math.NaN())
		for j := range dst {
			dst[j] = nan
		}
		return nan
	}
	m64 := float64(mx)
	var sum float64
	for _, v := range src {
		sum += math.Exp(float64(v) - m64)
	}
	inv := float64(scale) / sum
	for j, v := range src {
		dst[j] = float32(math.Exp(float64(v)-m64) * inv)
	}
	dst[t] = float32(math.Exp(xt-m64)*inv - float64(scale))
	return float32((m64 - xt) + math.Log(sum))
}
