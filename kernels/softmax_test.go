package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// Accuracy model of the softmax tests.
//
// Forward. The error of an output y against a float64 reference w
// (computed from the same float32 inputs, with the documented special
// values) is relative, |y - w| / w, for w >= smTiny = 1e-30. Below that the
// kernels may flush: the SIMD exponential is 0 for x - max < -87.3 (outputs
// below 1.2e-38/n), generic produces subnormals. Such an output must be in
// [0, w + smTiny] and within smTiny of w absolutely. A reference of exactly
// 0 (an entry of -Inf, a row of -Inf, or underflow in float64) must give
// exactly +0, and a NaN reference (a row holding NaN or +Inf) a NaN.
//
//   - generic vs float64: relative error <= smTolGeneric = 2.5e-7: its
//     exponentials and sum are float64, then rounded twice to float32
//     (float32(e), then float32(e*(1/sum))), 2^-24 each.
//   - SIMD vs float64: relative error <= smTolSIMD = 2e-6, the documented
//     bound (the measured maximum is logged by TestSoftmaxSweep).
//   - SIMD vs generic: the two bounds added, with the same special kinds.
//   - Every row that is not NaN or all -Inf sums to 1 within
//     1e-5*(1 + n*eps), eps = 2^-23.
//
// Backward. With s = sum_k y_k*dy_k and S1 = sum_k |y_k*dy_k| in float64,
// every dx_j must be within
//
//	|y_j| * (4u*(|dy_j| + |s|) + 2n*u*S1) + 1e-37
//
// of the float64 y_j*(dy_j - s), u = 2^-24: a few roundings of the final
// subtraction and product, plus the worst-case error of a float32 sum of n
// products in any order (generic sums in float64 and needs far less).
const (
	smTiny       = 1e-30
	smTolGeneric = 2.5e-7
	smTolSIMD    = 2e-6
	smUnit       = 1.0 / (1 << 24)
)

// smTol is the forward tolerance of p against float64.
func smTol(p *Impl) float64 {
	if p == genericImpl {
		return smTolGeneric
	}
	return smTolSIMD
}

var (
	smInf    = float32(math.Inf(1))
	smNegInf = float32(math.Inf(-1))
	smNaN    = float32(math.NaN())
)

// smCanary fills the memory around every matrix; a kernel that writes
// outside its rows changes it.
var smCanary = math.Float32frombits(0x7fa0beef)

// smRef64 is the float64 softmax of one row, with the special values of
// the Softmax documentation.
func smRef64(x []float32) []float64 {
	out := make([]float64, len(x))
	mx := math.Inf(-1)
	for _, v := range x {
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 1) {
			for j := range out {
				out[j] = math.NaN()
			}
			return out
		}
		mx = math.Max(mx, f)
	}
	if math.IsInf(mx, -1) {
		return out // all -Inf: all 0
	}
	var sum float64
	for j, v := range x {
		e := math.Exp(float64(v) - mx)
		out[j] = e
		sum += e
	}
	for j := range out {
		out[j] /= sum
	}
	return out
}

// smCompare checks one output value against want and returns its relative
// error (0 where relative error does not apply) and whether it passes.
func smCompare(got float32, want, tol float64) (float64, bool) {
	g := float64(got)
	switch {
	case math.IsNaN(want) || math.IsNaN(g):
		return 0, math.IsNaN(want) && math.IsNaN(g)
	case want == 0:
		return 0, g == 0 && !math.Signbit(g)
	case want < smTiny:
		return 0, g >= 0 && math.Abs(g-want) <= smTiny
	}
	rel := math.Abs(g-want) / want
	return rel, rel <= tol
}

// smCheckRow compares a row of outputs with want; it returns the largest
// relative error and a description of the first failure ("" if none).
func smCheckRow(got []float32, want []float64, tol float64) (float64, string) {
	var worst float64
	for j, w := range want {
		rel, ok := smCompare(got[j], w, tol)
		if !ok {
			return worst, fmt.Sprintf("element %d = %v (bits %#08x), want %v (tolerance %g)", j, got[j], math.Float32bits(got[j]), w, tol)
		}
		worst = math.Max(worst, rel)
	}
	if bad := smCheckSum(got, want); bad != "" {
		return worst, bad
	}
	return worst, ""
}

