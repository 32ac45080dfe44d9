package kernels

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

// Accuracy model of the GELU tests.
//
// The reference is float64 and independent of the kernels' formula: with
// u = √(2/π)(x + 0.044715x³), 1 + tanh(u) is 1 + math.Tanh(u) for u >= -3
// and 2e^(2u)/(1 + e^(2u)) below (no cancellation), gelu = 0.5x(1 + tanh u)
// and gelu' = 0.5(1 + tanh u) + 0.5x·c(1 + 3ax²)/cosh²(u).
//
//   - generic against float64: relative error <= geluTolGeneric = 2^-23
//     (it rounds a float64 result once, and its product with dy once
//     more), or absolute <= 2^-149 among subnormals.
//   - SIMD against float64: relative error <= geluRelSIMD(x) = 2e-6 +
//     2e-7·|2u| (|2u| capped at 87.3), the bound documented in gelu.go:
//     the exp's polynomial (5.2e-7), roundings, and the float32 rounding
//     of the exponential's argument 2u, which grows with it. Where the
//     reference is below geluTiny = 2e-37 in magnitude (x below -9.99,
//     where the exponential is flushed) the result may be any value of
//     the same sign (or a zero) within geluTiny; for gelu' the same holds
//     with geluTinyD = 4e-36. For gelu' the relative bound applies
//     to the sum of the magnitudes of its two terms, σ + |x·σ(1-σ)·h|,
//     since they cancel near x = -0.75.
//   - SIMD against generic: the two added.
//   - The tanh implied by the SIMD GELU, 2·gelu(x)/x - 1, is within
//     geluTanhAbs = 5e-7 of math.Tanh(u), and within geluTanhRel = 3.5e-6
//     relatively where |tanh u| >= 1/8 (measured over every float32 of [-10, 10]: 4.1e-7
//     and 2.85e-6).
const (
	geluTolGeneric = 1.0 / (1 << 23)
	geluTiny       = 2e-37
	geluTinyD      = 4e-36
	geluTanhAbs    = 5e-7
	geluTanhRel    = 3.5e-6
	geluC64        = 0.7978845608028654
	geluA64        = 0.044715
)

// geluRef returns the float64 gelu(x), gelu'(x), tanh(u), and the sum of
// the magnitudes of gelu'(x)'s two terms.
func geluRef(x float64) (y, d, th, dmag float64) {
	switch {
	case math.IsNaN(x):
		return x, x, x, x
	case math.IsInf(x, 1):
		return x, 1, 1, 1
	case math.IsInf(x, -1):
		return math.Copysign(0, -1), 0, -1, 0
	}
	u := geluC64 * (x + geluA64*x*x*x)
	var opt float64
	if u >= -3 {
		opt = 1 + math.Tanh(u)
	} else {
		e := math.Exp(2 * u)
		opt = 2 * e / (1 + e)
	}
	y = 0.5 * x * opt
	ch := math.Cosh(u)
	t2 := 0.5 * x / (ch * ch) * geluC64 * (1 + 3*geluA64*x*x)
	return y, 0.5*opt + t2, math.Tanh(u), 0.5*opt + math.Abs(t2)
}

// geluRelSIMD is the SIMD relative tolerance at x.
func geluRelSIMD(x float64) float64 {
	u2 := math.Abs(2 * geluC64 * (x + geluA64*x*x*x))
	if !(u2 < 87.3) {
		u2 = 87.3
	}
	return 2e-6 + 2e-7*u2
}

// geluRel is p's relative tolerance at x against float64.
func geluRel(p *Impl, x float64) float64 {
	if p == genericImpl {
		return geluTolGeneric
	}
	return geluRelSIMD(x)
}

// geluCheck reports whether got is within rel·mag (or the tiny-value
// allowance) of want; NaN must match NaN, infinities exactly.
func geluCheck(got float32, want, mag, rel float64, simd bool, tiny float64) bool {
	return geluCheckFloor(got, want, mag, rel, simd, tiny, 0x1p-149)
}

