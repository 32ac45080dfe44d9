package generic

import "github.com/simdgpt/simdgpt/kernels/lowbit"

// bf16 returns v rounded to bfloat16 (lowbit.ToBF16, to nearest even), as
// a float32 (exact).
func bf16(v float32) float32 { return lowbit.FromBF16(lowbit.ToBF16(v)) }

// GemmBF16Compute computes C = alpha*op(A)*op(B) + beta*C, stored as for
// Gemm, with every element of op(A) and op(B) rounded to bfloat16 by
// lowbit.ToBF16 and their products (exact in float32 unless they
// underflow or overflow) summed in float32 over p in order from a zero
// sum s; then C = alpha*s + beta*C. When beta is 0, C is not read; when
// alpha is 0 or k is 0, A and B are not read.
func GemmBF16Compute(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		ci := c[i*ldc : i*ldc+n]
		if alpha == 0 || k == 0 {
			scaleVec(beta, ci)
			continue
		}
		for j := range ci {
			var s float32
			for p := 0; p < k; p++ {
				var bv float32
				if transB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += bf16(aAt(a, transA, lda, i, p)) * bf16(bv)
			}
			ci[j] = gemvStore(alpha, s, beta, ci[j])
		}
	}
}

// GemmBiasBF16Compute sets C = op(A)·op(B) + bias as GemmBias does, the
// product computed by GemmBF16Compute (alpha 1, beta 0).
func GemmBiasBF16Compute(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, c []float32, ldc int) {
	GemmBF16Compute(transA, transB, m, n, k, 1, a, lda, b, ldb, 0, c, ldc)
	for i := 0; i < m; i++ {
		ci := c[i*ldc : i*ldc+n]
		Add(ci, ci, bias[:n])
	}
}

// GemmBiasGELUBF16Compute sets pre = op(A)·op(B) + bias and out =
// gelu(pre) as GemmBiasGELU does, the product computed by
// GemmBF16Compute (alpha 1, beta 0).
func GemmBiasGELUBF16Compute(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, pre []float32, ldpre int, out []float32, ldout int) {
	GemmBF16Compute(transA, transB, m, n, k, 1, a, lda, b, ldb, 0, pre, ldpre)
	BiasGELU(m, n, pre, ldpre, bias, out, ldout)
}

// GemmBF16ComputeWeights computes C = alpha*A·Wᵀ + beta*C as
// GemmBF16Compute does with op(B) = Wᵀ (the weights are bfloat16
// already): each element the sum over p in order, in float32, of the
// exact products bf16(A[i][p])·W[j][p]. C is not read when beta is 0; A
// and W are not read when alpha is 0 or w.K is 0.
func GemmBF16ComputeWeights(m int, alpha float32, a []float32, lda int, w *lowbit.BF16, beta float32, c []float32, ldc int) {
	n, k, stride := w.N, w.K, w.Stride()
	if m == 0 || n == 0 {
		return // C is empty; c may be shorter than (m-1)*ldc
	}
	for i := 0; i < m; i++ {
		ci := c[i*ldc : i*ldc+n]
		if alpha == 0 || k == 0 {
			scaleVec(beta, ci)
			continue
		}
		x := a[i*lda : i*lda+k]
		for j := range ci {
			row := w.Data[j*stride : (j+1)*stride]
			var s float32
			for p, v := range x {
				g, q := p&^(lowbit.GroupSize-1), p&(lowbit.GroupSize-1)
				idx := g + 2*q
				if q >= lowbit.GroupSize/2 {
					idx = g + 2*(q-lowbit.GroupSize/2) + 1
				}
				s += lowbit.FromBF16(row[idx]) * bf16(v)
			}
			ci[j] = gemvStore(alpha, s, beta, ci[j])
		}
	}
}
