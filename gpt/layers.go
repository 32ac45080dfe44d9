package gpt

import (
	"github.com/simdgpt/simdgpt/kernels"
)

// The layers of the model, each a forward function and its backward side by
// side. Activations are row-major [n, width] with n = batch·time rows.
// Backward functions ACCUMULATE parameter gradients (+=), but for the
// weight matrices of linearBackward, which it OVERWRITES (see
// weights.wholeGrads); whether they overwrite or accumulate the input
// gradient is stated on each.

// rowChunk is the smallest number of rows worth a goroutine in the
// row-parallel layers.
const rowChunk = 16

// embedForward: x[i] = wte[tok[i]] + wpe[pos + i mod t], x [n,c]: b = n/t
// sequences of t tokens from position pos (training: pos 0; decoding: t =
// n tokens following the pos already in the cache), each row added by k.
func embedForward(k *kernels.Impl, x, wte, wpe []float32, tok []int32, n, t, pos, c int) {
	if n <= rowChunk {
		// One chunk (a decoded token): no closure to allocate.
		embedRows(k, x, wte, wpe, tok, t, pos, c, 0, n)
		return
	}
	parallelFor(n, rowChunk, func(lo, hi int) { embedRows(k, x, wte, wpe, tok, t, pos, c, lo, hi) })
}

// embedRows is embedForward's rows [lo, hi).
func embedRows(k *kernels.Impl, x, wte, wpe []float32, tok []int32, t, pos, c, lo, hi int) {
	for i := lo; i < hi; i++ {
		k.Add(x[i*c:][:c], wte[int(tok[i])*c:][:c], wpe[(pos+i%t)*c:][:c])
	}
}

// embedBackward accumulates dwte and dwpe from dx (serially, in row order,
// so the sums are deterministic), adding rows with k.
func embedBackward(k *kernels.Impl, dwte, dwpe, dx []float32, tok []int32, n, t, c int) {
	for i := 0; i < n; i++ {
		k.Add(dwte[int(tok[i])*c:][:c], dwte[int(tok[i])*c:][:c], dx[i*c:][:c])
		k.Add(dwpe[(i%t)*c:][:c], dwpe[(i%t)*c:][:c], dx[i*c:][:c])
	}
}

const lnEps = 1e-5

// layerNormForward: out = (x-mean)·rstd·w + b per row (kernels.LayerNorm);
// saves mean and rstd [n]. Rows are split over goroutines (each row is
// independent of the others).
func layerNormForward(k *kernels.Impl, out, mean, rstd, x, w, b []float32, n, c int) {
	if n <= rowChunk {
		// One chunk: no closure to allocate.
		k.LayerNorm(n, c, x[:n*c], c, w, b, lnEps, out[:n*c], c, mean[:n], rstd[:n])
		return
	}
	parallelFor(n, rowChunk, func(lo, hi int) {
		k.LayerNorm(hi-lo, c, x[lo*c:hi*c], c, w, b, lnEps, out[lo*c:hi*c], c, mean[lo:hi], rstd[lo:hi])
	})
}

// addLayerNormForward: sum = x + r (the residual connection), out =
// LayerNorm(sum) with w and b, saving mean and rstd [n], in one pass per
// row (kernels.AddLayerNorm) instead of writing the sum and reading it
// back. Rows are split over goroutines.
func addLayerNormForward(k *kernels.Impl, sum, out, mean, rstd, x, r, w, b []float32, n, c int) {
	if n <= rowChunk {
		// One chunk: no closure to allocate.
		k.AddLayerNorm(n, c, x[:n*c], c, r[:n*c], c, sum[:n*c], c, w, b, lnEps, out[:n*c], c, mean[:n], rstd[:n])
		return
	}
	parallelFor(n, rowChunk, func(lo, hi int) {
		k.AddLayerNorm(hi-lo, c, x[lo*c:hi*c], c, r[lo*c:hi*c], c, sum[lo*c:hi*c], c, w, b, lnEps, out[lo*c:hi*c], c, mean[lo:hi], rstd[lo:hi])
	})
}

// layerNormBackward ACCUMULATES dx (+=), dw and db (kernels.LayerNormBackward
// over every row in order, on the calling goroutine: dw and db then sum
// the rows in the same order whatever the thread count, and in training
// each replica's goroutine runs its own).
func layerNormBackward(k *kernels.Impl, dx, dw, db, dout, x, mean, rstd, w []float32, n, c int) {
	k.LayerNormBackward(n, c, dout, c, x, c, mean, rstd, w, dx, c, dw, db)
}

// linearForward: out [n,o] = x [n,i] · w [i,o] + b [o], the bias added in
// the product's epilogue (kernels.GemmBias; GemmBiasBF16Compute with
// bf16).
func linearForward(k *kernels.Impl, bf16 bool, out, x, w, b []float32, n, in, o int) {
	if bf16 {
		k.GemmBiasBF16Compute(false, false, n, o, in, x, in, w, o, b, out, o)
		return
	}
	k.GemmBias(false, false, n, o, in, x, in, w, o, b, out, o)
}

// linearBackward: dx = dout·wᵀ (OVERWRITTEN; skipped when dx is nil),
// dw = xᵀ·dout (OVERWRITTEN: the weights' only use in a pass, so their
// gradient needs no zeroing), db += column sums of dout, computed with k;
// with bf16 both products in bfloat16 compute (the bias sums in float32).
func linearBackward(k *kernels.Impl, bf16 bool, dx, dw, db, dout, x, w []float32, n, in, o int) {
	if dx != nil {
		gemm(k, bf16, false, true, n, in, o, 1, dout, o, w, o, 0, dx, in)
	}
	gemm(k, bf16, true, false, in, o, n, 1, x, in, dout, o, 0, dw, o)
	biasGrad(k, db, dout, n, o)
}

// biasGrad adds the column sums of dout [n,o] to db: columns split over
// goroutines, rows summed in order within each (deterministic for any
// thread count). A GEMM with a row of ones would do it too, but would pack
// all of dout first. Rows are added with k.
func biasGrad(k *kernels.Impl, db, dout []float32, n, o int) {
	parallelFor(o, 64, func(lo, hi int) {
		d := db[lo:hi]
		for r := 0; r < n; r++ {
			k.Add(d, d, dout[r*o+lo:r*o+hi])
		}
	})
}

// geluBackward: dx = dout·gelu'(x), OVERWRITTEN (dx may be dout), gelu'
// recomputed from x (kernels.GELUBackward); gelu is the tanh form
// 0.5·x·(1+tanh(√(2/π)(x+0.044715x³))), applied in the forward pass by
// kernels.GemmBiasGELU.
func geluBackward(k *kernels.Impl, dx, dout, x []float32, n int) {
	parallelFor(n, 4096, func(lo, hi int) { k.GELUBackward(dx[lo:hi], dout[lo:hi], x[lo:hi]) })
}

// crossEntropy replaces logits [n,v] by the gradient of the batch's mean
// loss, scale·(softmax − onehot(target)) with scale = 1/(rows of the whole
// batch), and returns the sum of the n rows' losses −log p[target], each
// computed as logsumexp − logit[target] (kernels.SoftmaxCrossEntropy, one
// fused pass per row; losses [n] is scratch).
func crossEntropy(k *kernels.Impl, logits, losses []float32, targets []int32, n, v int, scale float32) float64 {
	k.SoftmaxCrossEntropy(n, v, logits, v, targets, scale, logits, v, losses)
	var loss float64
	for _, l := range losses[:n] {
		loss += float64(l)
	}
	return loss
}