// smCheckSum checks that a finite, not fully masked row sums to 1.
func smCheckSum(got []float32, want []float64) string {
	if len(want) == 0 || math.IsNaN(want[0]) {
		return ""
	}
	var sw, sg float64
	for j, w := range want {
		sw += w
		sg += float64(got[j])
	}
	if sw == 0 {
		return "" // all -Inf; every element was checked to be 0
	}
	if tol := 1e-5 * (1 + float64(len(got))*2*smUnit); math.Abs(sg-1) > tol {
		return fmt.Sprintf("row sums to %v, want 1 within %g", sg, tol)
	}
	return ""
}

// smLayout places rows (each of length n; nil for an output row, filled
// with -7) as a matrix with leading dimension ld, starting off elements into a fresh buffer whose every
// other element is smCanary. It returns the matrix and a function that
// reports whether the canaries are intact.
func smLayout(rows [][]float32, n, ld, off int) ([]float32, func() string) {
	size := 0
	if len(rows) > 0 && n > 0 {
		size = (len(rows)-1)*ld + n
	}
	buf := make([]float32, off+size+8)
	for i := range buf {
		buf[i] = smCanary
	}
	mat := buf[off : off+size : off+size]
	for i, r := range rows {
		if n == 0 {
			break
		}
		if r == nil {
			r = smFill(n, -7) // an output row: not a valid result
		}
		copy(mat[i*ld:], r[:n])
	}
	inRow := func(k int) bool {
		k -= off
		return k >= 0 && k < size && k%ld < n
	}
	check := func() string {
		for k, v := range buf {
			if !inRow(k) && math.Float32bits(v) != math.Float32bits(smCanary) {
				return fmt.Sprintf("element %d outside the matrix (offset %d, ld %d) overwritten with %v", k-off, off, ld, v)
			}
		}
		return ""
	}
	return mat, check
}

// smRow returns row i of an m×n matrix with leading dimension ld.
func smRow(mat []float32, i, n, ld int) []float32 {
	if n == 0 {
		return nil
	}
	return mat[i*ld : i*ld+n]
}

// smDist names the input distributions of the sweep.
var smDist = []string{"uniform10", "uniform1e4", "attention", "wide", "offset"}

// smInputRow returns a row of length n from distribution d:
//
//	uniform10   uniform in [-10, 10]
//	uniform1e4  uniform in [-1e4, 1e4]
//	attention   scores q·k/sqrt(64) of unit normals, scaled by 3, causally
//	            masked (-Inf) after a random position
//	wide        max - 88*u with a random max in [-5, 5], values with low
//	            bits throughout: exercises exp over its whole range and
//	            the exactness of the argument reduction
//	offset      values within 90 below 3000 or 5000 (both reductions, far
//	            from 0)
func smInputRow(r *rand.Rand, d string, n int) []float32 {
	x := make([]float32, n)
	switch d {
	case "uniform10":
		for j := range x {
			x[j] = float32(r.Float64()*20 - 10)
		}
	case "uniform1e4":
		for j := range x {
			x[j] = float32(r.Float64()*2e4 - 1e4)
		}
	case "attention":
		pos := r.IntN(n + 1)
		for j := range x {
			if j > pos {
				x[j] = smNegInf
				continue
			}
			var s float64
			for k := 0; k < 64; k++ {
				s += r.NormFloat64() * r.NormFloat64()
			}
			x[j] = float32(3 * s / 8)
		}
	case "wide":
		top := r.Float64()*10 - 5
		for j := range x {
			x[j] = float32(top - 88*r.Float64())
		}
	case "offset":
		base := 3000.0
		if r.IntN(2) == 1 {
			base = 5000
		}
		for j := range x {
			x[j] = float32(base - 90*r.Float64())
		}
	default:
		panic(d)
	}
	return x
}

