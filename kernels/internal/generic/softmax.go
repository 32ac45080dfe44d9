package generic

import "math"

// Softmax writes the row-wise softmax of the m×n matrix x (leading
// dimension ldx) into y (leading dimension ldy):
//
//	y[i,j] = exp(x[i,j] - max_j x[i,j]) / sum_j exp(x[i,j] - max_j x[i,j])
//
// x and y may be the same matrix (same first element and leading
// dimension). The defined results for special values are:
//
//   - an entry of -Inf gets probability exactly 0;
//   - a row whose entries are all -Inf (a fully masked row) becomes all 0;
//   - a row containing NaN or +Inf becomes all NaN;
//   - large finite values are safe: the row maximum is subtracted first.
//
// The exponentials and the sum are computed in float64.
func Softmax(m, n int, x []float32, ldx int, y []float32, ldy int) {
	for i := 0; i < m; i++ {
		xr := x[i*ldx : i*ldx+n]
		yr := y[i*ldy : i*ldy+n]
		SoftmaxRow(yr, xr)
	}
}

// SoftmaxRow writes softmax(src) into dst, which must be at least as long
// as src and may be src itself. Special values behave as in Softmax.
func SoftmaxRow(dst, src []float32) {
	n := len(src)
	if n == 0 {
		return
	}
	dst = dst[:n]
	mx := Max(src)
	if math.IsInf(float64(mx), -1) {
		for j := range dst {
			dst[j] = 0
		}
		return
	}
	m64 := float64(mx)
	var sum float64
	for j, v := range src {
		e := math.Exp(float64(v) - m64)
		sum += e
		dst[j] = float32(e)
	}
	inv := 1 / sum
	for j := range dst {
		dst[j] = float32(float64(dst[j]) * inv)
	}
}

// SoftmaxBackward computes the gradient of a row-wise softmax. Given the
// m×n softmax output y and the gradient dy of a loss with respect to y, it
// writes the gradient with respect to the softmax input:
//
//	dx[i,j] = y[i,j] * (dy[i,j] - sum_k y[i,k]*dy[i,k])
//
// dx may be the same matrix as dy.
func SoftmaxBackward(m, n int, y []float32, ldy int, dy []float32, lddy int, dx []float32, lddx int) {
	for i := 0; i < m; i++ {
		SoftmaxBackwardRow(dx[i*lddx:i*lddx+n], y[i*ldy:i*ldy+n], dy[i*lddy:i*lddy+n])
	}
}

// SoftmaxBackwardRow is SoftmaxBackward for one row of length len(y).
func SoftmaxBackwardRow(dx, y, dy []float32) {
	n := len(y)
	dx = dx[:n]
	dy = dy[:n]
	var s float64
	for j, v := range y {
		s += float64(v) * float64(dy[j])
	}
	s32 := float32(s)
	for j, v := range y {
		dx[j] = v * (dy[j] - s32)
	}
}
