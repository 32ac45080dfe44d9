package generic

// Gemv computes y = alpha*op(A)*x + beta*y for the row-major m×n matrix A
// (leading dimension lda): op(A) = A, x of n and y of m elements, or, when
// trans, op(A) = Aᵀ, x of m and y of n elements. Each element of op(A)·x
// is summed in order of the index it runs over, in float32. y is not read
// when beta is 0; A and x are not read when alpha is 0.
func Gemv(trans bool, m, n int, alpha float32, a []float32, lda int, x []float32, beta float32, y []float32) {
	ylen, xlen := m, n
	if trans {
		ylen, xlen = n, m
	}
	y = y[:ylen]
	x = x[:xlen]
	if alpha == 0 || xlen == 0 {
		scaleVec(beta, y)
		return
	}
	if !trans {
		for i := range y {
			var s float32
			row := a[i*lda : i*lda+n]
			for j, v := range row {
				s += v * x[j]
			}
			y[i] = gemvStore(alpha, s, beta, y[i])
		}
		return
	}
	for j := range y {
		var s float32
		for i, v := range x {
			s += a[i*lda+j] * v
		}
		y[j] = gemvStore(alpha, s, beta, y[j])
	}
}

// gemvStore returns alpha*s + beta*old, ignoring old when beta is 0.
func gemvStore(alpha, s, beta, old float32) float32 {
	if beta == 0 {
		return alpha * s
	}
	return alpha*s + beta*old
}

// scaleVec sets y = beta*y, and y = 0 without reading it when beta is 0.
func scaleVec(beta float32, y []float32) {
	if beta == 0 {
		clear(y)
		return
	}
	if beta != 1 {
		for i := range y {
			y[i] *= beta
		}
	}
}