// smSweepSizes are the row lengths of the sweeps: every length to 300
// (all tails and unroll boundaries of both vector widths) and a few large
// ones.
func smSweepSizes(t *testing.T) []int {
	var s []int
	step := 1
	if testing.Short() {
		step = 7
	}
	for n := 0; n <= 300; n += step {
		s = append(s, n)
	}
	s = append(s, 1000, 4095, 4096, 4097)
	if !testing.Short() {
		s = append(s, 65536)
	}
	return s
}

// smLayoutCase is one memory layout of the sweep.
type smLayoutCase struct {
	ldx, ldy   int
	xoff, yoff int
	inplace    bool
}

// smLayoutsFor returns the layouts of the sweep for rows of length n:
// leading dimensions n, n+1 and n+13 (ldx and ldy differing out of place),
// starts offset by 0..3 elements, out of place and in place. For the
// longest rows (65536) only offsets 0 and 3 are run: the kernels' code
// paths depend on n modulo the block size, not on its size.
func smLayoutsFor(n int) []smLayoutCase {
	lds := [][2]int{{n, n}, {n + 1, n + 13}, {n + 13, n + 1}}
	offStep := 1
	if n > 5000 {
		offStep = 3
	}
	var out []smLayoutCase
	for _, ld := range lds {
		for off := 0; off < 4; off += offStep {
			out = append(out, smLayoutCase{ldx: ld[0], ldy: ld[1], xoff: off, yoff: 3 - off})
			out = append(out, smLayoutCase{ldx: ld[0], ldy: ld[0], xoff: off, inplace: true})
		}
	}
	return out
}

// TestSoftmaxSweep runs every implementation over every row length to 300
// and some large ones, with 1, 3 and 17 rows, odd leading dimensions,
// unaligned starts, in place and out of place, and checks each output
// against the float64 reference and, for the SIMD implementations,
// against generic (see the accuracy model above).
func TestSoftmaxSweep(t *testing.T) {
	impls := Implementations()
	worst := make([]float64, len(impls))
	worstAt := make([]string, len(impls))
	r := newRand(1)
	for _, n := range smSweepSizes(t) {
		for _, m := range []int{1, 3, 17} {
			rows := make([][]float32, m)
			refs := make([][]float64, m)
			gen := make([][]float32, m)
			for i := range rows {
				d := smDist[(i+n)%len(smDist)]
				rows[i] = smInputRow(r, d, n)
				refs[i] = smRef64(rows[i])
				gen[i] = make([]float32, n)
				genericImpl.Softmax(1, n, rows[i], n, gen[i], n)
			}
			for _, lc := range smLayoutsFor(n) {
				for pi, p := range impls {
					name := fmtShape("impl", p.Name(), "n", n, "m", m, "ldx", lc.ldx, "ldy", lc.ldy, "xoff", lc.xoff, "yoff", lc.yoff, "inplace", lc.inplace)
					x, xCheck := smLayout(rows, n, lc.ldx, lc.xoff)
					y, yCheck := x, xCheck
					if !lc.inplace {
						y, yCheck = smLayout(make([][]float32, m), n, lc.ldy, lc.yoff)
					}
					p.Softmax(m, n, x, lc.ldx, y, lc.ldy)
					if bad := yCheck(); bad != "" {
						t.Fatalf("%s: y: %s", name, bad)
					}
					if !lc.inplace {
						if bad := xCheck(); bad != "" {
							t.Fatalf("%s: x: %s", name, bad)
						}
						for i := range rows {
							for j, v := range smRow(x, i, n, lc.ldx) {
								if math.Float32bits(v) != math.Float32bits(rows[i][j]) {
									t.Fatalf("%s: input row %d element %d changed", name, i, j)
								}
							}
						}
					}
					for i := range rows {
						got := smRow(y, i, n, lc.ldy)
						rel, bad := smCheckRow(got, refs[i], smTol(p))
						if bad != "" {
							t.Fatalf("%s: row %d (%s) against float64: %s", name, i, smDist[(i+n)%len(smDist)], bad)
						}
						if rel > worst[pi] {
							worst[pi], worstAt[pi] = rel, fmt.Sprintf("n=%d row %d (%s)", n, i, smDist[(i+n)%len(smDist)])
						}
						if p == genericImpl {
							continue
						}
						for j, g := range gen[i] {
							if _, ok := smCompare(got[j], float64(g), smTolSIMD+smTolGeneric); !ok {
								t.Fatalf("%s: row %d element %d = %v, generic %v", name, i, j, got[j], g)
							}
						}
					}
				}
			}
		}
	}
	for pi, p := range impls {
		t.Logf("%s: max relative error against float64 %.3g (%s)", p.Name(), worst[pi], worstAt[pi])
	}
}

