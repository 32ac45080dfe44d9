package kernels

import "math"

// Dot returns the dot product of x and y, which must have equal lengths.
func (p *Impl) Dot(x, y []float32) float32 {
	checkSameLen("Dot", "x", "y", len(x), len(y))
	return p.set.Dot(x, y)
}

// Axpy sets y[i] += alpha*x[i]; x and y must have equal lengths. y may
// be x itself (the same first element); otherwise they must not overlap
// in memory (it panics if they do).
func (p *Impl) Axpy(alpha float32, x, y []float32) {
	checkSameLen("Axpy", "x", "y", len(x), len(y))
	if partlyOverlaps(y, x) {
		panicVecOverlap("Axpy", "y", "x")
	}
	p.set.Axpy(alpha, x, y)
}

// Scale sets x[i] *= alpha.
func (p *Impl) Scale(alpha float32, x []float32) { p.set.Scale(alpha, x) }

// Add sets dst[i] = x[i] + y[i]; all three must have equal lengths. dst
// may be x or y itself (the same first element); otherwise it must not
// overlap either (it panics if it does). x and y, only read, may overlap
// in any way.
func (p *Impl) Add(dst, x, y []float32) {
	checkSameLen("Add", "dst", "x", len(dst), len(x))
	checkSameLen("Add", "dst", "y", len(dst), len(y))
	if partlyOverlaps(dst, x) {
		panicVecOverlap("Add", "dst", "x")
	}
	if partlyOverlaps(dst, y) {
		panicVecOverlap("Add", "dst", "y")
	}
	p.set.Add(dst, x, y)
}

// Sum returns the sum of the elements of x, 0 if x is empty.
func (p *Impl) Sum(x []float32) float32 { return p.set.Sum(x) }

// Max returns the largest element of x: -Inf if x is empty, NaN if any
// element is NaN.
func (p *Impl) Max(x []float32) float32 {
	if len(x) == 0 {
		return float32(math.Inf(-1))
	}
	return p.set.Max(x)
}
