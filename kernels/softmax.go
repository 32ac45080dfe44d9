package kernels

// Softmax writes the row-wise softmax of the m×n matrix x (leading
// dimension ldx) into y (leading dimension ldy). x and y may be the same
// matrix: the same slice with the same leading dimension; otherwise they
// must not overlap in memory (it panics if they do).
//
// The row maximum is subtracted before exponentiation, so large finite
// inputs are safe. Special values have defined results: an entry of -Inf
// gets probability exactly 0; a row that is entirely -Inf (fully masked)
// becomes all 0; a row containing NaN or +Inf becomes all NaN.
//
// Accuracy: the relative error of every output against a float64
// computation is at most 2e-6 for the SIMD implementations (which use a
// polynomial exp) and about 1e-7 for generic.
func (p *Impl) Softmax(m, n int, x []float32, ldx int, y []float32, ldy int) {
	checkDims("Softmax", []string{"m", "n"}, m, n)
	checkMatrix("Softmax", "x", x, m, n, ldx)
	checkMatrix("Softmax", "y", y, m, n, ldy)
	if m == 0 || n == 0 {
		return
	}
	checkInPlaceOrApart("Softmax", "y", y, ldy, "x", x, ldx, m, n)
	p.set.Softmax(m, n, x, ldx, y, ldy)
}

// SoftmaxBackward computes the gradient through a row-wise softmax. y is
// the m×n softmax output and dy the gradient of the loss with respect to
// it; dx receives the gradient with respect to the softmax input:
//
//	dx[i,j] = y[i,j] * (dy[i,j] - sum_k y[i,k]*dy[i,k])
//
// dx may be the same matrix as dy (same start, same leading dimension);
// otherwise dx must not overlap dy or y in memory (it panics if it does).
func (p *Impl) SoftmaxBackward(m, n int, y []float32, ldy int, dy []float32, lddy int, dx []float32, lddx int) {
	checkDims("SoftmaxBackward", []string{"m", "n"}, m, n)
	checkMatrix("SoftmaxBackward", "y", y, m, n, ldy)
	checkMatrix("SoftmaxBackward", "dy", dy, m, n, lddy)
	checkMatrix("SoftmaxBackward", "dx", dx, m, n, lddx)
	if m == 0 || n == 0 {
		return
	}
	checkInPlaceOrApart("SoftmaxBackward", "dx", dx, lddx, "dy", dy, lddy, m, n)
	checkNoOverlap("SoftmaxBackward", "dx", dx, m, n, lddx, "y", y, m, n, ldy)
	p.set.SoftmaxBackward(m, n, y, ldy, dy, lddy, dx, lddx)
}
