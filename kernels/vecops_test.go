package kernels

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// Tests of the vector operations Dot, Axpy, Scale, Add, Sum and Max.
//
// Every implementation is compared with generic, and generic with a
// float64 reference. Tolerances (eps = float32Eps = 2^-23, n = length):
//
//   - Dot, Sum: |got - ref| <= (n+2)*eps*sum|terms| + 1e-30 against the
//     float64 sum ref, where the terms are x[i]*y[i] (Dot) or x[i] (Sum).
//     This is the classical bound for recursive summation in any order
//     (gamma_n = n*eps/2 per term magnitude) with a factor 2 of slack, so
//     it covers the blocked, multi-accumulator order of the SIMD kernels
//     and their FMA. Against generic the bound is doubled.
//   - Axpy: |got - want| <= eps*(|alpha*x[i]| + |y[i]|) elementwise. The
//     SIMD kernels use FMA (one rounding), generic rounds alpha*x[i] and
//     then the sum: they can differ by about one ulp of the result.
//   - Scale, Add: exact. Every implementation must be bitwise equal to
//     generic, and generic to the correctly rounded float64 result (double
//     rounding is harmless for one float32 operation).
//   - Max: exact. A NaN anywhere gives NaN, bitwise the first NaN element;
//     otherwise the result equals generic's (==, so the sign of a zero
//     result is not compared: with both +0 and -0 in x it is unspecified).

// vecSizes crosses every unroll and tail boundary of both vector widths
// (8 and 16 lanes, unrolled 4 times) and some large sizes.
var vecSizes = func() []int {
	var s []int
	for n := 0; n <= 300; n++ {
		s = append(s, n)
	}
	return append(s, 1000, 4095, 4096, 4097, 100003)
}()

// vecOffsets are the element offsets of slice starts: aligned and not.
var vecOffsets = []int{0, 1, 2, 3, 7}

// vecAlphas are the scalars given to Axpy and Scale.
var vecAlphas = []float32{0, 1, -1, 0.37}

// vecCanary fills the padding around the slices of vecPadded; any write
// there is a kernel writing out of bounds.
const vecCanary = float32(-12345.678)

// vecPadded returns a copy of src that starts off elements into a buffer
// with 32 canary elements on each side, and a function that fails t if a
// canary was overwritten.
func vecPadded(src []float32, off int) ([]float32, func(t *testing.T)) {
	const pad = 32
	buf := make([]float32, pad+off+len(src)+pad)
	for i := range buf {
		buf[i] = vecCanary
	}
	s := buf[pad+off : pad+off+len(src) : pad+off+len(src)]
	copy(s, src)
	return s, func(t *testing.T) {
		t.Helper()
		for i, v := range buf {
			if (i < pad+off || i >= pad+off+len(src)) && v != vecCanary {
				t.Fatalf("write outside the slice: buffer[%d] = %v (slice is [%d:%d])", i, v, pad+off, pad+off+len(src))
			}
		}
	}
}

// sumTol is the Dot/Sum tolerance for n terms whose magnitudes add up to
// mag (see the comment at the top of the file).
func sumTol(n int, mag float64) float64 {
	return float64(n+2)*float32Eps*mag + 1e-30
}

// bitsEqual reports whether a and b are the same float32, bit for bit.
func bitsEqual(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }

// sameMax reports whether got is an acceptable Max result when want is
// generic's: the same NaN bits, or an equal number.
func sameMax(got, want float32) bool {
	if want != want || got != got {
		return bitsEqual(got, want)
	}
	return got == want
}

// vecInputs returns deterministic inputs of length n for a test case.
func vecInputs(n int) (x, y []float32) {
	r := newRand(uint64(n)*7919 + 1)
	return randSlice(r, n), randSlice(r, n)
}

func TestDot(t *testing.T) {
	for _, n := range vecSizes {
		x0, y0 := vecInputs(n)
		var ref, mag float64
		for i := range x0 {
			v := float64(x0[i]) * float64(y0[i])
			ref += v
			mag += math.Abs(v)
		}
		tol := sumTol(n, mag)
		want := genericImpl.Dot(x0, y0)
		if !closeTo(want, float32(ref), tol) {
			t.Fatalf("generic n=%d: Dot = %v, float64 reference %v (tol %g)", n, want, ref, tol)
		}
		for _, p := range nonGeneric() {
			for _, off := range vecOffsets {
				x, cx := vecPadded(x0, off)
				y, cy := vecPadded(y0, (off+3)%8)
				got := p.Dot(x, y)
				if !closeTo(got, want, 2*tol) || !closeTo(got, float32(ref), tol) {
					t.Fatalf("%s n=%d off=%d: Dot = %v, generic %v, float64 %v (tol %g)", p.Name(), n, off, got, want, ref, tol)
				}
				cx(t)
				cy(t)
			}
		}
	}
}