// smSpecialCase is one row with special values and the length it is
// placed in.
type smSpecialCase struct {
	name string
	row  []float32
}

// smSpecialLens are the lengths the special-value rows are built at: each
// side of every vector boundary, so the special entry lands in first,
// middle and tail lanes of full and masked vectors.
var smSpecialLens = []int{1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 129, 1000, 4097}

// smSpecialCases builds the rows of TestSoftmaxSpecial for length n; the
// expected result of each is the float64 reference, whose special values
// are those the Softmax documentation promises:
//
//	-Inf entries          exactly 0, the others as without them
//	all -Inf              all exactly 0
//	NaN (any payload)     all NaN, wherever it is (first, middle, tail lane)
//	+Inf                  all NaN
//	±3e38, ±MaxFloat32    finite, no overflow (the maximum is subtracted)
func smSpecialCases(r *rand.Rand, n int) []smSpecialCase {
	var cs []smSpecialCase
	base := func() []float32 { return smInputRow(r, "uniform10", n) }
	positions := []int{0, n / 2, n - 1}
	if n > 16 {
		positions = append(positions, n-n%16, 16*((n-1)/16)-1)
	}
	nans := []uint32{0x7fc00000, 0xffc00000, 0x7fc00001, 0x7f800001, 0xffffffff, 0x7fffffff, 0x7fc001ff, 0xff8003ff}
	for pi, pos := range positions {
		if pos < 0 || pos >= n {
			continue
		}
		x := base()
		x[pos] = smNegInf
		cs = append(cs, smSpecialCase{fmt.Sprintf("-Inf@%d", pos), x})
		x = base()
		x[pos] = math.Float32frombits(nans[pi%len(nans)])
		cs = append(cs, smSpecialCase{fmt.Sprintf("NaN(%#x)@%d", nans[pi%len(nans)], pos), x})
		x = base()
		x[pos] = smInf
		cs = append(cs, smSpecialCase{fmt.Sprintf("+Inf@%d", pos), x})
		// NaN in a row that is otherwise -Inf: NaN, not the masked zeros.
		x = smFill(n, smNegInf)
		x[pos] = smNaN
		cs = append(cs, smSpecialCase{fmt.Sprintf("NaN@%d-among-Inf", pos), x})
		x = smFill(n, smNegInf)
		x[pos] = 2.5
		cs = append(cs, smSpecialCase{fmt.Sprintf("one-finite@%d", pos), x})
		// Far below the maximum but finite: exactly 0 (float64 exp
		// underflows), in whatever lane.
		for _, v := range []float32{-1e20, -3e38, -1e6} {
			x = base()
			x[pos] = v
			cs = append(cs, smSpecialCase{fmt.Sprintf("%v@%d", v, pos), x})
		}
	}
	for _, bits := range nans {
		x := base()
		x[r.IntN(n)] = math.Float32frombits(bits)
		cs = append(cs, smSpecialCase{fmt.Sprintf("NaN(%#x)", bits), x})
	}
	// A NaN after a larger value in the same lane, then smaller values:
	// VMAXPS can lose the larger value, and the row must still be NaN.
	if n > 32 {
		x := base()
		x[0], x[16] = 1e30, smNaN
		cs = append(cs, smSpecialCase{"big-NaN-small", x})
		x = base()
		x[0], x[16] = smInf, smNaN
		cs = append(cs, smSpecialCase{"+Inf-NaN-small", x})
	}
	x := base()
	x[0], x[n-1] = smInf, smNegInf
	cs = append(cs, smSpecialCase{"+Inf-and--Inf", x})
	cs = append(cs, smSpecialCase{"all-Inf", smFill(n, smInf)})
	cs = append(cs, smSpecialCase{"all--Inf", smFill(n, smNegInf)})
	cs = append(cs, smSpecialCase{"all-NaN", smFill(n, smNaN)})
	cs = append(cs, smSpecialCase{"all-MaxFloat32", smFill(n, math.MaxFloat32)})
	cs = append(cs, smSpecialCase{"all--MaxFloat32", smFill(n, -math.MaxFloat32)})
	cs = append(cs, smSpecialCase{"all-zero", smFill(n, 0)})
	cs = append(cs, smSpecialCase{"all-subnormal", smFill(n, math.Float32frombits(5))})
	x = base()
	for j := range x {
		switch j % 3 {
		case 0:
			x[j] = 3e38
		case 1:
			x[j] = -3e38
		}
	}
	cs = append(cs, smSpecialCase{"±3e38", x})
	x = base()
	for j := 1; j < n; j += 2 {
		x[j] = -1e20
	}
	cs = append(cs, smSpecialCase{"alternate-1e20", x})
	x = base()
	x[n/2] = -math.MaxFloat32
	x[0] = math.MaxFloat32
	cs = append(cs, smSpecialCase{"±MaxFloat32", x})
	// Maxima either side of the switch between the two reductions, and
	// small ones with values spread over the whole range of exp.
	for _, top := range []float32{4095.99, 4096, -4096, -4095.99, 1e6, 0.3, -0.3, 87.5, -100} {
		x := make([]float32, n)
		for j := range x {
			x[j] = top - float32(91*r.Float64())
		}
		x[r.IntN(n)] = top
		cs = append(cs, smSpecialCase{fmt.Sprintf("max=%v", top), x})
	}
	return cs
}

