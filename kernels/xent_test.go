package kernels

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// Tests of SoftmaxCrossEntropy.
//
// Accuracy model, against a float64 evaluation (xeRef) with exact
// probabilities p and loss L, for scale s:
//
//   - loss: |got - L| <= 2e-6 + 2^-23·|L| for the SIMD implementations
//     (their exponentials and sum are within about 1.3e-6 relative, and
//     log turns that into an absolute error), 1e-12 + 2^-24·|L| for
//     generic (one rounding of the float64 value);
//   - gradient: |got - ref| <= 4e-6·|s|·(p + onehot) + 2^-24·|ref| +
//     2e-38·|s| + 1e-44 for the SIMD implementations (the softmax's
//     relative error on p, the final roundings, the flush to 0 of
//     exponentials below 1.2e-38); generic: 2^-24·|ref| + 1e-15·|s|·(p +
//     onehot) + 1e-44.
//
// Against generic, the SIMD results must be within the sum of both
// tolerances. Special values have exact results (see
// TestSoftmaxCrossEntropySpecial).

// xeScales are the gradient scales of the sweep: the mean over a batch,
// the plain gradient, a negative one.
var xeScales = []float32{1.0 / 48, 1, -0.5}

// xeRef is one row's float64 reference: the loss, the probabilities and
// the gradient.
type xeRef struct {
	loss    float64
	p, grad []float64
}

// xeReference computes the float64 reference of a row with target t; a
// row with NaN, +Inf or only -Inf gets NaN everywhere.
func xeReference(row []float32, t int, scale float32) xeRef {
	n := len(row)
	r := xeRef{p: make([]float64, n), grad: make([]float64, n)}
	mx := math.Inf(-1)
	bad := false
	for _, v := range row {
		if v != v || math.IsInf(float64(v), 1) {
			bad = true
		}
		mx = math.Max(mx, float64(v))
	}
	if bad || math.IsInf(mx, -1) {
		r.loss = math.NaN()
		for j := range r.p {
			r.p[j], r.grad[j] = math.NaN(), math.NaN()
		}
		return r
	}
	var sum float64
	for _, v := range row {
		sum += math.Exp(float64(v) - mx)
	}
	for j, v := range row {
		r.p[j] = math.Exp(float64(v)-mx) / sum
		r.grad[j] = float64(scale) * r.p[j]
	}
	r.grad[t] -= float64(scale)
	r.loss = (mx - float64(row[t])) + math.Log(sum)
	return r
}

// xeLossTol and xeGradTol are the tolerances of the accuracy model; simd
// selects the SIMD ones.
func xeLossTol(loss float64, simd bool) float64 {
	if simd {
		return 2e-6 + float32Eps*math.Abs(loss)
	}
	return 1e-12 + float32Eps/2*math.Abs(loss)
}

func xeGradTol(r xeRef, j, t int, scale float32, simd bool) float64 {
	pj := r.p[j]
	if j == t {
		pj++
	}
	s := math.Abs(float64(scale))
	if simd {
		return 4e-6*s*pj + float32Eps/2*math.Abs(r.grad[j]) + 2e-38*s + 1e-44
	}
	return float32Eps/2*math.Abs(r.grad[j]) + 1e-15*s*pj + 1e-44
}

// xeCheck fails t unless losses and the gradient rows of dl (leading
// dimension ld) match the references within the tolerances (doubled
// plus generic's when against generic, see the file comment).
func xeCheck(t *testing.T, what string, refs []xeRef, targets []int32, scale float32, losses, dl []float32, ld int, simd bool) {
	t.Helper()
	for i, r := range refs {
		if tol := xeLossTol(r.loss, simd); !closeTo(losses[i], float32(r.loss), tol) {
			t.Fatalf("%s: loss of row %d = %v, float64 %v (tol %g)", what, i, losses[i], r.loss, tol)
		}
		tg := int(targets[i])
		for j := range r.grad {
			if tol := xeGradTol(r, j, tg, scale, simd); !closeTo(dl[i*ld+j], float32(r.grad[j]), tol) {
				t.Fatalf("%s: dlogits[%d,%d] = %v, float64 %v (p = %v, target %d, tol %g)", what, i, j, dl[i*ld+j], r.grad[j], r.p[j], tg, tol)
			}
		}
	}
}

