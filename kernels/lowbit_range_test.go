package kernels

import (
	"fmt"
	"math"
	"testing"

	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

// int8RangeCase is a product over Int8 weights at the ends of float32's
// range: W (n×k) and A (m×k) from w and x, alpha, and beta with C's
// values before the call (c, or NaN when beta is 0).
type int8RangeCase struct {
	name        string
	m, n, k     int
	w           func(j, p int) float32
	x           func(i, p int) float32
	alpha, beta float32
	c           float32
}

// alt returns v with the sign of (-1)^(a+b).
func alt(v float32, a, b int) float32 {
	if (a+b)%2 == 1 {
		return -v
	}
	return v
}

// spread returns v scaled by a factor in [0.5, 1.5) that depends on a and
// b, so that elements differ.
func spread(v float32, a, b int) float32 {
	return v * (0.5 + float32((a*7+b*13)%17)/17)
}

func int8RangeCases() []int8RangeCase {
	const top = math.MaxFloat32
	one := func(v float32) func(int, int) float32 { return func(int, int) float32 { return v } }
	at0 := func(v float32) func(int, int) float32 {
		return func(_, p int) float32 {
			if p == 0 {
				return v
			}
			return 0
		}
	}
	sp := func(v float32) func(int, int) float32 { return func(a, b int) float32 { return spread(v, a, b) } }
	mixed := func(v float32) func(int, int) float32 {
		return func(a, b int) float32 { return alt(spread(v, a, b), a, b) }
	}
	return []int8RangeCase{
		// The three reported: a huge weight times a tiny x (exact 1e6),
		// ±MaxFloat32 weights, and alpha·sx beyond float32.
		{name: "weight 1e36, x 1e-30", m: 1, n: 1, k: 32, w: at0(1e36), x: one(1e-30), alpha: 1},
		{name: "weight ±MaxFloat32", m: 1, n: 2, k: 32, w: func(j, p int) float32 {
			if p < 2 {
				return alt(top, j, p)
			}
			return 1
		}, x: func(_, p int) float32 { return []float32{1, 0.5}[min(p, 1)] }, alpha: 1},
		{name: "alpha 1e20, x 1e30, w 1e-38", m: 3, n: 5, k: 40, w: mixed(1e-38), x: sp(1e30), alpha: 1e20},
		// Huge and tiny weights, x and alpha, in every combination the
		// result of which is finite.
		{name: "huge w, x 1", m: 2, n: 9, k: 70, w: sp(1e35), x: sp(1), alpha: 1},
		{name: "huge w, tiny x", m: 3, n: 9, k: 70, w: mixed(2e38), x: sp(1e-30), alpha: 1},
		{name: "huge w, tiny x, tiny alpha", m: 1, n: 9, k: 70, w: sp(2e38), x: sp(1e-3), alpha: 1e-30},
		{name: "huge x, tiny w", m: 2, n: 9, k: 70, w: sp(1e-30), x: mixed(2e38), alpha: 1},
		{name: "tiny x below QuantizeInt16, huge w", m: 2, n: 9, k: 40, w: sp(1e35), x: sp(1e-35), alpha: 1},
		{name: "tiny x, huge w and alpha", m: 3, n: 9, k: 40, w: sp(1e30), x: mixed(1e-33), alpha: 1e10},
		{name: "huge alpha, tiny x and w", m: 2, n: 9, k: 40, w: sp(1e-20), x: sp(1e-20), alpha: 1e30},
		{name: "tiny alpha, huge x and w", m: 3, n: 9, k: 40, w: sp(1e20), x: sp(1e20), alpha: 1e-30},
		{name: "alpha·sx subnormal", m: 2, n: 9, k: 40, w: sp(1e38), x: sp(1e-5), alpha: 1e-38},
		{name: "alpha·sx above MaxFloat32", m: 2, n: 9, k: 40, w: sp(1e-38), x: sp(1e38), alpha: 1e10},
		// Subnormal weights (a subnormal scale) and x.
		{name: "subnormal w, huge x", m: 2, n: 9, k: 40, w: mixed(1e-40), x: sp(1e30), alpha: 1e5},
		{name: "subnormal x among normal", m: 2, n: 9, k: 40, w: sp(1e30), x: func(i, p int) float32 {
			if p == 0 {
				return 1
			}
			return spread(1e-40, i, p)
		}, alpha: 1},
		{name: "subnormal products", m: 3, n: 9, k: 40, w: mixed(1e-20), x: sp(1e-20), alpha: 1},
		// Sums that cancel: alternating signs across groups.
		{name: "cancelling huge", m: 2, n: 9, k: 64, w: func(j, p int) float32 { return alt(1e36, j, p/32) }, x: one(1e2), alpha: 1},
		{name: "cancelling per element", m: 3, n: 9, k: 70, w: mixed(1e37), x: sp(10), alpha: 1},
		// beta with C: the outputs recomputed keep C's old value.
		{name: "overflowing sums, beta", m: 3, n: 9, k: 40, w: sp(2e38), x: sp(1e-25), alpha: 1, beta: 0.5, c: 2},
		{name: "huge C, tiny beta", m: 2, n: 9, k: 40, w: sp(1e36), x: sp(1e-30), alpha: 1, beta: 1e-30, c: 3e38},
		// Large enough to be split between goroutines.
		{name: "split, beta", m: 2, n: 4100, k: 64, w: mixed(1e35), x: sp(1), alpha: 1, beta: 0.5, c: 2},
		// A result beyond float32 is infinite.
		{name: "overflowing result", m: 2, n: 9, k: 40, w: sp(2e38), x: sp(10), alpha: 1},
	}
}

// TestGemmInt8Range checks GemmInt8 (m rows) and GemvInt8 (its first row)
// at the ends of float32's range against the float64 product of At's
// weights and A: within (K+2)·2⁻²³·(|alpha|·Σ|w·x| + |beta·c|) plus
// |alpha|·sx·Σ|w| (the activations' rounding, half of it, and underflow
// in the integer path, the other half) plus 2⁻¹⁴⁹, and finite wherever
// the reference is below MaxFloat32 by more than that bound; on every
// implementation, every row count of the kernels.
func TestGemmInt8Range(t *testing.T) {
	for _, tc := range int8RangeCases() {
		nk := make([]float32, tc.n*tc.k)
		for j := 0; j < tc.n; j++ {
			for p := 0; p < tc.k; p++ {
				nk[j*tc.k+p] = tc.w(j, p)
			}
		}
		w, err := lowbit.Int8FromNK(nk, tc.n, tc.k)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, v := range w.Float32() {
			if math.IsInf(float64(v), 0) {
				t.Fatalf("%s: a weight dequantizes to %v", tc.name, v)
			}
		}
		a := make([]float32, tc.m*tc.k)
		for i := 0; i < tc.m; i++ {
			for p := 0; p < tc.k; p++ {
				a[i*tc.k+p] = tc.x(i, p)
			}
		}
		c0 := make([]float32, tc.m*tc.n)
		for i := range c0 {
			c0[i] = float32(math.NaN())
			if tc.beta != 0 {
				c0[i] = spread(tc.c, i, 1)
			}
		}
		ref := make([]float64, len(c0))
		tol := make([]float64, len(c0))
		for i := 0; i < tc.m; i++ {
			x := a[i*tc.k : (i+1)*tc.k]
			sx, ok := lowbit.QuantizeInt16(make([]int16, tc.k), x)
			if !ok {
				sx = 0
			}
			for j := 0; j < tc.n; j++ {
				var s, sa, sw float64
				for p, v := range x {
					wv := float64(w.At(j, p))
					s += wv * float64(v)
					sa += math.Abs(wv * float64(v))
					sw += math.Abs(wv)
				}
				al := float64(tc.alpha)
				s, sa = al*s, math.Abs(al)*sa
				if tc.beta != 0 {
					bc := float64(tc.beta) * float64(c0[i*tc.n+j])
					s += bc
					sa += math.Abs(bc)
				}
				ref[i*tc.n+j] = s
				tol[i*tc.n+j] = float64(tc.k+2)*0x1p-23*sa + math.Abs(al)*float64(sx)*sw + 0x1p-149
			}
		}
		check := func(t *testing.T, what string, got []float32, rows int) {
			t.Helper()
			for q := 0; q < rows*tc.n; q++ {
				g, r := float64(got[q]), ref[q]
				if math.Abs(r)+tol[q] < math.MaxFloat32 {
					if math.IsInf(g, 0) || math.IsNaN(g) || math.Abs(g-r) > tol[q] {
						t.Errorf("%s %s: C[%d][%d] = %v, want %v (within %.3g)", tc.name, what, q/tc.n, q%tc.n, got[q], r, tol[q])
					}
				} else if math.Abs(r)-tol[q] > math.MaxFloat32 && !math.IsInf(g, int(math.Copysign(1, r))) {
					t.Errorf("%s %s: C[%d][%d] = %v, want %v (beyond float32)", tc.name, what, q/tc.n, q%tc.n, got[q], r)
				}
			}
		}
		t.Run(tc.name, func(t *testing.T) {
			forEachImpl(t, func(t *testing.T, p *Impl) {
				c := append([]float32(nil), c0...)
				p.GemmInt8(tc.m, tc.alpha, a, tc.k, w, tc.beta, c, tc.n)
				check(t, fmt.Sprintf("GemmInt8 m=%d", tc.m), c, tc.m)
				y := append([]float32(nil), c0[:tc.n]...)
				p.GemvInt8(tc.alpha, w, a[:tc.k], tc.beta, y)
				check(t, "GemvInt8", y, 1)
			})
		})
	}
}