func smFill(n int, v float32) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = v
	}
	return x
}

// TestSoftmaxSpecial checks the documented special values on every
// implementation, out of place and in place, each row placed among rows
// of ordinary values (m = 3, the special row in the middle).
func TestSoftmaxSpecial(t *testing.T) {
	r := newRand(2)
	forEachImpl(t, func(t *testing.T, p *Impl) {
		for _, n := range smSpecialLens {
			for _, c := range smSpecialCases(r, n) {
				rows := [][]float32{smInputRow(r, "uniform10", n), c.row, smInputRow(r, "attention", n)}
				for _, inplace := range []bool{false, true} {
					ld := n + 3
					x, _ := smLayout(rows, n, ld, 1)
					y := x
					if !inplace {
						y, _ = smLayout(make([][]float32, 3), n, ld, 2)
					}
					p.Softmax(3, n, x, ld, y, ld)
					for i := range rows {
						if _, bad := smCheckRow(smRow(y, i, n, ld), smRef64(rows[i]), smTol(p)); bad != "" {
							t.Fatalf("n=%d %s inplace=%v row %d: %s", n, c.name, inplace, i, bad)
						}
					}
				}
			}
		}
		// Rows of length 1.
		for _, v := range []float32{0, -5, 1e30, -3e38, smNegInf, smNaN, smInf} {
			y := []float32{-7}
			p.Softmax(1, 1, []float32{v}, 1, y, 1)
			want := smRef64([]float32{v})[0]
			if _, ok := smCompare(y[0], want, smTol(p)); !ok {
				t.Errorf("softmax([%v]) = %v, want %v", v, y[0], want)
			}
		}
	})
}

// TestSoftmaxSpecialKinds spells out the documented results directly,
// rather than through the reference.
func TestSoftmaxSpecialKinds(t *testing.T) {
	forEachImpl(t, func(t *testing.T, p *Impl) {
		for _, n := range []int{1, 5, 16, 37} {
			x := smFill(n, smNegInf)
			y := smFill(n, 9)
			p.Softmax(1, n, x, n, y, n)
			for j, v := range y {
				if v != 0 || math.Signbit(float64(v)) {
					t.Fatalf("n=%d all -Inf: y[%d] = %v, want +0", n, j, v)
				}
			}
			for _, special := range []float32{smNaN, smInf} {
				for _, pos := range []int{0, n / 2, n - 1} {
					x := smFill(n, 1)
					x[pos] = special
					p.Softmax(1, n, x, n, y, n)
					for j, v := range y {
						if !math.IsNaN(float64(v)) {
							t.Fatalf("n=%d %v at %d: y[%d] = %v, want NaN", n, special, pos, j, v)
						}
					}
				}
			}
			if n > 1 {
				x := smFill(n, 2)
				x[n-1] = smNegInf
				p.Softmax(1, n, x, n, y, n)
				if y[n-1] != 0 {
					t.Fatalf("n=%d: -Inf entry gives %v, want 0", n, y[n-1])
				}
				want := 1 / float64(n-1)
				if math.Abs(float64(y[0])-want) > 2e-6*want {
					t.Fatalf("n=%d: y[0] = %v, want %v", n, y[0], want)
				}
			}
		}
	})
}

