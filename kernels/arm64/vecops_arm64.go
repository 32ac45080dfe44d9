//go:build arm64 && !purego

package arm64

// DotNEON returns the sum of x[i]*y[i]. len(y) must equal len(x).
// It keeps four vector accumulators and uses FMA, so the rounding differs
// from a sequential loop. Requires ASIMD. Arguments are not checked.
//
//go:noescape
func DotNEON(x, y []float32) float32

// AxpyNEON sets y[i] += alpha*x[i] with a fused multiply-add (one
// rounding). len(y) must equal len(x). Requires ASIMD. Arguments are not
// checked.
//
//go:noescape
func AxpyNEON(alpha float32, x, y []float32)

// ScaleNEON sets x[i] *= alpha. Requires ASIMD.
//
//go:noescape
func ScaleNEON(alpha float32, x []float32)

// AddNEON sets dst[i] = x[i] + y[i]. x and y must be as long as dst; dst
// may be x or y (the same slice), but must not otherwise overlap them.
// Requires ASIMD. Arguments are not checked.
//
//go:noescape
func AddNEON(dst, x, y []float32)

// SumNEON returns the sum of the elements of x, 0 if x is empty. It keeps
// four vector accumulators, so the rounding differs from a sequential
// loop. Requires ASIMD.
//
//go:noescape
func SumNEON(x []float32) float32

// MaxNEON returns the largest element of x, -Inf if x is empty, and a NaN
// if any element is NaN (which NaN is unspecified: FMAX returns one of
// its NaN operands, quieted). The sign of a zero result is unspecified
// when x holds both +0 and -0. Requires ASIMD.
//
//go:noescape
func MaxNEON(x []float32) float32