// xeTargets returns m targets in [0, n) for a test case: the first row's
// is the row maximum's, the second 0, the third n-1, others random.
func xeTargets(rows [][]float32, n int, seed uint64) []int32 {
	r := newRand(seed)
	tg := make([]int32, len(rows))
	for i := range tg {
		switch i {
		case 0:
			best := 0
			for j, v := range rows[i] {
				if v > rows[i][best] {
					best = j
				}
			}
			tg[i] = int32(best)
		case 1:
			tg[i] = 0
		case 2:
			tg[i] = int32(n - 1)
		default:
			tg[i] = int32(r.IntN(n))
		}
	}
	return tg
}

// TestSoftmaxCrossEntropySweep runs every implementation over every row
// length to 300 and some large ones, 1 and 4 rows, the input
// distributions of the softmax sweep, odd leading dimensions, unaligned
// starts, in place and out of place, and checks losses and gradients
// against the float64 reference and the SIMD results against generic.
func TestSoftmaxCrossEntropySweep(t *testing.T) {
	seed := uint64(1)
	for _, n := range smSweepSizes(t) {
		if n == 0 {
			continue
		}
		for _, m := range []int{1, 4} {
			for di, d := range smDist {
				seed++
				r := newRand(seed)
				rows := make([][]float32, m)
				for i := range rows {
					rows[i] = smInputRow(r, d, n)
				}
				targets := xeTargets(rows, n, seed)
				scale := xeScales[(di+m)%len(xeScales)]
				refs := make([]xeRef, m)
				for i := range refs {
					refs[i] = xeReference(rows[i], int(targets[i]), scale)
				}
				// generic, packed, against the reference.
				x, _ := smLayout(rows, n, n, 0)
				gdl := make([]float32, m*n)
				gloss := make([]float32, m)
				genericImpl.SoftmaxCrossEntropy(m, n, x, n, targets, scale, gdl, n, gloss)
				what := fmt.Sprintf("generic n=%d m=%d %s", n, m, d)
				xeCheck(t, what, refs, targets, scale, gloss, gdl, n, false)

				for _, p := range nonGeneric() {
					for _, lc := range smLayoutsFor(n) {
						if n > 1000 && (lc.xoff%2 == 1 || lc.ldx != lc.ldy) {
							continue // long rows: fewer layouts
						}
						x, checkX := smLayout(rows, n, lc.ldx, lc.xoff)
						dl, ldd, checkD := x, lc.ldx, checkX
						if !lc.inplace {
							dl, checkD = smLayout(make([][]float32, m), n, lc.ldy, lc.yoff)
							ldd = lc.ldy
						}
						losses, checkL := vecPadded(make([]float32, m), lc.yoff)
						p.SoftmaxCrossEntropy(m, n, x, lc.ldx, targets, scale, dl, ldd, losses)
						what := fmt.Sprintf("%s n=%d m=%d %s ldl=%d lddl=%d off=%d,%d inplace=%v", p.Name(), n, m, d, lc.ldx, ldd, lc.xoff, lc.yoff, lc.inplace)
						xeCheck(t, what, refs, targets, scale, losses, dl, ldd, true)
						for i := 0; i < m; i++ {
							if tol := xeLossTol(refs[i].loss, true) + xeLossTol(refs[i].loss, false); !closeTo(losses[i], gloss[i], tol) {
								t.Fatalf("%s: loss of row %d = %v, generic %v", what, i, losses[i], gloss[i])
							}
							for j := 0; j < n; j++ {
								tol := xeGradTol(refs[i], j, int(targets[i]), scale, true) + xeGradTol(refs[i], j, int(targets[i]), scale, false)
								if !closeTo(dl[i*ldd+j], gdl[i*n+j], tol) {
									t.Fatalf("%s: dlogits[%d,%d] = %v, generic %v", what, i, j, dl[i*ldd+j], gdl[i*n+j])
								}
							}
						}
						if !lc.inplace {
							for i := range rows {
								for j := 0; j < n; j++ {
									if !bitsEqual(x[i*lc.ldx+j], rows[i][j]) {
										t.Fatalf("%s: logits[%d,%d] changed", what, i, j)
									}
								}
							}
						}
						for _, c := range []func() string{checkX, checkD} {
							if msg := c(); msg != "" {
								t.Fatalf("%s: %s", what, msg)
							}
						}
						checkL(t)
					}
				}
			}
		}
	}
}