// smBackRef returns the float64 gradient and the per-element error bound
// of the accuracy model.
func smBackRef(y, dy []float32) (ref, bound []float64) {
	var s, s1 float64
	for k := range y {
		p := float64(y[k]) * float64(dy[k])
		s += p
		s1 += math.Abs(p)
	}
	n := float64(len(y))
	ref = make([]float64, len(y))
	bound = make([]float64, len(y))
	for j := range y {
		yj, dyj := float64(y[j]), float64(dy[j])
		ref[j] = yj * (dyj - s)
		bound[j] = math.Abs(yj)*(4*smUnit*(math.Abs(dyj)+math.Abs(s))+2*n*smUnit*s1) + 1e-37
	}
	return ref, bound
}

// smBackInputs returns m rows of softmax outputs and of gradients.
func smBackInputs(r *rand.Rand, m, n int) (ys, dys [][]float32) {
	for i := 0; i < m; i++ {
		x := smInputRow(r, smDist[(i+n)%len(smDist)], n)
		y := make([]float32, n)
		genericImpl.Softmax(1, n, x, n, y, n)
		dy := make([]float32, n)
		for j := range dy {
			dy[j] = float32(r.NormFloat64())
		}
		ys, dys = append(ys, y), append(dys, dy)
	}
	return ys, dys
}

