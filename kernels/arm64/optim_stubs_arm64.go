//go:build arm64 && !purego

package arm64

// adamwNEON applies one AdamW step to p[i], m[i] and v[i] for i < len(p)
// from the gradients g (see generic.AdamW): g, m and v must be as long as
// p (not checked) and no two may overlap; c1 = 1-b1 and c2 = 1-b2 as
// float32. The weight-decay term is added only if wd != 0. Each operation
// is rounded as in generic.AdamW (no fused multiply-add), so the results
// are bitwise the same. See asm/gen/neon/optim.go. Requires ASIMD.
//
//go:noescape
func adamwNEON(p, g, m, v []float32, scale, b1, c1, b2, c2, ic1, ic2, eps, wd, lr float32)

// sumSquaresNEON returns the sum of x[i]*x[i], each square exact in
// float64 and summed in float64 in eight vector accumulators, the last
// len(x)%4 squares added to that sum one by one (0 if x is empty).
// Requires ASIMD.
//
//go:noescape
func sumSquaresNEON(x []float32) float64