// xeSpecialRow describes a row of TestSoftmaxCrossEntropySpecial.
type xeSpecialRow struct {
	name string
	make func(n int) ([]float32, int) // the row and its target
	// check, if set, tests the exactly defined results of the row.
	check func(loss float32, grad []float32, t int, scale float32) string
}

var xeSpecialRows = []xeSpecialRow{
	{"some -Inf", func(n int) ([]float32, int) {
		x := make([]float32, n)
		for j := range x {
			x[j] = float32(j%7) - 3
			if j%3 == 1 {
				x[j] = smNegInf
			}
		}
		return x, 0
	}, func(loss float32, g []float32, t int, s float32) string {
		for j := range g {
			if j%3 == 1 && g[j] != 0 {
				return fmt.Sprintf("gradient %v at a -Inf logit, want 0", g[j])
			}
		}
		return ""
	}},
	{"target -Inf", func(n int) ([]float32, int) {
		x := make([]float32, n)
		for j := range x {
			x[j] = float32(j % 5)
		}
		x[n-1] = smNegInf
		return x, n - 1
	}, func(loss float32, g []float32, t int, s float32) string {
		if len(g) == 1 { // the row is all -Inf
			if loss == loss || g[0] == g[0] {
				return fmt.Sprintf("loss %v and gradient %v for a row of -Inf, want NaN", loss, g[0])
			}
			return ""
		}
		if !math.IsInf(float64(loss), 1) || g[t] != -s {
			return fmt.Sprintf("loss %v and target gradient %v, want +Inf and %v", loss, g[t], -s)
		}
		return ""
	}},
	{"all -Inf", func(n int) ([]float32, int) { return smFill(n, smNegInf), n / 2 }, nil},
	{"NaN", func(n int) ([]float32, int) {
		x := make([]float32, n)
		x[(n*2)/3] = smNaN
		return x, 0
	}, nil},
	{"NaN payload", func(n int) ([]float32, int) {
		x := make([]float32, n)
		x[n-1] = math.Float32frombits(0x7fc001ff)
		return x, n - 1
	}, nil},
	{"+Inf", func(n int) ([]float32, int) {
		x := make([]float32, n)
		x[n/2] = smInf
		return x, n / 2
	}, nil},
	{"-Inf and +Inf", func(n int) ([]float32, int) {
		x := smFill(n, smNegInf)
		x[0] = smInf
		return x, 0
	}, nil},
	{"extremes", func(n int) ([]float32, int) {
		x := make([]float32, n)
		for j := range x {
			x[j] = -3e38
		}
		x[n/3] = 3e38
		return x, n / 3
	}, func(loss float32, g []float32, t int, s float32) string {
		for j := range g {
			if j != t && g[j] != 0 {
				return fmt.Sprintf("gradient %v at -3e38, want 0", g[j])
			}
		}
		return ""
	}},
	{"subnormals", func(n int) ([]float32, int) {
		x := make([]float32, n)
		for j := range x {
			x[j] = math.Float32frombits(uint32(j + 1))
		}
		return x, n - 1
	}, nil},
}

// TestSoftmaxCrossEntropySpecial: rows with -Inf (probability exactly 0;
// a -Inf target gives loss +Inf and gradient -scale there), only -Inf,
// NaN or +Inf (NaN loss and gradients), extremes and subnormals, each
// between ordinary rows, at every length that puts the special entries in
// a vector body or tail; every implementation against the float64
// reference and the exact results.
func TestSoftmaxCrossEntropySpecial(t *testing.T) {
	const scale = 0.25
	for _, n := range []int{1, 2, 3, 5, 8, 15, 16, 17, 31, 33, 64, 65, 100} {
		for _, sr := range xeSpecialRows {
			r := newRand(uint64(n))
			rows := [][]float32{smInputRow(r, "uniform10", n), nil, smInputRow(r, "wide", n)}
			var tsp int
			rows[1], tsp = sr.make(n)
			targets := []int32{int32(r.IntN(n)), int32(tsp), int32(n - 1)}
			refs := make([]xeRef, len(rows))
			for i := range rows {
				refs[i] = xeReference(rows[i], int(targets[i]), scale)
			}
			forEachImpl(t, func(t *testing.T, p *Impl) {
				for _, inplace := range []bool{false, true} {
					x, _ := smLayout(rows, n, n+1, 1)
					dl, ld := x, n+1
					if !inplace {
						dl, ld = make([]float32, 3*n), n
					}
					losses := make([]float32, 3)
					p.SoftmaxCrossEntropy(3, n, x, n+1, targets, scale, dl, ld, losses)
					what := fmt.Sprintf("%s n=%d %s inplace=%v", p.Name(), n, sr.name, inplace)
					xeCheck(t, what, refs, targets, scale, losses, dl, ld, p != genericImpl)
					if sr.check != nil {
						if msg := sr.check(losses[1], dl[ld:ld+n], tsp, scale); msg != "" {
							t.Fatalf("%s: %s", what, msg)
						}
					}
				}
			})
		}
	}
}