func TestSum(t *testing.T) {
	for _, n := range vecSizes {
		x0, _ := vecInputs(n)
		var ref, mag float64
		for _, v := range x0 {
			ref += float64(v)
			mag += math.Abs(float64(v))
		}
		tol := sumTol(n, mag)
		want := genericImpl.Sum(x0)
		if !closeTo(want, float32(ref), tol) {
			t.Fatalf("generic n=%d: Sum = %v, float64 reference %v (tol %g)", n, want, ref, tol)
		}
		for _, p := range nonGeneric() {
			for _, off := range vecOffsets {
				x, cx := vecPadded(x0, off)
				got := p.Sum(x)
				if !closeTo(got, want, 2*tol) || !closeTo(got, float32(ref), tol) {
					t.Fatalf("%s n=%d off=%d: Sum = %v, generic %v, float64 %v (tol %g)", p.Name(), n, off, got, want, ref, tol)
				}
				cx(t)
			}
		}
	}
}

func TestAxpy(t *testing.T) {
	for _, n := range vecSizes {
		x0, y0 := vecInputs(n)
		for _, alpha := range vecAlphas {
			want := append([]float32(nil), y0...)
			genericImpl.Axpy(alpha, x0, want)
			tol := func(i int) float64 {
				return float32Eps * (math.Abs(float64(alpha)*float64(x0[i])) + math.Abs(float64(y0[i])))
			}
			for i := range want {
				ref := float64(y0[i]) + float64(alpha)*float64(x0[i])
				if !closeTo(want[i], float32(ref), tol(i)) {
					t.Fatalf("generic n=%d alpha=%v: y[%d] = %v, float64 reference %v", n, alpha, i, want[i], ref)
				}
			}
			for _, p := range nonGeneric() {
				for _, off := range vecOffsets {
					x, cx := vecPadded(x0, off)
					y, cy := vecPadded(y0, (off+5)%8)
					p.Axpy(alpha, x, y)
					for i := range y {
						if !closeTo(y[i], want[i], tol(i)) {
							t.Fatalf("%s n=%d alpha=%v off=%d: y[%d] = %v, generic %v", p.Name(), n, alpha, off, i, y[i], want[i])
						}
						if x[i] != x0[i] {
							t.Fatalf("%s n=%d: Axpy changed x[%d]", p.Name(), n, i)
						}
					}
					cx(t)
					cy(t)
				}
			}
		}
	}
}

func TestScale(t *testing.T) {
	for _, n := range vecSizes {
		x0, _ := vecInputs(n)
		for _, alpha := range vecAlphas {
			want := append([]float32(nil), x0...)
			genericImpl.Scale(alpha, want)
			for i := range want {
				if ref := float32(float64(alpha) * float64(x0[i])); !bitsEqual(want[i], ref) {
					t.Fatalf("generic n=%d alpha=%v: x[%d] = %v, float64 reference %v", n, alpha, i, want[i], ref)
				}
			}
			for _, p := range nonGeneric() {
				for _, off := range vecOffsets {
					x, cx := vecPadded(x0, off)
					p.Scale(alpha, x)
					for i := range x {
						if !bitsEqual(x[i], want[i]) {
							t.Fatalf("%s n=%d alpha=%v off=%d: x[%d] = %v, generic %v", p.Name(), n, alpha, off, i, x[i], want[i])
						}
					}
					cx(t)
				}
			}
		}
	}
}

