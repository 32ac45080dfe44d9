package generic

import "math"

// Dot returns the sum of x[i]*y[i]. len(y) must equal len(x), as
// kernels.Dot checks.
func Dot(x, y []float32) float32 {
	var s float32
	y = y[:len(x)]
	for i, v := range x {
		s += v * y[i]
	}
	return s
}

// Axpy sets y[i] += alpha*x[i] for i < len(x).
func Axpy(alpha float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += alpha * v
	}
}

// Scale sets x[i] *= alpha for every element.
func Scale(alpha float32, x []float32) {
	for i := range x {
		x[i] *= alpha
	}
}

// Add sets dst[i] = x[i] + y[i] for i < len(dst). dst may alias x or y.
func Add(dst, x, y []float32) {
	x = x[:len(dst)]
	y = y[:len(dst)]
	for i := range dst {
		dst[i] = x[i] + y[i]
	}
}

// Sum returns the sum of the elements of x (0 for an empty slice).
func Sum(x []float32) float32 {
	var s float32
	for _, v := range x {
		s += v
	}
	return s
}

// Max returns the largest element of x. It returns -Inf for an empty slice
// and NaN if any element is NaN.
func Max(x []float32) float32 {
	m := float32(math.Inf(-1))
	for _, v := range x {
		if v != v {
			return v
		}
		if v > m {
			m = v
		}
	}
	return m
}
