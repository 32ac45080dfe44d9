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
// widen, when not nil, is the set's kernel of widenGroups' contract
// (gemm.Family.WidenBF16).
func FloatWeights(gemm GemmFunc, widen func(dst []float32, src []uint16), m int, alpha float32, a []float32, lda int, w *lowbit.BF16, beta float32, c []float32, ldc int) {
	rw := getRounded()
	defer putRounded(rw)
	wf := weightsFloat32(&rw.b, w, widen)
	gemm(false, true, m, w.N, w.K, alpha, a, lda, wf, w.K, beta, c, ldc)
}

// weightsFloat32 returns W's N×K weights as float32 (exact), row-major
// and contiguous, in buf: the whole groups of each row by widen (or
// widenGroups when widen is nil), a last partial group through a group
// of scratch in buf past the result.
func weightsFloat32(buf *[]float32, w *lowbit.BF16, widen func(dst []float32, src []uint16)) []float32 {
	if widen == nil {
		widen = widenGroups
	}
	const g = lowbit.GroupSize
	n, k, stride := w.N, w.K, w.Stride()
	if cap(*buf) < n*k+g {
		*buf = make([]float32, n*k+g, n*k+g+n*k/4)
	}
	dst := (*buf)[:n*k]
	last := (*buf)[n*k : n*k+g] // scratch past the result
	full := k / g * g
	for j := 0; j < n; j++ {
		row := w.Data[j*stride : (j+1)*stride]
		out := dst[j*k : (j+1)*k]
		widen(out[:full], row[:full])
		if full < k {
			widen(last, row[full:full+g])
			copy(out[full:], last[:k-full])
		}
	}
	return dst
}

// widenGroups sets dst[32g+d] = w[2d] and dst[32g+16+d] = w[2d+1] as
// float32 for d < 16, g < len(dst)/32 and w = src[32g:], a group of
// bfloat16 as lowbit.BF16 stores it: the Go form of the sets' widenBF16.
func widenGroups(dst []float32, src []uint16) {
	const g, h = lowbit.GroupSize, lowbit.GroupSize / 2
	for p0 := 0; p0+g <= len(dst); p0 += g {
		grp := src[p0 : p0+g]
		o := dst[p0 : p0+g]
		for d := 0; d < h; d++ {
			o[d] = lowbit.FromBF16(grp[2*d])
			o[h+d] = lowbit.FromBF16(grp[2*d+1])
		}
	}
}
