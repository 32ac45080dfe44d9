package bf16compute

import (
	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

// GemmFunc is a float32 GEMM, kernelset.Set's Gemm.
type GemmFunc func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)

// ManyRows is the number of rows of A from which a set's GemmBF16 (the
// product of float32 A with bfloat16 weights) converts the weights once
// to float32 and runs the float32 GEMM (FloatWeights) instead of
// converting them in registers on every pass of up to 8 rows.
const ManyRows = 16

// FloatWeights computes C = alpha*A·Wᵀ + beta*C with gemm on W's weights
// converted once to float32 (exactly): the float32 GEMM's arithmetic on
// A and W's values. Arguments are checked, m and w.N > 0, w.K > 0 and
// alpha != 0.
func FloatWeights(gemm GemmFunc, m int, alpha float32, a []float32, lda int, w *lowbit.BF16, beta float32, c []float32, ldc int) {
	rw := getRounded()
	defer putRounded(rw)
	wf := weightsFloat32(&rw.b, w)
	gemm(false, true, m, w.N, w.K, alpha, a, lda, wf, w.K, beta, c, ldc)
}

// weightsFloat32 returns W's N×K weights as float32 (exact), row-major
// and contiguous, in buf.
func weightsFloat32(buf *[]float32, w *lowbit.BF16) []float32 {
	n, k, stride := w.N, w.K, w.Stride()
	if cap(*buf) < n*k {
		*buf = make([]float32, n*k, n*k+n*k/4)
	}
	dst := (*buf)[:n*k]
	const g, h = lowbit.GroupSize, lowbit.GroupSize / 2
	for j := 0; j < n; j++ {
		row := w.Data[j*stride : (j+1)*stride]
		out := dst[j*k : (j+1)*k]
		full := k / g * g
		for p0 := 0; p0 < full; p0 += g {
			grp := row[p0 : p0+g]
			o := out[p0 : p0+g]
			for d := 0; d < h; d++ {
				o[d] = lowbit.FromBF16(grp[2*d])
				o[h+d] = lowbit.FromBF16(grp[2*d+1])
			}
		}
		for p := full; p < k; p++ {
			q := p - full
			idx := full + 2*q
			if q >= h {
				idx = full + 2*(q-h) + 1
			}
			out[p] = lowbit.FromBF16(row[idx])
		}
	}
	return dst
}
