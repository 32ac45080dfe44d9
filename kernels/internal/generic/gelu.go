package generic

import "math"

// GELU's tanh form: gelu(x) = 0.5·x·(1 + tanh(geluC·(x + geluA·x³))).
const (
	geluC = 0.7978845608028654 // √(2/π)
	geluA = 0.044715
	// geluClamp bounds the x from which σ is computed: beyond it the
	// results are their limits exactly (see geluSigma).
	geluClamp = 20
)

// geluSigma returns, in float64, xs = max(x, -20), xc = min(xs, 20),
// σ = σ(2u) = 0.5·(1 + tanh(u)) and q = σ·(1-σ) for u = geluC·(xc +
// geluA·xc³). σ and 1-σ are 1/(1+e) and e/(1+e) with e = exp(-2|u|)
// (which is which depends on the sign of x), so neither is formed by a
// cancelling subtraction. For x <= -20 and x >= 20 every result the
// callers form from these rounds to its limit (σ = 0 or 1, q = 0 in
// float32 terms), and the clamps keep ±Inf out of the products. A NaN x
// gives NaN xs and xc.
func geluSigma(x float32) (xs, xc, sig, q float64) {
	xs = max(float64(x), -geluClamp)
	xc = min(xs, geluClamp)
	u := geluC * (xc + geluA*xc*xc*xc)
	e := math.Exp(-2 * math.Abs(u))
	s := 1 / (1 + e)
	es := e * s
	sig = s
	if xc < 0 {
		sig = es
	}
	return xs, xc, sig, es * s
}

// geluOne returns gelu(x) rounded to float32: x·σ(2u) in float64.
func geluOne(x float32) float32 {
	xs, _, sig, _ := geluSigma(x)
	return float32(xs * sig)
}

// GELU sets dst[i] = gelu(x[i]) for i < len(x), the tanh form:
//
//	for i, v := range x {
//		u := math.Sqrt(2/math.Pi) * (v + 0.044715*v*v*v)
//		dst[i] = 0.5 * v * (1 + math.Tanh(u))
//	}
//
// computed in float64 as x·σ(2u), σ(z) = 1/(1+e^-z), and rounded once
// (within about 1 ulp of float32 of the exact value). The limits hold:
// gelu(+Inf) = +Inf, gelu(-Inf) = -0, and gelu(x) = -0 for x <= -20
// (where the exact value is below 1e-260 in magnitude); NaN gives NaN.
// dst must be at least as long as x and may be x itself.
func GELU(dst, x []float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = geluOne(v)
	}
}

// GELUBackward sets dx[i] = dy[i]·gelu'(x[i]) for i < len(x), with
//
//	gelu'(x) = 0.5·(1 + tanh(u)) + 0.5·x·(1 - tanh(u)²)·√(2/π)·(1 + 3·0.044715·x²)
//
// computed in float64 as σ + x·σ(1-σ)·2√(2/π)(1 + 3·0.044715·x²),
// σ = σ(2u), and rounded to float32 before the product with dy[i]. It is
// exactly 1 for x >= 20 (+Inf included) and 0 for x <= -20 (-Inf
// included); NaN gives NaN. dx is overwritten; dx and dy must be at least
// as long as x, and dx may be dy itself.
func GELUBackward(dx, dy, x []float32) {
	dx = dx[:len(x)]
	dy = dy[:len(x)]
	for i, v := range x {
		dx[i] = dy[i] * geluDeriv(v)
	}
}

// geluDeriv returns gelu'(x) rounded to float32.
func geluDeriv(x float32) float32 {
	_, xc, sig, q := geluSigma(x)
	return float32(sig + xc*q*2*geluC*(1+3*geluA*xc*xc))
}

// BiasGELU adds bias[:n] to every row of the m×n matrix x (leading
// dimension ldx) in place and writes the GELU of the result into y
// (leading dimension ldy):
//
//	for i := 0; i < m; i++ {
//		for j := 0; j < n; j++ {
//			x[i*ldx+j] += bias[j]
//			y[i*ldy+j] = gelu(x[i*ldx+j])
//		}
//	}
//
// with gelu as in GELU. y may be x itself (same start and leading
// dimension), which then holds the GELU.
func BiasGELU(m, n int, x []float32, ldx int, bias []float32, y []float32, ldy int) {
	bias = bias[:n]
	for i := 0; i < m; i++ {
		xr := x[i*ldx : i*ldx+n]
		yr := y[i*ldy : i*ldy+n]
		for j, b := range bias {
			v := xr[j] + b
			xr[j] = v
			yr[j] = geluOne(v)
		}
	}
}
