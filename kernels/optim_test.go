package kernels

import (
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"
)

// Tests of the optimizer kernels AdamW and SumSquares.
//
// Tolerances (eps = float32Eps = 2^-23):
//
//   - AdamW: every implementation bitwise equal to generic (a NaN need
//     only match a NaN), since all perform the same correctly rounded
//     operations in the same order. generic against a float64 evaluation
//     of the same formula: m and v within 2·eps of their terms' magnitude,
//     params within eps·|p| + 8·eps·|lr·update| (the update's few float32
//     roundings, relative to the update, then one for the subtraction).
//   - SumSquares: within (n+8)·2^-53 relative of the exact sum (computed
//     with math/big), for every implementation.

// adamCases are the AdamW hyper-parameters of the sweeps: early and late
// steps, clipping, weight decay on and off, eps 0.
var adamCases = []AdamWParams{
	{LR: 1e-3, Beta1: 0.9, Beta2: 0.95, Eps: 1e-8, WeightDecay: 0.1, GradScale: 1, InvBiasCorr1: 10, InvBiasCorr2: 20},
	{LR: 3e-4, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0, GradScale: 0.37, InvBiasCorr1: 1.0000266, InvBiasCorr2: 2.5},
	{LR: 0.5, Beta1: 0.8, Beta2: 0.5, Eps: 0, WeightDecay: 0.01, GradScale: 3, InvBiasCorr1: 1, InvBiasCorr2: 1},
}

// adamSizes cross every unroll and tail boundary: 2 and 4 vectors of 8
// and 16 lanes (AVX2, AVX-512), 4 vectors of 4 (NEON).
var adamSizes = func() []int {
	var s []int
	for n := 0; n <= 140; n++ {
		s = append(s, n)
	}
	return append(s, 255, 256, 257, 1000, 4099)
}()

// adamInputs returns params, grads, m and v of length n: m around 0, v
// positive (some 0), for a test case.
func adamInputs(n int, seed uint64) (p, g, m, v []float32) {
	r := newRand(seed*31 + uint64(n))
	p, g, m = randSlice(r, n), randSlice(r, n), randSlice(r, n)
	v = make([]float32, n)
	for i := range v {
		m[i] *= 0.01
		if r.IntN(9) != 0 {
			v[i] = r.Float32() * 1e-3
		}
	}
	return
}

// adamRef is AdamW in float64, with the same formula; it returns the new
// params, m, v and the magnitude of lr*update per element.
func adamRef(p0, g0, m0, v0 []float32, h AdamWParams) (p, m, v, upd []float64) {
	n := len(p0)
	p, m, v, upd = make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	b1, b2 := float64(h.Beta1), float64(h.Beta2)
	c1, c2 := float64(1-h.Beta1), float64(1-h.Beta2)
	for i := range p0 {
		g := float64(g0[i]) * float64(h.GradScale)
		m[i] = b1*float64(m0[i]) + c1*g
		v[i] = b2*float64(v0[i]) + c2*g*g
		u := m[i] * float64(h.InvBiasCorr1) / (math.Sqrt(v[i]*float64(h.InvBiasCorr2)) + float64(h.Eps))
		if h.WeightDecay != 0 {
			u += float64(h.WeightDecay) * float64(p0[i])
		}
		upd[i] = math.Abs(float64(h.LR) * u)
		p[i] = float64(p0[i]) - float64(h.LR)*u
	}
	return
}