func TestAdd(t *testing.T) {
	for _, n := range vecSizes {
		x0, y0 := vecInputs(n)
		want := make([]float32, n)
		genericImpl.Add(want, x0, y0)
		for i := range want {
			if ref := float32(float64(x0[i]) + float64(y0[i])); !bitsEqual(want[i], ref) {
				t.Fatalf("generic n=%d: dst[%d] = %v, float64 reference %v", n, i, want[i], ref)
			}
		}
		for _, p := range nonGeneric() {
			for _, off := range vecOffsets {
				// alias: 0 separate dst, 1 dst is x, 2 dst is y.
				for alias := 0; alias < 3; alias++ {
					x, cx := vecPadded(x0, off)
					y, cy := vecPadded(y0, (off+1)%8)
					d, cd := vecPadded(make([]float32, n), (off+6)%8)
					switch alias {
					case 1:
						d = x
					case 2:
						d = y
					}
					p.Add(d, x, y)
					for i := range d {
						if !bitsEqual(d[i], want[i]) {
							t.Fatalf("%s n=%d off=%d alias=%d: dst[%d] = %v, generic %v", p.Name(), n, off, alias, i, d[i], want[i])
						}
					}
					cx(t)
					cy(t)
					cd(t)
				}
			}
		}
	}
}

func TestMax(t *testing.T) {
	for _, n := range vecSizes {
		x0, _ := vecInputs(n)
		ref := math.Inf(-1)
		for _, v := range x0 {
			ref = math.Max(ref, float64(v))
		}
		want := genericImpl.Max(x0)
		if float64(want) != ref {
			t.Fatalf("generic n=%d: Max = %v, float64 reference %v", n, want, ref)
		}
		for _, p := range nonGeneric() {
			for _, off := range vecOffsets {
				x, cx := vecPadded(x0, off)
				if got := p.Max(x); !sameMax(got, want) {
					t.Fatalf("%s n=%d off=%d: Max = %v, want %v", p.Name(), n, off, got, want)
				}
				cx(t)
			}
		}
	}
}

// vecNaN returns a quiet NaN with the given payload, so that tests can
// tell which NaN element a kernel returned.
func vecNaN(payload uint32) float32 {
	return math.Float32frombits(0x7fc00000 | payload&0x3fffff)
}

// maxSpecialSizes are the lengths of the special-value Max tests.
var maxSpecialSizes = []int{1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 129, 1000, 4097}

func TestMaxNaN(t *testing.T) {
	for _, n := range maxSpecialSizes {
		var positions []int
		if n <= 70 {
			for i := 0; i < n; i++ {
				positions = append(positions, i)
			}
		} else {
			positions = []int{0, 1, n / 2, n - 17, n - 9, n - 8, n - 2, n - 1}
		}
		for _, pos := range positions {
			// second: a later NaN too, which must not be the one returned.
			for _, second := range []bool{false, true} {
				x0, _ := vecInputs(n)
				x0[pos] = vecNaN(uint32(pos) + 1)
				if second && pos+1 < n {
					x0[n-1] = vecNaN(0x2ffff)
				}
				for _, p := range Implementations() {
					for _, off := range []int{0, 3} {
						x := offsetCopy(x0, off)
						got := p.Max(x)
						if !bitsEqual(got, x0[pos]) {
							t.Fatalf("%s n=%d NaN at %d (second %v) off=%d: Max = %v (%#x), want the NaN %#x", p.Name(), n, pos, second, off, got, math.Float32bits(got), math.Float32bits(x0[pos]))
						}
					}
				}
			}
		}
	}
}

// pick returns a if c, else b.
func pick(c bool, a, b float32) float32 {
	if c {
		return a
	}
	return b
}

func TestMaxSpecial(t *testing.T) {
	inf, ninf := float32(math.Inf(1)), float32(math.Inf(-1))
	for _, n := range maxSpecialSizes {
		cases := map[string]func(i int) float32{
			"all -Inf":     func(i int) float32 { return ninf },
			"all negative": func(i int) float32 { return -1 - float32(i%13)/4 },
			"negative big": func(i int) float32 { return -3e38 + float32(i) },
			"+Inf first":   func(i int) float32 { return pick(i == 0, inf, -float32(i)) },
			"+Inf last":    func(i int) float32 { return pick(i == n-1, inf, -float32(i)) },
			"-Inf mix":     func(i int) float32 { return pick(i%3 == 0, ninf, -1e30) },
			"max in tail":  func(i int) float32 { return float32(i) },
			"max first":    func(i int) float32 { return float32(-i) },
			"equal":        func(i int) float32 { return 0.5 },
			"subnormal":    func(i int) float32 { return math.Float32frombits(uint32(i%5 + 1)) },
		}
		for name, f := range cases {
			x0 := make([]float32, n)
			ref := math.Inf(-1)
			for i := range x0 {
				x0[i] = f(i)
				ref = math.Max(ref, float64(x0[i]))
			}
			want := genericImpl.Max(x0)
			if float64(want) != ref {
				t.Fatalf("generic %s n=%d: Max = %v, want %v", name, n, want, ref)
			}
			for _, p := range nonGeneric() {
				for _, off := range []int{0, 1, 7} {
					if got := p.Max(offsetCopy(x0, off)); !sameMax(got, want) {
						t.Fatalf("%s %s n=%d off=%d: Max = %v, want %v", p.Name(), name, n, off, got, want)
					}
				}
			}
		}
	}
}