// TestSoftmaxCrossEntropyGradient: the gradient with scale s is s times
// the derivative of the loss, checked by central differences in float64
// on generic's loss (which is accurate to about 1e-7).
func TestSoftmaxCrossEntropyGradient(t *testing.T) {
	const n = 9
	x := []float32{0.5, -1, 2, 0.25, -3, 1, 0, 1.5, -0.5}
	forEachImpl(t, func(t *testing.T, p *Impl) {
		for tg := 0; tg < n; tg++ {
			targets := []int32{int32(tg)}
			grad := make([]float32, n)
			loss := make([]float32, 1)
			p.SoftmaxCrossEntropy(1, n, x, n, targets, 2, grad, n, loss)
			for j := 0; j < n; j++ {
				const h = 1.0 / 64
				xp := append([]float32(nil), x...)
				xm := append([]float32(nil), x...)
				xp[j] += h
				xm[j] -= h
				lp := xeReference(xp, tg, 1).loss
				lm := xeReference(xm, tg, 1).loss
				fd := 2 * (lp - lm) / (2 * h)
				if math.Abs(float64(grad[j])-fd) > 2e-3*math.Abs(fd)+1e-5 {
					t.Fatalf("target %d: dlogits[%d] = %v, finite difference %v", tg, j, grad[j], fd)
				}
			}
		}
	})
}

func TestSoftmaxCrossEntropyAllocs(t *testing.T) {
	const m, n = 4, 300
	x := randSlice(newRand(8), m*n)
	dl := make([]float32, m*n)
	losses := make([]float32, m)
	targets := []int32{0, 7, 299, 150}
	forEachImpl(t, func(t *testing.T, p *Impl) {
		if a := testing.AllocsPerRun(20, func() { p.SoftmaxCrossEntropy(m, n, x, n, targets, 0.25, dl, n, losses) }); a != 0 {
			t.Errorf("SoftmaxCrossEntropy: %v allocations per call", a)
		}
	})
	if a := testing.AllocsPerRun(20, func() { SoftmaxCrossEntropy(m, n, x, n, targets, 0.25, dl, n, losses) }); a != 0 {
		t.Errorf("package SoftmaxCrossEntropy: %v allocations per call", a)
	}
}