// geluCheckFloor is geluCheck with an absolute floor other than 2^-149
// (for gelu'·dy, where gelu' may be subnormal: 2^-149·(1 + |dy|)).
func geluCheckFloor(got float32, want, mag, rel float64, simd bool, tiny, floor float64) bool {
	g := float64(got)
	if math.IsNaN(want) || math.IsNaN(g) {
		return math.IsNaN(want) && math.IsNaN(g)
	}
	if math.IsInf(want, 0) || math.IsInf(g, 0) {
		return g == want
	}
	err := math.Abs(g - want)
	if err <= rel*mag || err <= floor {
		return true
	}
	return simd && math.Abs(want) < tiny && err <= tiny && g*want >= 0
}

// geluSweep calls f with successive chunks of float32 inputs: x and -x
// for every stride-th bit pattern of [0, 10] (every float32 of [-10, 10]
// with SIMDGPT_GELU_DENSE=1, every 151st normally, every 4099th under
// -short), then a sample of larger values, to the clamps and far past
// them.
func geluSweep(t *testing.T, f func(xs []float32)) {
	stride := uint32(151)
	if testing.Short() {
		stride = 4099
	}
	if os.Getenv("SIMDGPT_GELU_DENSE") == "1" {
		stride = 1
	}
	const chunk = 1 << 20
	xs := make([]float32, 0, chunk)
	add := func(v float32) {
		xs = append(xs, v, -v)
		if len(xs) >= chunk {
			f(xs)
			xs = xs[:0]
		}
	}
	for b := uint32(0); b <= math.Float32bits(10); b += stride {
		add(math.Float32frombits(b))
	}
	for b := math.Float32bits(10); b < math.Float32bits(math.MaxFloat32); b += 1 << 14 {
		add(math.Float32frombits(b))
	}
	if len(xs) > 0 {
		f(xs)
	}
}

// geluStats are the largest errors TestGELUAccuracy met.
type geluStats struct {
	n                  int
	absY, absD         float64 // absolute errors
	worstY, worstD     float64 // relative errors as fractions of the bound
	worstYAt, worstDAt float32
	thAbs, thRel       float64 // the implied tanh's
}

// TestGELUAccuracy measures GELU, GELUBackward and the implied tanh of
// every implementation against float64 over a sweep of float32 inputs,
// checks the bounds of the accuracy model above and logs the maxima.
func TestGELUAccuracy(t *testing.T) {
	impls := Implementations()
	stats := make([]geluStats, len(impls))
	var ones, y, d []float32
	var refY, refD, refTh, refMag []float64
	geluSweep(t, func(xs []float32) {
		n := len(xs)
		if len(ones) < n {
			ones, y, d = make([]float32, n), make([]float32, n), make([]float32, n)
			for i := range ones {
				ones[i] = 1
			}
			refY, refD, refTh, refMag = make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
		}
		for i, xf := range xs {
			refY[i], refD[i], refTh[i], refMag[i] = geluRef(float64(xf))
		}
		for pi, p := range impls {
			st := &stats[pi]
			st.n += n
			p.GELU(y[:n], xs)
			p.GELUBackward(d[:n], ones[:n], xs)
			simd := p != genericImpl
			for i, xf := range xs {
				x := float64(xf)
				ry, rd, rth, dmag := refY[i], refD[i], refTh[i], refMag[i]
				rel := geluRel(p, x)
				if !geluCheck(y[i], ry, math.Abs(ry), rel, simd, geluTiny) {
					t.Fatalf("%s: gelu(%v) = %v, float64 %v (relative tolerance %.3g)", p.Name(), xf, y[i], ry, rel)
				}
				if !geluCheck(d[i], rd, dmag, rel, simd, geluTinyD) {
					t.Fatalf("%s: gelu'(%v) = %v, float64 %v (tolerance %.3g of %.3g)", p.Name(), xf, d[i], rd, rel, dmag)
				}
				ey, ed := math.Abs(float64(y[i])-ry), math.Abs(float64(d[i])-rd)
				st.absY, st.absD = math.Max(st.absY, ey), math.Max(st.absD, ed)
				if math.Abs(ry) >= geluTiny && ey/math.Abs(ry)/rel > st.worstY {
					st.worstY, st.worstYAt = ey/math.Abs(ry)/rel, xf
				}
				if dmag >= geluTinyD && ed/dmag/rel > st.worstD {
					st.worstD, st.worstDAt = ed/dmag/rel, xf
				}
				if simd && math.Abs(x) > 1e-30 {
					// The tanh implied: 2·gelu(x)/x - 1.
					e := math.Abs(2*float64(y[i])/x - 1 - rth)
					st.thAbs = math.Max(st.thAbs, e)
					if math.Abs(rth) >= 0.125 {
						st.thRel = math.Max(st.thRel, e/math.Abs(rth))
					}
				}
			}
		}
	})
	for pi, p := range impls {
		st := stats[pi]
		if st.thAbs > geluTanhAbs || st.thRel > geluTanhRel {
			t.Errorf("%s: implied tanh: absolute error %.3g (bound %g), relative %.3g (bound %g)", p.Name(), st.thAbs, geluTanhAbs, st.thRel, geluTanhRel)
		}
		t.Logf("%s over %d inputs: gelu max abs error %.3g, max relative error %.2f of the bound (x = %v); gelu' %.3g, %.2f (x = %v); implied tanh abs %.3g, rel %.3g",
			p.Name(), st.n, st.absY, st.worstY, st.worstYAt, st.absD, st.worstD, st.worstDAt, st.thAbs, st.thRel)
	}
}

