package kernels

// GELU sets dst[i] = gelu(x[i]) for every i, GELU's tanh form (GPT-2's):
//
//	gelu(x) = 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
//
// dst and x must have equal lengths; dst may be x itself (the same slice:
// same first element), otherwise they must not overlap in memory (it
// panics if they do).
//
// Every implementation computes it as x·σ(2u), u = √(2/π)·(x + 0.044715·x³),
// σ(z) = 1/(1 + e^-z), with σ(2u) = 1/(1+e) or e/(1+e) for e = e^(-2|u|),
// so nothing cancels. Special values: gelu(+Inf) = +Inf, gelu(-Inf) = -0,
// NaN gives NaN; for x <= -20 the result is -0 (the exact value is below
// 1e-260 in magnitude), for x >= 20 it is x.
//
// Accuracy against a float64 evaluation of the formula (checked by
// TestGELUAccuracy over every 151st float32 of [-10, 10] and a sample
// beyond, and measured once over every float32 of [-10, 10]):
//
//   - generic computes in float64 and rounds once: relative error at most
//     2^-24 (measured 6e-8) wherever the result is a normal float32.
//   - The SIMD implementations (float32 arithmetic and the polynomial exp
//     the softmax uses, relative error 5.2e-7) have a relative error below
//     2e-6 + 2e-7·|2u|, |2u| <= 87.3: the float32 rounding of the
//     exponential's argument 2u grows with it, so the bound is 2.4e-6 for
//     |x| <= 1, 3.3e-6 at x = -3 and 2e-5 near x = -10 (measured over
//     every float32 of [-10, 10] on AVX2 and AVX-512: 0.73 of the bound at
//     most). Results of magnitude below 2e-37 (x below about -9.99, where
//     the exponential underflows) may be -0 instead. The largest absolute
//     error is 5.2e-7 (at x near 10, where it is 5e-8 relative).
//
// The tanh of the formula is never formed. The one the SIMD result
// implies, 2·gelu(x)/x - 1, is within 5e-7 of math.Tanh(u) (measured
// 4.1e-7), and within 3.5e-6 relatively where |tanh(u)| >= 1/8 (measured
// 2.85e-6); near u = 0 only the absolute bound is meaningful. See
// gelu_test.go for the accuracy model.
func (p *Impl) GELU(dst, x []float32) {
	checkSameLen("GELU", "dst", "x", len(dst), len(x))
	if len(x) == 0 {
		return
	}
	if partlyOverlaps(dst, x) {
		panicVecOverlap("GELU", "dst", "x")
	}
	p.set.GELU(dst, x)
}

// GELUBackward sets dx[i] = dy[i]·gelu'(x[i]) for every i, the gradient
// through GELU (see GELU) recomputed from its input x:
//
//	gelu'(x) = 0.5·(1 + tanh(u)) + 0.5·x·(1 - tanh(u)²)·√(2/π)·(1 + 3·0.044715·x²)
//
// computed as σ + x·σ(1-σ)·2√(2/π)·(1 + 3·0.044715·x²), σ = σ(2u), with
// σ(1-σ) a product, not a difference. dx is overwritten (not
// accumulated). All three must have equal lengths; dx may be dy itself
// (same first element), otherwise it must not overlap dy, and it must
// never overlap x (it panics if it does).
//
// gelu'(x) is exactly 1 for x >= 20 (+Inf included), a zero (of either
// sign) for x <= -20 (-Inf included); NaN gives NaN. Accuracy of gelu'(x)
// against float64: generic rounds once (2^-24 relative); for SIMD the
// error is below (2e-6 + 2e-7·|2u|) times the sum of the magnitudes of
// the formula's two terms (they cancel near x = -0.75, where gelu' crosses
// 0), at most 2.6e-7 absolute as measured; values below 4e-36 in
// magnitude (x below about -9.99) may be flushed to 0. The product with
// dy adds one rounding; a dy of ±Inf where gelu'(x) is, or is flushed
// to, 0 gives NaN.
func (p *Impl) GELUBackward(dx, dy, x []float32) {
	checkSameLen("GELUBackward", "dx", "dy", len(dx), len(dy))
	checkSameLen("GELUBackward", "dx", "x", len(dx), len(x))
	if len(x) == 0 {
		return
	}
	if partlyOverlaps(dx, dy) {
		panicVecOverlap("GELUBackward", "dx", "dy")
	}
	checkVecApart("GELUBackward", "dx", dx, len(dx), "x", x, len(x))
	p.set.GELUBackward(dx, dy, x)
}

// BiasGELU is the bias addition of a linear layer fused with the GELU
// that follows it: it adds bias[:n] to every row of the m×n matrix x
// (leading dimension ldx) in place, so that x holds the pre-activation
// GELUBackward needs, and writes gelu of it into y (leading dimension
// ldy):
//
//	x[i,j] += bias[j]
//	y[i,j] = gelu(x[i,j])
//
// with gelu and its accuracy as in GELU (the sum is one float32
// addition, as a separate pass would round it). len(bias) must be at
// least n. y may be x itself (same first element and leading dimension),
// which then holds the GELU and loses the pre-activation; otherwise y must
// not overlap x, and bias must overlap neither (it panics if they do).
func (p *Impl) BiasGELU(m, n int, x []float32, ldx int, bias []float32, y []float32, ldy int) {
	checkDims("BiasGELU", []string{"m", "n"}, m, n)
	checkMatrix("BiasGELU", "x", x, m, n, ldx)
	checkMatrix("BiasGELU", "y", y, m, n, ldy)
	checkLen("BiasGELU", "bias", bias, n)
	if m == 0 || n == 0 {
		return
	}
	checkInPlaceOrApart("BiasGELU", "y", y, ldy, "x", x, ldx, m, n)
	checkNoOverlap("BiasGELU", "x", x, m, n, ldx, "bias", bias, 1, n, n)
	checkNoOverlap("BiasGELU", "y", y, m, n, ldy, "bias", bias, 1, n, n)
	p.set.BiasGELU(m, n, x, ldx, bias, y, ldy)
}
