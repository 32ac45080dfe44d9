package generic

import "github.com/simdgpt/simdgpt/kernels/lowbit"

// GemmBF16 computes C = alpha*A·Wᵀ + beta*C for the m×K row-major A
// (leading dimension lda), the N×K bfloat16 matrix W and the m×N C
// (leading dimension ldc): each element the dot product of a row of A
// with a row of W, summed over p in order in float32, each weight exact
// in float32. C is not read when beta is 0; A and W are not read when
// alpha is 0.
func GemmBF16(m int, alpha float32, a []float32, lda int, w *lowbit.BF16, beta float32, c []float32, ldc int) {
	n, k, stride := w.N, w.K, w.Stride()
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
				s += lowbit.FromBF16(row[idx]) * v
			}
			ci[j] = gemvStore(alpha, s, beta, ci[j])
		}
	}
}

// GemmInt8 computes C = alpha*A·Wᵀ + beta*C as GemmBF16 does, for the N×K
// int8 matrix W: each weight dequantized to float32 as lowbit.Int8.At
// does (Scale*float32(Q), rounded), then multiplied by A's element and
// summed over p in order in float32. The result is thus that of the
// float32 product with W's dequantized matrix.
func GemmInt8(m int, alpha float32, a []float32, lda int, w *lowbit.Int8, beta float32, c []float32, ldc int) {
	n, k, groups := w.N, w.K, lowbit.Groups(w.K)
	for i := 0; i < m; i++ {
		ci := c[i*ldc : i*ldc+n]
		if alpha == 0 || k == 0 {
			scaleVec(beta, ci)
			continue
		}
		x := a[i*lda : i*lda+k]
		for j := range ci {
			row := w.Blocks[j*groups : (j+1)*groups]
			var s float32
			for p, v := range x {
				b := &row[p/lowbit.GroupSize]
				wq := float32(b.Scale * float32(b.Q[p%lowbit.GroupSize]))
				s += wq * v
			}
			ci[j] = gemvStore(alpha, s, beta, ci[j])
		}
	}
}
