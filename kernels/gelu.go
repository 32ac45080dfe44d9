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
// Accuracy against a float64 evaluation of the formula (as measured over
// every float32 in [-10, 10] and a sample beyond, see gelu_test.go):
//
//   - generic computes in float64 and rounds once: relative error below
//     1.2e-7 (2^-23) wherever the result is a normal float32.
//   - The SIMD implementations (a polynomial exp, shared with Softmax,
//     relative error 5.2e-7, in float32 arithmetic) have a relative error
//     below 2e-6 for x >= -3, and below 2e-6 + 2.5e-7·|2u| for x < -3
//     (the float32 rounding of the exponential's argument 2u, |2u| <= 87.3,
//     grows with it); results of magnitude below 1.2e-37 (x below about
//     -9.3) may be flushed to -0. The absolute error is below 1.5e-6 for
//     every x in [-10, 10] (most at large x, where it is relative).
//
// The tanh inside is never formed; the one implied, 2σ(2u) - 1, has an
// absolute error below 1e-6 (SIMD) against math.Tanh.
func (p *Impl) GELU(dst, x []float32) {
	checkSameLen("GELU", "dst", "x", len(dst), len(x))
	if len(x) == 0 {
		return
	}
	checkInPlaceOrApart("GELU", "dst", dst, len(dst), "x", x, len(x), 1, len(x))
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
// gelu'(x) is exactly 1 for x >= 20 (+Inf included), a zero for x <= -20
// (-Inf included); NaN gives NaN. Accuracy of gelu'(x) itself against
// float64: generic rounds once (2^-23 relative); SIMD is within 2e-6
// absolute plus 2e-6 + 2.5e-7·|2u| relative (gelu' crosses 0 near
// x = -0.75, where only the absolute bound is meaningful). The product
// with dy adds one rounding.
func (p *Impl) GELUBackward(dx, dy, x []float32) {
	checkSameLen("GELUBackward", "dx", "dy", len(dx), len(dy))
	checkSameLen("GELUBackward", "dx", "x", len(dx), len(x))
	if len(x) == 0 {
		return
	}
	checkInPlaceOrApart("GELUBackward", "dx", dx, len(dx), "dy", dy, len(dy), 1, len(x))
	checkNoOverlap("GELUBackward", "dx", dx, 1, len(dx), len(dx), "x", x, 1, len(x), len(x))
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

// GELU sets dst[i] = gelu(x[i]) with the default implementation; see
// (*Impl).GELU.
func GELU(dst, x []float32) { current.Load().GELU(dst, x) }

// GELUBackward sets dx[i] = dy[i]·gelu'(x[i]) with the default
// implementation; see (*Impl).GELUBackward.
func GELUBackward(dx, dy, x []float32) { current.Load().GELUBackward(dx, dy, x) }

// BiasGELU adds bias to every row of x in place and writes gelu of the
// result into y with the default implementation; see (*Impl).BiasGELU.
func BiasGELU(m, n int, x []float32, ldx int, bias []float32, y []float32, ldy int) {
	current.Load().BiasGELU(m, n, x, ldx, bias, y, ldy)
}