// TestSoftmaxCrossEntropyPanics: bad shapes, targets and overlaps panic
// before any kernel runs, naming the function, the argument (or row) and
// the numbers; nothing is written.
func TestSoftmaxCrossEntropyPanics(t *testing.T) {
	buf := make([]float32, 64)
	x := make([]float32, 12)
	dl := make([]float32, 12)
	ls := make([]float32, 4)
	tg := []int32{0, 1, 2}
	huge := math.MaxInt / 2
	cases := []struct {
		name string
		f    func(p *Impl)
		want []string
	}{
		{"negative m", func(p *Impl) { p.SoftmaxCrossEntropy(-1, 4, x, 4, tg, 1, dl, 4, ls) },
			[]string{"kernels.SoftmaxCrossEntropy", "m = -1"}},
		{"negative n", func(p *Impl) { p.SoftmaxCrossEntropy(3, -4, x, 4, tg, 1, dl, 4, ls) },
			[]string{"kernels.SoftmaxCrossEntropy", "n = -4"}},
		{"short logits", func(p *Impl) { p.SoftmaxCrossEntropy(3, 4, x[:11], 4, tg, 1, dl, 4, ls) },
			[]string{"kernels.SoftmaxCrossEntropy", "len(logits) = 11", "want >= 12"}},
		{"ldl < n", func(p *Impl) { p.SoftmaxCrossEntropy(3, 4, x, 3, tg, 1, dl, 4, ls) },
			[]string{"kernels.SoftmaxCrossEntropy", "ldlogits = 3", "row length 4"}},
		{"short dlogits", func(p *Impl) { p.SoftmaxCrossEntropy(2, 4, x, 4, tg, 1, dl[:8], 5, ls) },
			[]string{"kernels.SoftmaxCrossEntropy", "len(dlogits) = 8", "want >= 9", "lddlogits = 5"}},
		{"huge m and ld", func(p *Impl) { p.SoftmaxCrossEntropy(huge, 4, x, huge, tg, 1, dl, 4, ls) },
			[]string{"kernels.SoftmaxCrossEntropy", "len(logits) = 12", "more than the address space"}},
		{"short targets", func(p *Impl) { p.SoftmaxCrossEntropy(3, 4, x, 4, tg[:2], 1, dl, 4, ls) },
			[]string{"kernels.SoftmaxCrossEntropy", "len(targets) = 2", "m = 3"}},
		{"short losses", func(p *Impl) { p.SoftmaxCrossEntropy(3, 4, x, 4, tg, 1, dl, 4, ls[:2]) },
			[]string{"kernels.SoftmaxCrossEntropy", "len(losses) = 2", "want >= 3"}},
		{"target too large", func(p *Impl) { p.SoftmaxCrossEntropy(3, 4, x, 4, []int32{0, 1, 4}, 1, dl, 4, ls) },
			[]string{"kernels.SoftmaxCrossEntropy", "targets[2] = 4", "n = 4", "row 2"}},
		{"negative target", func(p *Impl) { p.SoftmaxCrossEntropy(3, 4, x, 4, []int32{0, -1, 2}, 1, dl, 4, ls) },
			[]string{"kernels.SoftmaxCrossEntropy", "targets[1] = -1", "row 1"}},
		{"n = 0", func(p *Impl) { p.SoftmaxCrossEntropy(3, 0, x, 4, tg, 1, dl, 4, ls) },
			[]string{"kernels.SoftmaxCrossEntropy", "targets[0] = 0", "n = 0"}},
		{"dlogits overlaps logits", func(p *Impl) { p.SoftmaxCrossEntropy(3, 4, buf, 4, tg, 1, buf[2:], 4, ls) },
			[]string{"kernels.SoftmaxCrossEntropy", "dlogits overlaps logits"}},
		{"in place, other ld", func(p *Impl) { p.SoftmaxCrossEntropy(3, 4, buf, 4, tg, 1, buf, 5, ls) },
			[]string{"kernels.SoftmaxCrossEntropy", "dlogits overlaps logits"}},
		{"losses in logits", func(p *Impl) { p.SoftmaxCrossEntropy(3, 4, buf, 4, tg, 1, dl, 4, buf[11:]) },
			[]string{"kernels.SoftmaxCrossEntropy", "losses overlaps logits"}},
		{"losses in dlogits", func(p *Impl) { p.SoftmaxCrossEntropy(3, 4, x, 4, tg, 1, buf, 4, buf[4:]) },
			[]string{"kernels.SoftmaxCrossEntropy", "losses overlaps dlogits"}},
	}
	forEachImpl(t, func(t *testing.T, p *Impl) {
		for _, c := range cases {
			for i := range ls {
				ls[i] = 7
			}
			msg := smPanic(func() { c.f(p) })
			if msg == "" {
				t.Errorf("%s: no panic", c.name)
				continue
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%s: panic %q does not contain %q", c.name, msg, w)
				}
			}
			for i, v := range ls {
				if v != 7 {
					t.Errorf("%s: losses[%d] written before the panic", c.name, i)
				}
			}
		}
		// Empty shapes are fine, with nil slices.
		if msg := smPanic(func() { p.SoftmaxCrossEntropy(0, 5, nil, 5, nil, 1, nil, 5, nil) }); msg != "" {
			t.Errorf("empty: %s", msg)
		}
	})
	if msg := smPanic(func() { SoftmaxCrossEntropy(3, 4, x, 4, []int32{9, 0, 0}, 1, dl, 4, ls) }); !strings.Contains(msg, "targets[0] = 9") {
		t.Errorf("package SoftmaxCrossEntropy: panic %q", msg)
	}
}
