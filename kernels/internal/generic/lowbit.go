package generic

import (
	"math"
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
// in order in float32 (s_g is block g's Scale). Int8Scaled decides which
// rows take this path; the others (an element of x not finite, all of
// them tiny, or alpha*sx outside float32's normal range) are computed by
// GemmInt8Float, and so is every output that comes out NaN or infinite
// (Int8Dot), so that no intermediate overflows where the result does not.
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
		xs, ok := Int8Scaled(alpha, q, x)
		if !ok {
			GemmInt8Float(1, alpha, x, k, w, beta, ci, n)
			continue
		}
		clear(q[k:])
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
			v := gemvStore(xs, acc, beta, ci[j])
			if !Finite(v) {
				v = Int8Dot(alpha, x, row, beta, ci[j])
			}
			ci[j] = v
		}
	}
	int16Pool.Put(qp)
}

// Int8Scaled quantizes the row x of A into q (lowbit.QuantizeInt16) and
// returns xs = alpha*sx, the factor of the row's integer products, and
// true; or false when the row is to be computed by GemmInt8Float: an
// element of x is not finite, all of them are below QuantizeInt16's
// range, or xs (computed in float64) is not 0 and outside float32's
// normal range [2⁻¹²⁶, MaxFloat32], where it would overflow or lose
// precision. alpha is not 0.
func Int8Scaled(alpha float32, q []int16, x []float32) (xs float32, ok bool) {
	sx, ok := lowbit.QuantizeInt16(q, x)
	if !ok {
		return 0, false
	}
	return Int8Alpha(alpha, sx)
}

// Int8Alpha returns alpha·sx, the factor of a row of A whose activations'
// scale is sx (lowbit.QuantizeInt16), and true, or false when that is not
// zero or a normal float32 (Int8Scaled).
func Int8Alpha(alpha, sx float32) (xs float32, ok bool) {
	f := math.Abs(float64(alpha) * float64(sx))
	if f != 0 && (f < 0x1p-126 || f > math.MaxFloat32) {
		return 0, false
	}
	return alpha * sx, true
}

// Finite reports whether v is neither an infinity nor a NaN.
func Finite(v float32) bool { return math.Float32bits(v)&0x7f800000 != 0x7f800000 }

// int16Pool holds GemmInt8's buffers of quantized activations.
var int16Pool = sync.Pool{New: func() any { return new([]int16) }}

// GemmInt8Float computes C = alpha*A·Wᵀ + beta*C for the N×K int8 matrix
// W without quantizing A, each output by Int8Dot: exact products of the
// weights of lowbit.Int8.At and A's elements summed in float64, rounded
// once to float32, so that no intermediate overflows or underflows and
// NaN and infinities in A propagate as in a float32 product. GemmInt8 and
// the SIMD kernels use it for the rows of A the integer products do not
// take (see Int8Scaled).
func GemmInt8Float(m int, alpha float32, a []float32, lda int, w *lowbit.Int8, beta float32, c []float32, ldc int) {
	n, k, groups := w.N, w.K, lowbit.Groups(w.K)
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
			ci[j] = Int8Dot(alpha, x, w.Blocks[j*groups:(j+1)*groups], beta, ci[j])
		}
	}
}

// Int8Dot returns alpha·Σ_p w[p]·x[p] + beta·old for the row of int8
// blocks row (at least Groups(len(x)) of them), w[p] the weight
// lowbit.Int8.At gives (Scale*float32(Q), rounded to float32): each
// product exact in float64, summed in float64 in order, multiplied by
// alpha and added to beta·old in float64 (old not read when beta is 0)
// and rounded once to float32. A result is infinite only where the exact
// one is beyond float32's range (or an operand is infinite).
func Int8Dot(alpha float32, x []float32, row []lowbit.Int8Block, beta, old float32) float32 {
	var s float64
	for p, v := range x {
		b := &row[p/lowbit.GroupSize]
		wq := float32(b.Scale * float32(b.Q[p%lowbit.GroupSize]))
		s += float64(wq) * float64(v)
	}
	s *= float64(alpha)
	if beta != 0 {
		s += float64(beta) * float64(old)
	}
	return float32(s)
}

// DequantizeInt8 sets d[r*ldd+p] = w.At(j0+r, p), the weight's group
// scale times its int8 value rounded once to float32, for r < n and
// p < w.K: rows j0 .. j0+n-1 of W dequantized into the row-major n×w.K
// matrix D.
func DequantizeInt8(w *lowbit.Int8, j0, n int, d []float32, ldd int) {
	k, groups := w.K, lowbit.Groups(w.K)
	if k == 0 {
		return // D is empty; d may be shorter than (n-1)*ldd
	}
	for r := 0; r < n; r++ {
		row := w.Blocks[(j0+r)*groups : (j0+r+1)*groups]
		dr := d[r*ldd : r*ldd+k]
		for p := range dr {
			b := &row[p/lowbit.GroupSize]
			dr[p] = b.Scale * float32(b.Q[p%lowbit.GroupSize])
		}
	}
}

// dequantPanelRows is the number of rows of W GemmDequantInt8
// dequantizes at a time.
const dequantPanelRows = 256

// dequantPanels holds GemmDequantInt8's panels, so that a call allocates
// nothing once warm.
var dequantPanels = sync.Pool{New: func() any { return new([]float32) }}

// GemmDequantInt8 sets C = alpha·A·Wᵀ + beta·C for the row-major m×w.K
// matrix A and the int8 weights W (w.N×w.K) dequantized:
//
//	DequantizeInt8(w, 0, w.N, d, w.K)
//	Gemm(false, true, m, w.N, w.K, alpha, a, lda, d, w.K, beta, c, ldc)
//
// bit for bit, computed a panel of up to 256 rows of W at a time (Gemm's
// elements do not depend on the columns around them). m, w.N > 0.
func GemmDequantInt8(m int, alpha float32, a []float32, lda int, w *lowbit.Int8, beta float32, c []float32, ldc int) {
	n, k := w.N, w.K
	if k == 0 || alpha == 0 {
		Gemm(false, true, m, n, k, alpha, a, lda, nil, max(k, 1), beta, c, ldc)
		return
	}
	bp := dequantPanels.Get().(*[]float32)
	rows := min(dequantPanelRows, n)
	if cap(*bp) < rows*k {
		*bp = make([]float32, rows*k)
	}
	panel := (*bp)[:rows*k]
	for j0 := 0; j0 < n; j0 += rows {
		jn := min(rows, n-j0)
		DequantizeInt8(w, j0, jn, panel, k)
		Gemm(false, true, m, jn, k, alpha, a, lda, panel, k, beta, c[j0:], ldc)
	}
	dequantPanels.Put(bp)
}