// sameBits fails t unless got equals want bitwise, a NaN matching any NaN.
func sameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if want[i] != want[i] && got[i] != got[i] {
			continue
		}
		if !bitsEqual(got[i], want[i]) {
			t.Fatalf("%s: element %d = %v (%#x), want %v (%#x)", what, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}

// runAdam returns params, m, v after p.AdamW on copies of the inputs,
// placed off elements into padded buffers (with canaries checked).
func runAdam(t *testing.T, p *Impl, p0, g0, m0, v0 []float32, h AdamWParams, off int) (pp, m, v []float32) {
	t.Helper()
	pp, cp := vecPadded(p0, off)
	g, cg := vecPadded(g0, (off+1)%8)
	m, cm := vecPadded(m0, (off+3)%8)
	v, cv := vecPadded(v0, (off+6)%8)
	p.AdamW(pp, g, m, v, h)
	for i := range g {
		if !bitsEqual(g[i], g0[i]) {
			t.Fatalf("%s: AdamW changed grads[%d]", p.Name(), i)
		}
	}
	for _, c := range []func(*testing.T){cp, cg, cm, cv} {
		c(t)
	}
	return pp, m, v
}

func TestAdamW(t *testing.T) {
	for ci, h := range adamCases {
		for _, n := range adamSizes {
			p0, g0, m0, v0 := adamInputs(n, uint64(ci))
			wp, wm, wv := runAdam(t, genericImpl, p0, g0, m0, v0, h, 0)
			rp, rm, rv, ru := adamRef(p0, g0, m0, v0, h)
			for i := range wp {
				gs := math.Abs(float64(g0[i]) * float64(h.GradScale))
				mtol := 2 * float32Eps * (math.Abs(float64(h.Beta1*m0[i])) + gs)
				vtol := 2*float32Eps*(math.Abs(float64(h.Beta2*v0[i]))+gs*gs) + 1e-44
				ptol := float32Eps*math.Abs(rp[i]) + 8*float32Eps*ru[i]
				if !closeTo(wm[i], float32(rm[i]), mtol) || !closeTo(wv[i], float32(rv[i]), vtol) || !closeTo(wp[i], float32(rp[i]), ptol) {
					t.Fatalf("generic case %d n=%d i=%d: p, m, v = %v, %v, %v; float64 %v, %v, %v", ci, n, i, wp[i], wm[i], wv[i], rp[i], rm[i], rv[i])
				}
			}
			for _, p := range nonGeneric() {
				for _, off := range vecOffsets {
					gp, gm, gv := runAdam(t, p, p0, g0, m0, v0, h, off)
					what := fmt.Sprintf("%s case %d n=%d off=%d", p.Name(), ci, n, off)
					sameBits(t, what+" params", gp, wp)
					sameBits(t, what+" m", gm, wm)
					sameBits(t, what+" v", gv, wv)
				}
			}
		}
	}
}

// TestAdamWSpecial: NaN and infinite gradients, parameters and moments,
// huge and subnormal values, a zero second moment with eps = 0 (0/0) and
// a NaN weight decay all give, on every implementation, bitwise generic's
// results; and some results are checked for their defined values.
func TestAdamWSpecial(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	specials := []float32{nan, inf, -inf, 0, float32(math.Copysign(0, -1)), math.MaxFloat32, -math.MaxFloat32,
		math.SmallestNonzeroFloat32, 1e-40, -3e-39, 1e30, -1e-30}
	for _, n := range []int{1, 5, 17, 33, 70} {
		for ci, h := range append(adamCases,
			AdamWParams{LR: 1, Beta1: 0.9, Beta2: 0.99, Eps: 0, WeightDecay: float32(math.NaN()), GradScale: 1, InvBiasCorr1: 1, InvBiasCorr2: 1},
			AdamWParams{LR: 1e-2, Beta1: 0, Beta2: 0, Eps: 0, WeightDecay: 0, GradScale: 1, InvBiasCorr1: 1, InvBiasCorr2: 1}) {
			p0, g0, m0, v0 := adamInputs(n, 99)
			for i := 0; i < n; i++ {
				switch i % 4 {
				case 0:
					g0[i] = specials[(i/4)%len(specials)]
				case 1:
					p0[i] = specials[(i/4+3)%len(specials)]
				case 2:
					m0[i] = specials[(i/4+5)%len(specials)]
					v0[i] = 0
				}
			}
			wp, wm, wv := runAdam(t, genericImpl, p0, g0, m0, v0, h, 0)
			for i := 0; i < n; i++ {
				if g0[i] != g0[i] && (wp[i] == wp[i] || wm[i] == wm[i] || wv[i] == wv[i]) {
					t.Fatalf("case %d n=%d: a NaN gradient gave p, m, v = %v, %v, %v, want NaN", ci, n, wp[i], wm[i], wv[i])
				}
			}
			for _, p := range nonGeneric() {
				gp, gm, gv := runAdam(t, p, p0, g0, m0, v0, h, 3)
				what := fmt.Sprintf("%s special case %d n=%d", p.Name(), ci, n)
				sameBits(t, what+" params", gp, wp)
				sameBits(t, what+" m", gm, wm)
				sameBits(t, what+" v", gv, wv)
			}
		}
	}
	// With a zero gradient and moments, eps > 0 and no decay, nothing moves;
	// with decay, params shrink by lr*wd*p.
	forEachImpl(t, func(t *testing.T, p *Impl) {
		params := []float32{1, -2, 4, 0}
		zeros := make([]float32, 4)
		m, v := make([]float32, 4), make([]float32, 4)
		p.AdamW(params, zeros, m, v, AdamWParams{LR: 0.5, Beta1: 0.9, Beta2: 0.9, Eps: 1e-8, GradScale: 1, InvBiasCorr1: 1, InvBiasCorr2: 1})
		if fmt.Sprint(params) != "[1 -2 4 0]" {
			t.Errorf("no gradient, no decay: params = %v", params)
		}
		p.AdamW(params, zeros, m, v, AdamWParams{LR: 0.5, Beta1: 0.9, Beta2: 0.9, Eps: 1e-8, WeightDecay: 0.5, GradScale: 1, InvBiasCorr1: 1, InvBiasCorr2: 1})
		if fmt.Sprint(params) != "[0.75 -1.5 3 0]" {
			t.Errorf("no gradient, decay 0.5, lr 0.5: params = %v, want [0.75 -1.5 3 0]", params)
		}
	})
}

// exactSumSquares returns sum x[i]^2 correctly rounded to float64 (NaN or
// +Inf for such inputs).
func exactSumSquares(x []float32) float64 {
	s := new(big.Float).SetPrec(1024)
	var sq big.Float
	sq.SetPrec(1024)
	for _, v := range x {
		f := float64(v)
		if math.IsNaN(f) {
			return math.NaN()
		}
		if math.IsInf(f, 0) {
			for _, w := range x {
				if w != w {
					return math.NaN()
				}
			}
			return math.Inf(1)
		}
		sq.SetFloat64(f)
		sq.Mul(&sq, &sq)
		s.Add(s, &sq)
	}
	r, _ := s.Float64()
	return r
}

// sumSquaresOK reports whether got is within the documented bound of the
// exact sum want for n elements.
func sumSquaresOK(got, want float64, n int) bool {
	if math.IsNaN(want) || math.IsNaN(got) {
		return math.IsNaN(want) && math.IsNaN(got)
	}
	if math.IsInf(want, 0) || math.IsInf(got, 0) {
		return got == want
	}
	return math.Abs(got-want) <= float64(n+8)*math.Ldexp(1, -53)*want
}

func TestSumSquares(t *testing.T) {
	scales := []float32{1, 1e-20, 3e18, 1.8e38}
	for _, n := range append(vecSizes, 1<<20+5) {
		x0, _ := vecInputs(n)
		for _, sc := range scales {
			xs := make([]float32, n)
			for i, v := range x0 {
				xs[i] = v * sc
			}
			want := exactSumSquares(xs)
			forEachImpl(t, func(t *testing.T, p *Impl) {
				for _, off := range vecOffsets {
					x, cx := vecPadded(xs, off)
					if got := p.SumSquares(x); !sumSquaresOK(got, want, n) {
						t.Fatalf("n=%d scale=%g off=%d: SumSquares = %v, exact %v", n, sc, off, got, want)
					}
					cx(t)
				}
			})
		}
	}
}

// TestSumSquaresSpecial: a NaN anywhere (head, middle, masked tail) gives
// NaN, an infinity +Inf, subnormals square to values far below float32's
// range and still count.
func TestSumSquaresSpecial(t *testing.T) {
	inf := float32(math.Inf(1))
	for _, n := range []int{1, 7, 8, 9, 31, 33, 64, 65, 100} {
		for _, pos := range []int{0, n / 2, n - 1} {
			for _, special := range []float32{float32(math.NaN()), inf, -inf, math.SmallestNonzeroFloat32} {
				x := make([]float32, n)
				x[pos] = special
				want := exactSumSquares(x)
				if special == math.SmallestNonzeroFloat32 && want != math.Ldexp(1, -298) {
					t.Fatalf("exact sum of a subnormal's square = %v", want)
				}
				forEachImpl(t, func(t *testing.T, p *Impl) {
					if got := p.SumSquares(x); !sumSquaresOK(got, want, n) {
						t.Errorf("n=%d x[%d]=%v: SumSquares = %v, want %v", n, pos, special, got, want)
					}
				})
			}
		}
	}
	forEachImpl(t, func(t *testing.T, p *Impl) {
		if got := p.SumSquares(nil); got != 0 {
			t.Errorf("SumSquares(nil) = %v", got)
		}
		x := []float32{math.MaxFloat32, -math.MaxFloat32, 3, -4}
		if got, want := p.SumSquares(x), 2*float64(math.MaxFloat32)*math.MaxFloat32+25; got != want {
			t.Errorf("SumSquares(±MaxFloat32, 3, -4) = %v, want %v (no overflow)", got, want)
		}
	})
}

func TestOptimAllocs(t *testing.T) {
	p0, g, m, v := adamInputs(1000, 5)
	var sink float64
	forEachImpl(t, func(t *testing.T, p *Impl) {
		if a := testing.AllocsPerRun(20, func() { p.AdamW(p0, g, m, v, adamCases[0]) }); a != 0 {
			t.Errorf("AdamW: %v allocations per call", a)
		}
		if a := testing.AllocsPerRun(20, func() { sink += p.SumSquares(g) }); a != 0 {
			t.Errorf("SumSquares: %v allocations per call", a)
		}
	})
	if a := testing.AllocsPerRun(20, func() { AdamW(p0, g, m, v, adamCases[1]); sink += SumSquares(g) }); a != 0 {
		t.Errorf("package AdamW, SumSquares: %v allocations per call", a)
	}
	_ = sink
}

// TestAdamWPanics: unequal lengths and overlapping slices panic before
// any kernel runs, naming the function, the arguments and the numbers.
func TestAdamWPanics(t *testing.T) {
	buf := make([]float32, 64)
	a, b, c, d := buf[0:8], buf[8:16], buf[16:24], buf[24:32]
	cases := []struct {
		name string
		f    func(p *Impl)
		want []string
	}{
		{"short grads", func(p *Impl) { p.AdamW(a, b[:7], c, d, adamCases[0]) },
			[]string{"kernels.AdamW", "len(params) = 8 but len(grads) = 7"}},
		{"short m", func(p *Impl) { p.AdamW(a, b, c[:3], d, adamCases[0]) },
			[]string{"kernels.AdamW", "len(params) = 8 but len(m) = 3"}},
		{"long v", func(p *Impl) { p.AdamW(a, b, c, buf[24:40], adamCases[0]) },
			[]string{"kernels.AdamW", "len(params) = 8 but len(v) = 16"}},
		{"m is v", func(p *Impl) { p.AdamW(a, b, c, c, adamCases[0]) },
			[]string{"kernels.AdamW", "m overlaps v"}},
		{"grads overlap params", func(p *Impl) { p.AdamW(a, buf[7:15], c, d, adamCases[0]) },
			[]string{"kernels.AdamW", "params overlaps grads"}},
		{"params is grads", func(p *Impl) { p.AdamW(a, a, c, d, adamCases[0]) },
			[]string{"kernels.AdamW", "params overlaps grads"}},
	}
	forEachImpl(t, func(t *testing.T, p *Impl) {
		for _, cs := range cases {
			msg := smPanic(func() { cs.f(p) })
			if msg == "" {
				t.Errorf("%s: no panic", cs.name)
				continue
			}
			for _, w := range cs.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%s: panic %q does not contain %q", cs.name, msg, w)
				}
			}
		}
		// Empty slices are fine, even nil or the same.
		if msg := smPanic(func() { p.AdamW(nil, nil, nil, nil, adamCases[0]); p.AdamW(a[:0], a[:0], a[:0], a[:0], adamCases[0]) }); msg != "" {
			t.Errorf("empty: %s", msg)
		}
	})
	if msg := smPanic(func() { AdamW(a, b[:7], c, d, adamCases[0]) }); !strings.Contains(msg, "kernels.AdamW") {
		t.Errorf("package AdamW: panic %q", msg)
	}
}