// geluSizes crosses every unroll and tail boundary of every vector width
// (AVX2 8×2, AVX-512 16×2, NEON 4×2 and its scalar-padded tail).
var geluSizes = func() []int {
	var s []int
	for n := 0; n <= 140; n++ {
		s = append(s, n)
	}
	return append(s, 255, 256, 257, 1000, 4097)
}()

// geluInputs returns n inputs spread over [-12, 12] with some special
// values when specials is set.
func geluInputs(n int, seed uint64) []float32 {
	r := newRand(seed)
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.Float64()*24 - 12)
	}
	return x
}

// geluCheckAll compares the outputs of p with generic's and with float64.
// d are derivative outputs (dy = 1 scaled by dys, nil for 1).
func geluCheckOut(t *testing.T, p *Impl, what string, x, got []float32, deriv bool, dys []float32) {
	t.Helper()
	want := make([]float32, len(x))
	if deriv {
		dy := dys
		if dy == nil {
			dy = make([]float32, len(x))
			for i := range dy {
				dy[i] = 1
			}
		}
		genericImpl.GELUBackward(want, dy, x)
	} else {
		genericImpl.GELU(want, x)
	}
	for i, xf := range x {
		ry, rd, _, dmag := geluRef(float64(xf))
		ref, mag := ry, math.Abs(ry)
		if deriv {
			ref, mag = rd, dmag
			if dys != nil {
				s := math.Abs(float64(dys[i]))
				ref, mag = ref*float64(dys[i]), mag*s
			}
		}
		if math.Abs(ref) > math.MaxFloat32 && math.IsInf(float64(got[i]), 0) && (got[i] > 0) == (ref > 0) {
			continue // gelu'·dy overflows float32
		}
		rel, tiny, floor := geluRel(p, float64(xf)), geluTiny, 0x1p-149
		if deriv {
			tiny = geluTinyD
			if dys != nil {
				dy := math.Abs(float64(dys[i]))
				if math.IsInf(dy, 1) && (got[i] != got[i] || math.IsInf(float64(got[i]), 0)) {
					// Inf times a gelu' that is, or was flushed to, 0.
					continue
				}
				tiny *= dy
				floor *= 1 + dy
			}
		}
		if !geluCheckFloor(got[i], ref, mag, rel+geluTolGeneric, p != genericImpl, tiny, floor) {
			t.Fatalf("%s %s n=%d: element %d (x = %v) = %v, float64 %v", p.Name(), what, len(x), i, xf, got[i], ref)
		}
		if !geluCheckFloor(got[i], float64(want[i]), mag, rel+2*geluTolGeneric, p != genericImpl, tiny, 2*floor) {
			t.Fatalf("%s %s n=%d: element %d (x = %v) = %v, generic %v", p.Name(), what, len(x), i, xf, got[i], want[i])
		}
	}
}

