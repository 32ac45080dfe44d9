//go:build arm64 && !purego

package arm64

import (
	"math"

	"github.com/simdgpt/simdgpt/kernels/internal/generic"
)

// softmaxNEON computes each row in three passes: the maximum m (maxNEON),
// the exponentials and their sum (expRowNEON, or expRowFarNEON when
// |m| >= expNearMax) and the scaling by 1/sum (scaleNEON). A row whose
// maximum is NaN or ±Inf (a row holding NaN or +Inf, or only -Inf) is
// left to generic.SoftmaxRow, which gives it its defined result. The
// reduction constants come from the generator (softmax_consts_arm64.go).
func softmaxNEON(m, n int, x []float32, ldx int, y []float32, ldy int) {
	for i := 0; i < m; i++ {
		softmaxRowNEON(y[i*ldy:i*ldy+n], x[i*ldx:i*ldx+n])
	}
}

func softmaxRowNEON(dst, src []float32) {
	mx := maxNEON(src)
	if math.IsNaN(float64(mx)) || math.IsInf(float64(mx), 0) {
		generic.SoftmaxRow(dst, src)
		return
	}
	_, sum := expShiftedNEON(dst, src, mx)
	// sum >= exp(-0.35): the maximum's own exponential.
	scaleNEON(float32(1/sum), dst[:len(src)])
}

// expShiftedNEON is pass 2 of a softmax row whose maximum mx is finite:
// it sets dst[j] = exp(src[j] - c) for j < len(src) and returns the shift
// c of the reduction (mx, or within 0.35 of it) and the sum of the dst[j]
// in float64.
func expShiftedNEON(dst, src []float32, mx float32) (c float32, sum float64) {
	far := !(math.Abs(float64(mx)) < expNearMax)
	var b, thr float32
	if far {
		c, b, thr = mx, expShifter, expMin
	} else {
		// j = round(m*log2(e)); c = j*ln2 rounded to a multiple of 2^-9,
		// so that c + k*ln2Hi is exact in the kernel.
		j := math.RoundToEven(float64(mx) * math.Log2E)
		c = float32(math.RoundToEven(j*math.Ln2*512) / 512)
		b = float32(expShifter - j)
		thr = c + expMin
	}
	n4 := len(src) &^ 3
	sum = expRow(far, dst[:n4], src[:n4], c, b, thr)
	if n4 < len(src) {
		// The last 1-3 entries, padded with -Inf (whose exponentials are
		// 0), so the kernel reads and writes only whole vectors.
		var buf [4]float32
		for k := range buf {
			buf[k] = float32(math.Inf(-1))
		}
		copy(buf[:], src[n4:])
		sum += expRow(far, buf[:], buf[:], c, b, thr)
		copy(dst[n4:], buf[:len(src)-n4])
	}
	return c, sum
}

// expRow calls the near or far exponential kernel (directly, so that a
// local buffer passed to it stays on the stack).
func expRow(far bool, dst, src []float32, c, b, thr float32) float64 {
	if far {
		return expRowFarNEON(dst, src, c, b, thr)
	}
	return expRowNEON(dst, src, c, b, thr)
}

func softmaxBackwardNEON(m, n int, y []float32, ldy int, dy []float32, lddy int, dx []float32, lddx int) {
	for i := 0; i < m; i++ {
		softmaxBackwardRowNEON(dx[i*lddx:i*lddx+n], y[i*ldy:i*ldy+n], dy[i*lddy:i*lddy+n])
	}
}