// TestSoftmaxBackwardSweep checks SoftmaxBackward of every implementation
// against the float64 gradient (bound above) over the sweep's lengths and
// layouts, in place (dx = dy) and out of place, and the SIMD
// implementations against generic within the sum of their bounds.
func TestSoftmaxBackwardSweep(t *testing.T) {
	r := newRand(3)
	for _, n := range smSweepSizes(t) {
		for _, m := range []int{1, 3, 17} {
			ys, dys := smBackInputs(r, m, n)
			gens := make([][]float32, m)
			for i := range ys {
				gens[i] = make([]float32, n)
				genericImpl.SoftmaxBackward(1, n, ys[i], n, dys[i], n, gens[i], n)
			}
			lds := [][3]int{{n, n, n}, {n + 1, n + 13, n}, {n + 13, n, n + 1}}
			for li, ld := range lds {
				for _, inplace := range []bool{false, true} {
					for _, p := range Implementations() {
						off := (li + n) % 4
						name := fmtShape("impl", p.Name(), "n", n, "m", m, "ldy", ld[0], "lddy", ld[1], "lddx", ld[2], "off", off, "inplace", inplace)
						y, yCheck := smLayout(ys, n, ld[0], off)
						dy, dyCheck := smLayout(dys, n, ld[1], 3-off)
						dx, dxCheck, lddx := dy, dyCheck, ld[1]
						if !inplace {
							dx, dxCheck = smLayout(make([][]float32, m), n, ld[2], (off+1)%4)
							lddx = ld[2]
						}
						p.SoftmaxBackward(m, n, y, ld[0], dy, ld[1], dx, lddx)
						for _, c := range []func() string{yCheck, dyCheck, dxCheck} {
							if bad := c(); bad != "" {
								t.Fatalf("%s: %s", name, bad)
							}
						}
						for i := range ys {
							ref, bound := smBackRef(ys[i], dys[i])
							got := smRow(dx, i, n, lddx)
							for j := range ref {
								if d := math.Abs(float64(got[j]) - ref[j]); !(d <= bound[j]) {
									t.Fatalf("%s: row %d dx[%d] = %v, want %v within %g", name, i, j, got[j], ref[j], bound[j])
								}
								if d := math.Abs(float64(got[j]) - float64(gens[i][j])); p != genericImpl && !(d <= 2*bound[j]) {
									t.Fatalf("%s: row %d dx[%d] = %v, generic %v", name, i, j, got[j], gens[i][j])
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestSoftmaxBackwardSpecial: NaN or Inf in dy makes the row's gradient
// NaN wherever generic's is, and zeros of y (masked entries) give zero
// gradients.
func TestSoftmaxBackwardSpecial(t *testing.T) {
	r := newRand(4)
	forEachImpl(t, func(t *testing.T, p *Impl) {
		for _, n := range []int{1, 7, 16, 33, 1000} {
			ys, dys := smBackInputs(r, 1, n)
			y, dy := ys[0], dys[0]
			for j := 0; j < n; j += 3 {
				y[j] = 0
			}
			want := make([]float32, n)
			got := make([]float32, n)
			for _, special := range []float32{0, smNaN, smInf} {
				dy2 := append([]float32(nil), dy...)
				if special != 0 {
					dy2[n/2] = special
				}
				genericImpl.SoftmaxBackward(1, n, y, n, dy2, n, want, n)
				p.SoftmaxBackward(1, n, y, n, dy2, n, got, n)
				for j := range want {
					if math.IsNaN(float64(want[j])) != math.IsNaN(float64(got[j])) {
						t.Fatalf("n=%d dy[%d]=%v: dx[%d] = %v, generic %v", n, n/2, special, j, got[j], want[j])
					}
					if y[j] == 0 && special == 0 && got[j] != 0 {
						t.Fatalf("n=%d: y[%d] = 0 but dx = %v", n, j, got[j])
					}
				}
			}
		}
	})
}

// TestSoftmaxBackwardFiniteDifference checks in float64 that the formula
// of SoftmaxBackward is the derivative of softmax: for the loss
// L(x) = sum_j w_j softmax(x)_j, the gradient each implementation computes
// from y = softmax(x) and dy = w matches central differences of L.
func TestSoftmaxBackwardFiniteDifference(t *testing.T) {
	r := newRand(5)
	softmax64 := func(x []float64) []float64 {
		mx := math.Inf(-1)
		for _, v := range x {
			mx = math.Max(mx, v)
		}
		out := make([]float64, len(x))
		var s float64
		for j, v := range x {
			out[j] = math.Exp(v - mx)
			s += out[j]
		}
		for j := range out {
			out[j] /= s
		}
		return out
	}
	forEachImpl(t, func(t *testing.T, p *Impl) {
		for _, n := range []int{2, 5, 17} {
			x := make([]float64, n)
			w := make([]float64, n)
			for j := range x {
				x[j] = r.Float64()*4 - 2
				w[j] = r.Float64()*2 - 1
			}
			loss := func(x []float64) float64 {
				var l float64
				for j, v := range softmax64(x) {
					l += w[j] * v
				}
				return l
			}
			y64 := softmax64(x)
			y := make([]float32, n)
			dy := make([]float32, n)
			for j := range y {
				y[j], dy[j] = float32(y64[j]), float32(w[j])
			}
			dx := make([]float32, n)
			p.SoftmaxBackward(1, n, y, n, dy, n, dx, n)
			const h = 1e-5
			for j := range x {
				xp := append([]float64(nil), x...)
				xm := append([]float64(nil), x...)
				xp[j] += h
				xm[j] -= h
				fd := (loss(xp) - loss(xm)) / (2 * h)
				if math.Abs(float64(dx[j])-fd) > 1e-6 {
					t.Errorf("n=%d: dx[%d] = %v, finite difference %v", n, j, dx[j], fd)
				}
			}
		}
	})
}

// TestSoftmaxAllocs: neither Softmax nor SoftmaxBackward allocates, on any
// implementation, through the method or the package-level function.
func TestSoftmaxAllocs(t *testing.T) {
	const m, n = 3, 100
	x := randSlice(newRand(6), m*n)
	y := make([]float32, m*n)
	dx := make([]float32, m*n)
	forEachImpl(t, func(t *testing.T, p *Impl) {
		if a := testing.AllocsPerRun(50, func() { p.Softmax(m, n, x, n, y, n) }); a != 0 {
			t.Errorf("Softmax: %v allocations per call", a)
		}
		if a := testing.AllocsPerRun(50, func() { p.SoftmaxBackward(m, n, y, n, x, n, dx, n) }); a != 0 {
			t.Errorf("SoftmaxBackward: %v allocations per call", a)
		}
	})
	if a := testing.AllocsPerRun(50, func() { Softmax(m, n, x, n, y, n) }); a != 0 {
		t.Errorf("package Softmax: %v allocations per call", a)
	}
	if a := testing.AllocsPerRun(50, func() { SoftmaxBackward(m, n, y, n, x, n, dx, n) }); a != 0 {
		t.Errorf("package SoftmaxBackward: %v allocations per call", a)
	}
}

// smPanic returns the value f panics with, as a string ("" if none).
func smPanic(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}

// TestSoftmaxPanics: bad shapes panic, before any kernel runs, with a
// message naming the function and the numbers involved.
func TestSoftmaxPanics(t *testing.T) {
	buf := make([]float32, 64)
	cases := []struct {
		name string
		f    func(p *Impl)
		want []string
	}{
		{"short y", func(p *Impl) { p.Softmax(2, 3, buf[:6], 3, buf[:5], 3) },
			[]string{"kernels.Softmax", "len(y) = 5", "want >= 6", "2×3", "ldy = 3"}},
		{"short x", func(p *Impl) { p.Softmax(3, 4, buf[:10], 4, buf, 4) },
			[]string{"kernels.Softmax", "len(x) = 10", "want >= 12"}},
		{"short y with ld", func(p *Impl) { p.Softmax(2, 3, buf, 3, buf[:7], 5) },
			[]string{"kernels.Softmax", "len(y) = 7", "want >= 8", "ldy = 5"}},
		{"ldx < n", func(p *Impl) { p.Softmax(2, 3, buf, 2, buf, 3) },
			[]string{"kernels.Softmax", "ldx = 2", "row length 3"}},
		{"ldy < n", func(p *Impl) { p.Softmax(1, 5, buf, 5, buf, 4) },
			[]string{"kernels.Softmax", "ldy = 4", "row length 5"}},
		{"negative m", func(p *Impl) { p.Softmax(-1, 3, buf, 3, buf, 3) },
			[]string{"kernels.Softmax", "m = -1"}},
		{"negative n", func(p *Impl) { p.Softmax(1, -2, buf, 3, buf, 3) },
			[]string{"kernels.Softmax", "n = -2"}},
		{"backward short dy", func(p *Impl) { p.SoftmaxBackward(2, 3, buf, 3, buf[:4], 3, buf, 3) },
			[]string{"kernels.SoftmaxBackward", "len(dy) = 4", "want >= 6"}},
		{"backward short dx", func(p *Impl) { p.SoftmaxBackward(2, 3, buf, 3, buf, 3, buf[:5], 3) },
			[]string{"kernels.SoftmaxBackward", "len(dx) = 5", "want >= 6"}},
		{"backward lddx < n", func(p *Impl) { p.SoftmaxBackward(2, 3, buf, 3, buf, 3, buf, 2) },
			[]string{"kernels.SoftmaxBackward", "lddx = 2", "row length 3"}},
		{"backward short y", func(p *Impl) { p.SoftmaxBackward(4, 4, buf[:15], 4, buf, 4, buf, 4) },
			[]string{"kernels.SoftmaxBackward", "len(y) = 15", "want >= 16"}},
	}
	forEachImpl(t, func(t *testing.T, p *Impl) {
		for _, c := range cases {
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
		}
		// Empty shapes are fine, even with nil slices.
		if msg := smPanic(func() { p.Softmax(0, 5, nil, 5, nil, 5); p.Softmax(4, 0, nil, 0, nil, 0) }); msg != "" {
			t.Errorf("empty shapes: %s", msg)
		}
	})
	if msg := smPanic(func() { Softmax(2, 3, buf[:6], 3, buf[:5], 3) }); !strings.Contains(msg, "kernels.Softmax: len(y) = 5") {
		t.Errorf("package Softmax: panic %q", msg)
	}
}