// TestGELUSizes runs GELU and GELUBackward of every implementation over
// every length to 140 and some larger, at unaligned starts, in place and
// out of place, with canaries around every slice.
func TestGELUSizes(t *testing.T) {
	for _, n := range geluSizes {
		x0 := geluInputs(n, uint64(n))
		dy0 := randSlice(newRand(uint64(n)+99), n)
		for _, p := range Implementations() {
			for _, off := range vecOffsets {
				x, cx := vecPadded(x0, off)
				dst, cd := vecPadded(make([]float32, n), (off+3)%8)
				p.GELU(dst, x)
				geluCheckOut(t, p, fmt.Sprintf("GELU off=%d", off), x0, dst, false, nil)
				p.GELU(x, x) // in place
				for i := range x {
					if !bitsEqual(x[i], dst[i]) {
						t.Fatalf("%s GELU in place n=%d: element %d = %v, out of place %v", p.Name(), n, i, x[i], dst[i])
					}
				}
				cx(t)
				cd(t)

				x, cx = vecPadded(x0, (off+1)%8)
				dy, cy := vecPadded(dy0, off)
				dx, cdx := vecPadded(make([]float32, n), (off+5)%8)
				p.GELUBackward(dx, dy, x)
				geluCheckOut(t, p, fmt.Sprintf("GELUBackward off=%d", off), x0, dx, true, dy0)
				p.GELUBackward(dy, dy, x) // in place: dx is dy
				for i := range dy {
					if !bitsEqual(dy[i], dx[i]) {
						t.Fatalf("%s GELUBackward in place n=%d: element %d = %v, out of place %v", p.Name(), n, i, dy[i], dx[i])
					}
					if !bitsEqual(x[i], x0[i]) {
						t.Fatalf("%s GELUBackward n=%d changed x[%d]", p.Name(), n, i)
					}
				}
				cx(t)
				cy(t)
				cdx(t)
			}
		}
	}
}

// TestBiasGELU runs BiasGELU of every implementation over 1, 3 and 5 rows
// of every length to 140 and some larger, with odd leading dimensions,
// unaligned starts, in place and out of place; x must hold x + bias
// (bitwise: one float32 addition) and y gelu of it as GELU computes it
// (bitwise, the same kernel), and nothing outside the rows may change.
func TestBiasGELU(t *testing.T) {
	sizes := geluSizes
	if testing.Short() {
		sizes = []int{0, 1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 48, 49, 63, 64, 65, 100, 257}
	}
	for _, n := range sizes {
		for _, m := range []int{1, 3, 5} {
			x0 := geluInputs(m*(n+13), uint64(n*7+m))
			bias := geluInputs(n+2, uint64(n))
			for _, p := range Implementations() {
				for _, ld := range [][2]int{{n, n}, {n + 1, n + 13}, {n + 13, n + 3}} {
					for _, inplace := range []bool{false, true} {
						ldx, ldy := ld[0], ld[1]
						if inplace {
							ldy = ldx
						}
						rows := make([][]float32, m)
						for i := range rows {
							rows[i] = x0[i*(n+13) : i*(n+13)+n]
						}
						off := (n + m) % 4
						x, xCheck := smLayout(rows, n, ldx, off)
						y, yCheck := x, xCheck
						if !inplace {
							y, yCheck = smLayout(make([][]float32, m), n, ldy, 3-off)
						}
						b := offsetCopy(bias[:n], (off+1)%4)
						p.BiasGELU(m, n, x, ldx, b, y, ldy)
						name := fmtShape("impl", p.Name(), "m", m, "n", n, "ldx", ldx, "ldy", ldy, "inplace", inplace)
						if bad := yCheck(); bad != "" {
							t.Fatalf("%s: y: %s", name, bad)
						}
						if bad := xCheck(); bad != "" {
							t.Fatalf("%s: x: %s", name, bad)
						}
						for i := range rows {
							pre := make([]float32, n)
							for j := range pre {
								pre[j] = rows[i][j] + bias[j]
							}
							want := make([]float32, n)
							p.GELU(want, pre)
							gy := smRow(y, i, n, ldy)
							if !inplace {
								gx := smRow(x, i, n, ldx)
								for j := range pre {
									if !bitsEqual(gx[j], pre[j]) {
										t.Fatalf("%s: x[%d,%d] = %v, want x + bias = %v", name, i, j, gx[j], pre[j])
									}
								}
							}
							for j := range want {
								if !bitsEqual(gy[j], want[j]) {
									t.Fatalf("%s: y[%d,%d] = %v, GELU of x + bias %v", name, i, j, gy[j], want[j])
								}
							}
							geluCheckOut(t, p, name, pre, gy, false, nil)
						}
					}
				}
			}
		}
	}
}

