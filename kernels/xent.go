package kernels

import "fmt"

// SoftmaxCrossEntropy is the loss layer of a classifier, fused: for each
// row i of the m×n matrix logits (leading dimension ldl) and its class
// t = targets[i], it writes the cross-entropy loss of the row's softmax
// and the gradient of scale times that loss with respect to the logits:
//
//	losses[i]    = logsumexp(logits[i,:]) - logits[i,t]  (= -log softmax(logits[i,:])[t])
//	dlogits[i,j] = scale * (softmax(logits[i,:])[j] - onehot(t)[j])
//
// For the mean loss over a batch of B rows, scale = 1/B. dlogits (leading
// dimension lddl) may be logits itself, the same slice with the same
// leading dimension (the logits are then overwritten by the gradient);
// otherwise they must not overlap, and losses (at least m long) must
// overlap neither. len(targets) must be at least m and every target in
// [0, n); it panics, naming the row, before any kernel runs otherwise.
//
// Each row is computed as a softmax is: the row maximum subtracted, the
// exponentials written into dlogits with their sum, then scaled by
// scale/sum, and scale subtracted at the target. The loss is
// (c - logits[i,t]) + log(sum) in float64, where c is the shift actually
// subtracted (the maximum, or within 0.35 of it), with one math.Log per
// row.
//
// Special values: an entry of -Inf has probability exactly 0 (if it is
// the target's, the loss is +Inf and the gradient finite); a row holding
// NaN or +Inf, or whose entries are all -Inf, gets a NaN loss and NaN
// gradients.
//
// Accuracy: the loss is within 2e-6 + 2^-23·|loss| of the float64 value
// (1e-7 + 2^-24·|loss| for generic), and every gradient element within
// 4e-6·|scale|·(p[j] + onehot[j]) + 2^-24·|dlogits[i,j]| of it, p being
// the exact probability (generic: one rounding of the float64 value),
// apart from gradients below about 1e-38·|scale|, which may be flushed to
// 0.
func (p *Impl) SoftmaxCrossEntropy(m, n int, logits []float32, ldl int, targets []int32, scale float32, dlogits []float32, lddl int, losses []float32) {
	const fn = "SoftmaxCrossEntropy"
	checkDims(fn, []string{"m", "n"}, m, n)
	checkMatrix(fn, "logits", logits, m, n, ldl)
	checkMatrix(fn, "dlogits", dlogits, m, n, lddl)
	if len(targets) < m {
		panic(fmt.Sprintf("kernels.%s: len(targets) = %d, want >= m = %d", fn, len(targets), m))
	}
	checkLen(fn, "losses", losses, m)
	if m == 0 {
		return
	}
	for i, t := range targets[:m] {
		if t < 0 || int64(t) >= int64(n) {
			panic(fmt.Sprintf("kernels.%s: targets[%d] = %d is outside [0, n) for n = %d (row %d)", fn, i, t, n, i))
		}
	}
	// Here n >= 1: a target exists.
	checkInPlaceOrApart(fn, "dlogits", dlogits, lddl, "logits", logits, ldl, m, n)
	checkNoOverlap(fn, "losses", losses, 1, m, m, "logits", logits, m, n, ldl)
	checkNoOverlap(fn, "losses", losses, 1, m, m, "dlogits", dlogits, m, n, lddl)
	p.set.SoftmaxCrossEntropy(m, n, logits, ldl, targets, scale, dlogits, lddl, losses)
}