func TestMaxEmpty(t *testing.T) {
	forEachImpl(t, func(t *testing.T, p *Impl) {
		if got := p.Max(nil); !math.IsInf(float64(got), -1) {
			t.Errorf("Max(nil) = %v, want -Inf", got)
		}
		// The unchecked kernel must be safe on an empty slice too.
		if got := p.set.Max([]float32{}); !math.IsInf(float64(got), -1) {
			t.Errorf("set.Max(empty) = %v, want -Inf", got)
		}
	})
}

func TestVecEmpty(t *testing.T) {
	forEachImpl(t, func(t *testing.T, p *Impl) {
		if got := p.Dot(nil, nil); !bitsEqual(got, 0) {
			t.Errorf("Dot(nil, nil) = %v, want +0", got)
		}
		if got := p.Sum(nil); !bitsEqual(got, 0) {
			t.Errorf("Sum(nil) = %v, want +0", got)
		}
		p.Axpy(2, nil, nil)
		p.Scale(2, nil)
		p.Add(nil, nil, nil)
	})
}

func TestSumDotSpecial(t *testing.T) {
	// NaN and Inf propagate wherever they are, tail lanes included.
	inf := float32(math.Inf(1))
	for _, n := range []int{1, 5, 8, 13, 16, 31, 33, 64, 70, 129} {
		for _, pos := range []int{0, n / 2, n - 1} {
			for _, special := range []float32{vecNaN(1), inf} {
				x, y := vecInputs(n)
				x[pos] = special
				y[pos] = 1
				same := func(got float32) bool {
					if special != special {
						return got != got
					}
					return got == special
				}
				forEachImpl(t, func(t *testing.T, p *Impl) {
					if got := p.Sum(x); !same(got) {
						t.Errorf("n=%d pos=%d: Sum = %v, want %v", n, pos, got, special)
					}
					if got := p.Dot(x, y); !same(got) {
						t.Errorf("n=%d pos=%d: Dot = %v, want %v", n, pos, got, special)
					}
				})
			}
		}
	}
}

func TestVecPanics(t *testing.T) {
	x3, x4 := make([]float32, 3), make([]float32, 4)
	cases := []struct {
		name string
		f    func(p *Impl)
		msg  string
	}{
		{"Dot", func(p *Impl) { p.Dot(x3, x4) }, "kernels.Dot: len(x) = 3 but len(y) = 4"},
		{"Axpy", func(p *Impl) { p.Axpy(1, x4, x3) }, "kernels.Axpy: len(x) = 4 but len(y) = 3"},
		{"AddX", func(p *Impl) { p.Add(x3, x4, x3) }, "kernels.Add: len(dst) = 3 but len(x) = 4"},
		{"AddY", func(p *Impl) { p.Add(x3, x3, x4) }, "kernels.Add: len(dst) = 3 but len(y) = 4"},
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
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "kernels.Dot") {
			t.Fatalf("Dot: panic %v, want one naming kernels.Dot", r)
		}
	}()
	Dot(x3, x4)
}

func TestVecAllocs(t *testing.T) {
	x, y := vecInputs(1000)
	d := make([]float32, 1000)
	var sink float32
	forEachImpl(t, func(t *testing.T, p *Impl) {
		for name, f := range map[string]func(){
			"Dot":   func() { sink += p.Dot(x, y) },
			"Axpy":  func() { p.Axpy(0.5, x, d) },
			"Scale": func() { p.Scale(1, d) },
			"Add":   func() { p.Add(d, x, y) },
			"Sum":   func() { sink += p.Sum(x) },
			"Max":   func() { sink += p.Max(x) },
		} {
			if a := testing.AllocsPerRun(20, f); a != 0 {
				t.Errorf("%s: %v allocations per call, want 0", name, a)
			}
		}
	})
	_ = sink
}
