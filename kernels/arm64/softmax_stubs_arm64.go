//go:build arm64 && !purego

package arm64

// expRowNEON sets dst[j] = exp(src[j] - c') for j < len(src), where c' is
// within 0.35 of c, and returns the sum of the results accumulated in
// float64. It is pass 2 of a softmax row whose maximum m has |m| < 4096:
// the caller passes c (j*ln2 rounded to a multiple of 2^-9, j =
// round(m*log2(e))), b = 1.5*2^23 - j and thr = c + expMin; entries below
// thr, -Inf included, give +0. src must not hold NaN or +Inf and no
// entry may exceed m. len(src) must be a multiple of 4 and dst at least
// as long; dst may be src. See asm/gen/neon/softmax.go. Requires ASIMD.
//
//go:noescape
func expRowNEON(dst, src []float32, c, b, thr float32) float64

// softmaxBackwardRowNEON sets dx[j] = y[j]*(dy[j] - s) for j < len(y),
// where s = sum_k y[k]*dy[k]. dx and dy must be at least as long as y (not
// checked); dx may be dy itself. Requires ASIMD.
//
//go:noescape
func softmaxBackwardRowNEON(dx, y, dy []float32)

// expRowFarNEON is expRowNEON for a row whose maximum m has |m| >= 4096:
// the caller passes c = m, b = 1.5*2^23 and thr = expMin, and it sets
// dst[j] = exp(src[j] - m) (x - m is exact wherever the result is kept),
// or +0 below thr. The same conditions on src and the length hold.
// Requires ASIMD.
//
//go:noescape
func expRowFarNEON(dst, src []float32, c, b, thr float32) float64