// geluSpecialValues are inputs with defined results, in the order of
// geluSpecialWant.
var geluSpecialValues = []float32{
	float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
	0, float32(math.Copysign(0, -1)), math.MaxFloat32, -math.MaxFloat32,
	20, -20, 1e30, -1e30, 1e-40, -1e-40, 1e-30, 1e13, -1e13,
}

// TestGELUSpecial places each special value at every position of vectors
// of several lengths (first, middle and tail lanes, full and masked
// vectors) among ordinary values and checks its defined result:
//
//	x        gelu(x)   gelu'(x)
//	NaN      NaN       NaN
//	+Inf     +Inf      1
//	-Inf     -0        0 (either sign)
//	±0       ±0        0.5
//	x >= 20  x         1
//	x <= -20 -0        0 (either sign)
//
// and for the tiny values a result within the accuracy model.
func TestGELUSpecial(t *testing.T) {
	for _, n := range []int{1, 3, 4, 5, 8, 9, 16, 17, 31, 33, 47, 70} {
		for pos := 0; pos < n; pos++ {
			if n > 20 && pos%5 != 0 && pos != n-1 {
				continue
			}
			for _, sv := range geluSpecialValues {
				x := geluInputs(n, uint64(n*100+pos))
				x[pos] = sv
				dy := make([]float32, n)
				for i := range dy {
					dy[i] = 1
				}
				for _, p := range Implementations() {
					y, d := make([]float32, n), make([]float32, n)
					p.GELU(y, x)
					p.GELUBackward(d, dy, x)
					geluCheckOut(t, p, "GELU special", x, y, false, nil)
					geluCheckOut(t, p, "GELUBackward special", x, d, true, nil)
					v, g, dd := float64(sv), y[pos], d[pos]
					bad := ""
					switch {
					case math.IsNaN(v):
						if g == g || dd == dd {
							bad = "want NaN, NaN"
						}
					case v >= 20:
						if g != sv || dd != 1 {
							bad = "want x, 1"
						}
					case v <= -20:
						if !bitsEqual(g, float32(math.Copysign(0, -1))) || dd != 0 {
							bad = "want -0, 0"
						}
					case v == 0:
						if !bitsEqual(g, sv) || dd != 0.5 {
							bad = "want x (±0), 0.5"
						}
					}
					if bad != "" {
						t.Fatalf("%s n=%d pos=%d: gelu(%v) = %v, gelu' = %v: %s", p.Name(), n, pos, sv, g, dd, bad)
					}
				}
			}
		}
	}
}

func TestGELUEmpty(t *testing.T) {
	forEachImpl(t, func(t *testing.T, p *Impl) {
		p.GELU(nil, nil)
		p.GELUBackward(nil, nil, nil)
		p.BiasGELU(0, 5, nil, 5, make([]float32, 5), nil, 5)
		p.BiasGELU(3, 0, nil, 0, nil, nil, 0)
		// The unchecked kernels are safe on empty slices too.
		p.set.GELU([]float32{}, []float32{})
		p.set.GELUBackward([]float32{}, []float32{}, []float32{})
	})
}

