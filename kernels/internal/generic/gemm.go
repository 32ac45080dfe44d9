package generic

// Gemm computes C = alpha*op(A)*op(B) + beta*C for row-major matrices,
// where op(A) is m×k and op(B) is k×n. If transA is false, A is stored as
// m×k with leading dimension lda; if true, A is stored as k×m and op(A) is
// its transpose. B likewise (k×n, or n×k when transB). C is m×n with
// leading dimension ldc.
//
// When beta is 0, C is not read (NaN or Inf there does not propagate); when
// alpha is 0 or k is 0, A and B are not read.
func Gemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		ci := c[i*ldc : i*ldc+n]
		if beta == 0 {
			for j := range ci {
				ci[j] = 0
			}
		} else if beta != 1 {
			for j := range ci {
				ci[j] *= beta
			}
		}
		if alpha == 0 || k == 0 {
			continue
		}
		if transB {
			// op(B)[p,j] = b[j*ldb+p]: each C entry is a dot product of
			// row i of op(A) with row j of B.
			var ai []float32
			if !transA {
				ai = a[i*lda : i*lda+k]
			}
			for j := range ci {
				bj := b[j*ldb : j*ldb+k]
				var s float32
				if ai != nil {
					s = Dot(ai, bj)
				} else {
					for p, bv := range bj {
						s += a[p*lda+i] * bv
					}
				}
				ci[j] += alpha * s
			}
			continue
		}
		// op(B)[p,:] is a contiguous row: accumulate alpha*A[i,p] * B[p,:].
		for p := 0; p < k; p++ {
			s := alpha * aAt(a, transA, lda, i, p)
			bp := b[p*ldb : p*ldb+n]
			for j, bv := range bp {
				ci[j] += s * bv
			}
		}
	}
}

// aAt returns op(A)[i,p].
func aAt(a []float32, transA bool, lda, i, p int) float32 {
	if transA {
		return a[p*lda+i]
	}
	return a[i*lda+p]
}

// GemmBiasGELU is a linear layer with its bias and GELU: it sets
// pre = op(A)·op(B) + bias (bias[:n] added to every row; op(A) is m×k,
// op(B) k×n, stored as for Gemm) and out = gelu(pre):
//
//	Gemm(transA, transB, m, n, k, 1, a, lda, b, ldb, 0, pre, ldpre)
//	BiasGELU(m, n, pre, ldpre, bias, out, ldout)
//
// which is how it computes them. pre is not read; pre and out are m×n
// (leading dimensions ldpre and ldout) and apart from each other.
func GemmBiasGELU(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, pre []float32, ldpre int, out []float32, ldout int) {
	Gemm(transA, transB, m, n, k, 1, a, lda, b, ldb, 0, pre, ldpre)
	BiasGELU(m, n, pre, ldpre, bias, out, ldout)
}

// GemmBias is a linear layer with its bias: it sets C = op(A)·op(B) +
// bias (bias[:n] added to every row; op(A) is m×k, op(B) k×n, stored as
// for Gemm):
//
//	Gemm(transA, transB, m, n, k, 1, a, lda, b, ldb, 0, c, ldc)
//	then on each row i: Add(C_i, C_i, bias)
//
// which is how it computes it. C is not read and does not overlap bias.
func GemmBias(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, c []float32, ldc int) {
	Gemm(transA, transB, m, n, k, 1, a, lda, b, ldb, 0, c, ldc)
	for i := 0; i < m; i++ {
		ci := c[i*ldc : i*ldc+n]
		Add(ci, ci, bias[:n])
	}
}
