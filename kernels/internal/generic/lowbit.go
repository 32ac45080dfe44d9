package generic

import (
	"sync"

	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

// GemmBF16 computes C = alpha*A·Wᵀ + beta*C for the m×K row-major A
// (leading dimension lda), the N×K bfloat16 matrix W and the m×N C
// (leading dimension ldc): each element the dot product of a row of A
// with a row of W, summed over p in order in float32, each weight exact
// in float32. C is not read when beta is 0; A and W are not read when
// alpha is 0.
func GemmBF16(m int, alpha float32, a []float32, lda int, w *lowbit.BF16, beta float32, c []float32, ldc int) {
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
				s += lowbit.FromBF16(row[idx]) * v
			}
			ci[j] = gemvStore(alpha, s, beta, ci[j])
		}
	}
}

// GemmInt8 computes C = alpha*A·Wᵀ + beta*C for the N×K int8 matrix W,
// each row x of A quantized by lowbit.QuantizeInt16 to int16 q with scale
// sx: C[i][j] = (alpha*sx)·Σ_g s_g·float32(Σ_{p in g} q[p]·Q_g[p]) +
// beta*C[i][j], the group sums exact in int32, summed over the groups g
// in order in float32 (s_g is block g's Scale). A row that QuantizeInt16
// refuses (an element not finite, or all tiny) is computed by
// GemmInt8Float instead.
func GemmInt8(m int, alpha float32, a []float32, lda int, w *lowbit.Int8, beta float32, c []float32, ldc int) {
	n, k, groups := w.N, w.K, lowbit.Groups(w.K)
	if m == 0 || n == 0 {
		return
	}
	if alpha == 0 || k == 0 {
		for i := 0; i < m; i++ {
			scaleVec(beta, c[i*ldc:i*ldc+n])
		}
		return
	}
	qp := int16Pool.Get().(*[]int16)
	if cap(*qp) < groups*lowbit.GroupSize {
		*qp = make([]int16, groups*lowbit.GroupSize)
	}
	q := (*qp)[:groups*lowbit.GroupSize]
	for i := 0; i < m; i++ {
		x := a[i*lda : i*lda+k]
		ci := c[i*ldc : i*ldc+n]
		sx, ok := lowbit.QuantizeInt16(q, x)
		if !ok {
			GemmInt8Float(1, alpha, x, k, w, beta, ci, n)
			continue
		}
		clear(q[k:])
		xs := alpha * sx
		for j := range ci {
			row := w.Blocks[j*groups : (j+1)*groups]
			var acc float32
			for g := range row {
				b := &row[g]
				var s int32
				for p, v := range q[g*lowbit.GroupSize : (g+1)*lowbit.GroupSize] {
					s += int32(v) * int32(b.Q[p])
				}
				acc += float32(float32(s) * b.Scale)
			}
			ci[j] = gemvStore(xs, acc, beta, ci[j])
		}
	}
	int16Pool.Put(qp)
}

// int16Pool holds GemmInt8's buffers of quantized activations.
var int16Pool = sync.Pool{New: func() any { return new([]int16) }}

// GemmInt8Float computes C = alpha*A·Wᵀ + beta*C for the N×K int8 matrix
// W in float32 without quantizing A: each weight dequantized as
// lowbit.Int8.At does (Scale*float32(Q), rounded), multiplied by A's
// element and summed over p in order in float32, so that NaN and
// infinities in A propagate as in a float32 product. GemmInt8 and the
// SIMD kernels use it for the rows QuantizeInt16 refuses.
func GemmInt8Float(m int, alpha float32, a []float32, lda int, w *lowbit.Int8, beta float32, c []float32, ldc int) {
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