func TestGELUPanics(t *testing.T) {
	buf := make([]float32, 100)
	x3, x4 := make([]float32, 3), make([]float32, 4)
	huge := math.MaxInt / 2
	cases := []struct {
		name string
		f    func(p *Impl)
		msg  string
	}{
		{"GELU len", func(p *Impl) { p.GELU(x3, x4) }, "kernels.GELU: len(dst) = 3 but len(x) = 4"},
		{"GELU overlap", func(p *Impl) { p.GELU(buf[1:11], buf[0:10]) }, "kernels.GELU: dst overlaps x"},
		{"GELUBackward len dy", func(p *Impl) { p.GELUBackward(x3, x4, x3) }, "kernels.GELUBackward: len(dx) = 3 but len(dy) = 4"},
		{"GELUBackward len x", func(p *Impl) { p.GELUBackward(x3, x3, x4) }, "kernels.GELUBackward: len(dx) = 3 but len(x) = 4"},
		{"GELUBackward dx overlaps dy", func(p *Impl) { p.GELUBackward(buf[2:12], buf[0:10], buf[20:30]) }, "kernels.GELUBackward: dx overlaps dy"},
		{"GELUBackward dx is x", func(p *Impl) { p.GELUBackward(buf[0:10], buf[20:30], buf[0:10]) }, "kernels.GELUBackward: dx overlaps x"},
		{"BiasGELU m", func(p *Impl) { p.BiasGELU(-1, 2, buf, 2, buf, buf, 2) }, "kernels.BiasGELU: m = -1, must be >= 0"},
		{"BiasGELU n", func(p *Impl) { p.BiasGELU(1, -2, buf, 2, buf, buf, 2) }, "kernels.BiasGELU: n = -2, must be >= 0"},
		{"BiasGELU ldx", func(p *Impl) { p.BiasGELU(2, 5, buf, 4, buf[:5], buf[50:], 5) }, "kernels.BiasGELU: ldx = 4 is smaller than the row length 5"},
		{"BiasGELU x short", func(p *Impl) { p.BiasGELU(3, 5, buf[:14], 5, x4, buf[50:], 5) }, "kernels.BiasGELU: len(x) = 14, want >= 15"},
		{"BiasGELU y short", func(p *Impl) { p.BiasGELU(3, 5, buf[:15], 5, buf[80:85], buf[50:60], 5) }, "kernels.BiasGELU: len(y) = 10, want >= 15"},
		{"BiasGELU bias short", func(p *Impl) { p.BiasGELU(3, 5, buf[:15], 5, x4, buf[50:65], 5) }, "kernels.BiasGELU: len(bias) = 4, want >= 5"},
		{"BiasGELU huge ld", func(p *Impl) { p.BiasGELU(3, 5, buf, huge, buf[90:95], buf[50:], 5) }, "more than the address space"},
		{"BiasGELU huge m", func(p *Impl) { p.BiasGELU(huge, 5, buf, 5, buf[90:95], buf[50:], 5) }, "kernels.BiasGELU: len(x) = 100"},
		{"BiasGELU y overlaps x", func(p *Impl) { p.BiasGELU(2, 5, buf[:10], 5, buf[90:95], buf[5:15], 5) }, "kernels.BiasGELU: y overlaps x"},
		{"BiasGELU y is x, other ld", func(p *Impl) { p.BiasGELU(2, 5, buf[:12], 6, buf[90:95], buf[:12], 7) }, "kernels.BiasGELU: y overlaps x"},
		{"BiasGELU bias in x", func(p *Impl) { p.BiasGELU(2, 5, buf[:10], 5, buf[3:8], buf[50:60], 5) }, "kernels.BiasGELU: x overlaps bias"},
		{"BiasGELU bias in y", func(p *Impl) { p.BiasGELU(2, 5, buf[:10], 5, buf[52:57], buf[50:60], 5) }, "kernels.BiasGELU: y overlaps bias"},
	}
	forEachImpl(t, func(t *testing.T, p *Impl) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				defer func() {
					r := recover()
					if r == nil {
						t.Fatalf("no panic")
					}
					if s := fmt.Sprint(r); !strings.Contains(s, c.msg) {
						t.Fatalf("panic %q, want it to contain %q", s, c.msg)
					}
				}()
				c.f(p)
			})
		}
	})
	// The package-level functions check too.
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "kernels.GELU") {
			t.Fatalf("GELU: panic %v, want one naming kernels.GELU", r)
		}
	}()
	GELU(x3, x4)
}

func TestGELUAllocs(t *testing.T) {
	x := geluInputs(1000, 1)
	d, dy := make([]float32, 1000), make([]float32, 1000)
	bias := geluInputs(100, 2)
	forEachImpl(t, func(t *testing.T, p *Impl) {
		for name, f := range map[string]func(){
			"GELU":         func() { p.GELU(d, x) },
			"GELUBackward": func() { p.GELUBackward(d, dy, x) },
			"BiasGELU":     func() { p.BiasGELU(9, 100, x, 110, bias, d, 100) },
			"BiasGELUTail": func() { p.BiasGELU(3, 99, x, 101, bias, d, 99) },
			"GELUTail":     func() { p.GELU(d[:7], x[:7]) },
		} {
			if a := testing.AllocsPerRun(20, f); a != 0 {
				t.Errorf("%s: %v allocations per call, want 0", name, a)
			}
		}
	})
}
