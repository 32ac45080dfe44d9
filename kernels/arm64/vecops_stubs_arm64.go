//go:build arm64 && !purego

package arm64

// dotNEON returns the sum of x[i]*y[i]. len(y) must equal len(x).
// It keeps four vector accumulators and uses FMA, so the rounding differs
// from a sequential loop. Requires ASIMD. Arguments are not checked.
//
//go:noescape
func dotNEON(x, y []float32) float32

// axpyNEON sets y[i] += alpha*x[i] with a fused multiply-add (one
// rounding). len(y) must equal len(x). Requires ASIMD. Arguments are not
// checked.
//
//go:noescape
func axpyNEON(alpha float32, x, y []float32)

// scaleNEON sets x[i] *= alpha. Requires ASIMD.
//
//go:noescape
func scaleNEON(alpha float32, x []float32)

// addNEON sets dst[i] = x[i] + y[i]. x and y must be as long as dst; dst
// may be x or y (the same slice), but must not otherwise overlap them.
// Requires ASIMD. Arguments are not checked.
//
//go:noescape
func addNEON(dst, x, y []float32)

// sumNEON returns the sum of the elements of x, 0 if x is empty. It keeps
// four vector accumulators, so the rounding differs from a sequential
// loop. Requires ASIMD.
//
//go:noescape
func sumNEON(x []float32) float32

// maxNEON returns the largest element of x, -Inf if x is empty, and a NaN
// if any element is NaN (which NaN is unspecified: FMAX returns one of
// its NaN operands, quieted). The sign of a zero result is unspecified
// when x holds both +0 and -0. Requires ASIMD.
//
//go:noescape
func maxNEON(x []float32) float32
