package lowbit

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestToBF16Special(t *testing.T) {
	for _, tc := range []struct {
		in   uint32
		want uint16
	}{
		{0x00000000, 0x0000},              // +0
		{0x80000000, 0x8000},              // -0
		{0x3f800000, 0x3f80},              // 1
		{0x7f800000, 0x7f80},              // +Inf
		{0xff800000, 0xff80},              // -Inf
		{0x7fc00000, 0x7fc0},              // quiet NaN
		{0x7f800001, 0x7fc0},              // NaN with only low payload bits: stays NaN
		{0xff800001, 0xffc0},              // negative NaN keeps its sign
		{0x7fa00000, 0x7fe0},              // signalling NaN, upper payload kept, quiet bit set
		{0x3f808000, 0x3f80},              // tie, even below
		{0x3f818000, 0x3f82},              // tie, even above
		{0x3f808001, 0x3f81},              // above the tie
		{0x3f807fff, 0x3f80},              // below the tie
		{0x7f7fffff, 0x7f80},              // largest float32 rounds to +Inf
		{0x7f7f7fff, 0x7f7f},              // just below the bfloat16 overflow threshold
		{0x00000001, 0x0000},              // smallest subnormal rounds to 0
		{0x00018000, 0x0002},              // subnormal tie to even
		{0x80008001, 0x8001},              // negative subnormal rounds away
		{math.Float32bits(-2.5), 0xc020},  // exact
		{math.Float32bits(1e-40), 0x0001}, // subnormal
	} {
		got := ToBF16(math.Float32frombits(tc.in))
		if got != tc.want {
			t.Errorf("ToBF16(%#08x) = %#04x, want %#04x", tc.in, got, tc.want)
		}
		back := FromBF16(got)
		if math.IsNaN(float64(math.Float32frombits(tc.in))) != math.IsNaN(float64(back)) {
			t.Errorf("ToBF16(%#08x): NaN-ness not kept (%v)", tc.in, back)
		}
	}
}

// TestBF16RoundTrip checks, over random float32 of every exponent, that
// FromBF16(ToBF16(v)) is within half an ulp of bfloat16's 8-bit
// significand of v in float64 (2⁻⁸ times the power of two at or below
// |v|, so at most 2⁻⁸·|v|; a bound of 2⁻⁹·|v| does not hold: 0x0a8c6d7f
// rounds with relative error 1.56·2⁻⁹), and is the nearer of
// v's two bfloat16 neighbours.
func TestBF16RoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 200000; n++ {
		b := r.Uint32()
		v := math.Float32frombits(b)
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			continue
		}
		got := float64(FromBF16(ToBF16(v)))
		x := float64(v)
		if math.IsInf(got, 0) {
			if math.Abs(x) < float64(math.Float32frombits(0x7f7f8000)) {
				t.Fatalf("%v (%#08x) rounded to %v", v, b, got)
			}
			continue
		}
		_, e := math.Frexp(math.Abs(x)) // |x| in [2^(e-1), 2^e)
		if b&0x7f800000 != 0 && (math.Abs(got-x) > math.Ldexp(1, e-9) || math.Abs(got-x) > math.Ldexp(math.Abs(x), -8)) {
			t.Fatalf("%v (%#08x) -> %v: error %g > half an ulp", v, b, got, math.Abs(got-x))
		}
		lo := float64(math.Float32frombits(b &^ 0xffff))
		hi := float64(math.Float32frombits(b&^0xffff + 0x10000))
		if d := math.Abs(got - x); d > math.Abs(lo-x) || (!math.IsInf(hi, 0) && d > math.Abs(hi-x)) {
			t.Fatalf("%v (%#08x) -> %v, not the nearest of %v and %v", v, b, got, lo, hi)
		}
	}
}

// sizes crosses the group boundary and its tail.
var sizes = []int{0, 1, 2, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 100}

func TestBF16Layout(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 3, 7} {
		for _, k := range sizes {
			kn := make([]float32, k*n) // k×n
			for i := range kn {
				kn[i] = float32(r.NormFloat64())
			}
			nk := make([]float32, n*k) // its transpose
			for p := 0; p < k; p++ {
				for j := 0; j < n; j++ {
					nk[j*k+p] = kn[p*n+j]
				}
			}
			a, b := BF16FromKN(kn, k, n), BF16FromNK(nk, n, k)
			if a.Stride() != Groups(k)*32 || a.Stride()%32 != 0 || a.Stride() < k || len(a.Data) != n*a.Stride() {
				t.Fatalf("%d×%d: stride %d, len(Data) %d", n, k, a.Stride(), len(a.Data))
			}
			for i := range a.Data {
				if a.Data[i] != b.Data[i] {
					t.Fatalf("%d×%d: FromKN and FromNK differ at %d", n, k, i)
				}
			}
			f := a.Float32()
			for j := 0; j < n; j++ {
				for p := 0; p < k; p++ {
					want := FromBF16(ToBF16(nk[j*k+p]))
					if a.At(j, p) != want || f[j*k+p] != want {
						t.Fatalf("%d×%d: (%d, %d) = %v / %v, want %v", n, k, j, p, a.At(j, p), f[j*k+p], want)
					}
				}
				// The word layout the kernels rely on: word d of a group
				// is w[d] | w[16+d]<<16.
				for g := 0; g < Groups(k); g++ {
					for d := 0; d < 16; d++ {
						row := a.Data[j*a.Stride()+g*32:]
						for half, p := range []int{g*32 + d, g*32 + 16 + d} {
							want := uint16(0)
							if p < k {
								want = ToBF16(nk[j*k+p])
							}
							if row[2*d+half] != want {
								t.Fatalf("%d×%d: row %d group %d word %d half %d = %#x, want %#x (padding is +0)", n, k, j, g, d, half, row[2*d+half], want)
							}
						}
					}
				}
			}
			if n > 0 && k > 0 {
				a.Set(n-1, k-1, 3)
				if a.At(n-1, k-1) != 3 {
					t.Fatalf("Set then At = %v", a.At(n-1, k-1))
				}
			}
		}
	}
}

// TestInt8RoundTrip checks QuantizeGroup's rule and bounds on groups
// across the tail: Scale = max|w|/127, |Scale·Q - w| <= Scale/2 in
// float64, At within Scale/2 plus one float32 rounding, padding zero.
func TestInt8RoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 5} {
		for _, k := range sizes {
			for _, mag := range []float64{1e-30, 1, 1e30} {
				nk := make([]float32, n*k)
				for i := range nk {
					nk[i] = float32(r.NormFloat64() * mag)
				}
				if len(nk) > 3 {
					nk[3] = 0
				}
				m, err := Int8FromNK(nk, n, k)
				if err != nil {
					t.Fatal(err)
				}
				kn := make([]float32, k*n)
				for p := 0; p < k; p++ {
					for j := 0; j < n; j++ {
						kn[p*n+j] = nk[j*k+p]
					}
				}
				m2, err := Int8FromKN(kn, k, n)
				if err != nil {
					t.Fatal(err)
				}
				if len(m.Blocks) != n*Groups(k) {
					t.Fatalf("%d×%d: %d blocks", n, k, len(m.Blocks))
				}
				f := m.Float32()
				for j := 0; j < n; j++ {
					for g := 0; g < Groups(k); g++ {
						b := m.Blocks[j*Groups(k)+g]
						if b != m2.Blocks[j*Groups(k)+g] {
							t.Fatalf("%d×%d: FromNK and FromKN differ at block (%d, %d)", n, k, j, g)
						}
						var mx float32
						for p := g * 32; p < min(k, g*32+32); p++ {
							mx = max(mx, float32(math.Abs(float64(nk[j*k+p]))))
						}
						want := mx / 127
						if float32(want*127) > mx {
							want = math.Nextafter32(want, 0)
						}
						if b.Scale != want {
							t.Fatalf("%d×%d block (%d, %d): scale %v, want %v", n, k, j, g, b.Scale, want)
						}
						var top int8
						for i, q := range b.Q {
							p := g*32 + i
							if p >= k {
								if q != 0 {
									t.Fatalf("%d×%d: padding Q[%d] = %d", n, k, i, q)
								}
								continue
							}
							top = max(top, q, -q)
							w := float64(nk[j*k+p])
							s := float64(b.Scale)
							if math.Abs(s*float64(q)-w) > s/2 {
								t.Fatalf("%d×%d (%d, %d): %v quantized to %d×%v, error > scale/2", n, k, j, p, w, q, s)
							}
							at := float64(m.At(j, p))
							if math.Abs(at-w) > s/2+math.Ldexp(s*127, -24) || float32(at) != f[j*k+p] {
								t.Fatalf("%d×%d (%d, %d): At = %v, Float32 = %v, w = %v", n, k, j, p, at, f[j*k+p], w)
							}
						}
						if mx > 0 && top != 127 {
							t.Fatalf("%d×%d block (%d, %d): largest |Q| %d, want 127", n, k, j, g, top)
						}
					}
				}
			}
		}
	}
}

// TestQuantizeGroupExtremes checks that no dequantized weight is larger
// in magnitude than its group's max|w| (so none is infinite), on groups
// holding ±MaxFloat32 and others at the top of float32's range, and on
// random groups of every magnitude, subnormal to the largest; and that
// Int8FromNK of ±MaxFloat32 weights gives finite weights within half a
// scale step.
func TestQuantizeGroupExtremes(t *testing.T) {
	const top = math.MaxFloat32
	groups := [][]float32{
		{top}, {-top}, {top, -top, 1, -1e38}, {top, 3e38, -2e38, 0},
		{math.Nextafter32(top, 0)}, {3.4e38, -3.39e38},
		{1e-45, -1e-44}, {1.5e-36, -1e-40},
	}
	r := rand.New(rand.NewPCG(9, 10))
	for range 20000 {
		g := make([]float32, 1+r.IntN(GroupSize))
		e := r.IntN(277) - 149 // the exponent of the group's top
		for i := range g {
			g[i] = float32(math.Ldexp(r.Float64()*2-1, e))
		}
		groups = append(groups, g)
	}
	for _, g := range groups {
		var b Int8Block
		if QuantizeGroup(&b, g) != -1 {
			t.Fatalf("%v: refused", g)
		}
		var mx float32
		for _, v := range g {
			mx = max(mx, float32(math.Abs(float64(v))))
		}
		if s := float64(b.Scale); mx > 0 && math.Abs(s-float64(mx)/127) > math.Ldexp(float64(mx)/127, -23)+0x1p-149 {
			t.Fatalf("%v: scale %v, want max|w|/127 = %v to a float32 step", g, b.Scale, float64(mx)/127)
		}
		for i, v := range g {
			at := b.Scale * float32(b.Q[i])
			if math.Abs(float64(at)) > float64(mx) || math.IsInf(float64(at), 0) {
				t.Fatalf("%v: weight %d (%v) dequantizes to %v, above max|w| = %v", g, i, v, at, mx)
			}
			if b.Scale >= 0x1p-126 && math.Abs(float64(b.Scale)*float64(b.Q[i])-float64(v)) > float64(b.Scale)/2 {
				t.Fatalf("%v: weight %d (%v) quantized to %d×%v", g, i, v, b.Q[i], b.Scale)
			}
		}
	}
	nk := []float32{top, -top, 1, 0, -top, 3e38, 2, top}
	m, err := Int8FromNK(nk, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range m.Float32() {
		if math.IsInf(float64(v), 0) || math.Abs(float64(v)-float64(nk[i])) > float64(m.Blocks[i/4].Scale)/2 {
			t.Errorf("Int8FromNK: weight %d = %v dequantizes to %v", i, nk[i], v)
		}
	}
}

// TestQuantizeGroupTies checks rounding half to even and the all-zero
// group.
func TestQuantizeGroupTies(t *testing.T) {
	var b Int8Block
	w := []float32{127, 2.5, 3.5, -2.5, -3.5, 0.5, -0.5, 1.5, -127}
	want := []int8{127, 2, 4, -2, -4, 0, 0, 2, -127}
	if QuantizeGroup(&b, w) != -1 || b.Scale != 1 {
		t.Fatalf("scale %v", b.Scale)
	}
	for i := range want {
		if b.Q[i] != want[i] {
			t.Errorf("Q(%v) = %d, want %d", w[i], b.Q[i], want[i])
		}
	}
	if QuantizeGroup(&b, make([]float32, 32)) != -1 || b != (Int8Block{}) {
		t.Errorf("zero group: %+v", b)
	}
}

func TestInt8NonFinite(t *testing.T) {
	for _, v := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		nk := make([]float32, 2*40)
		nk[1*40+35] = v
		if _, err := Int8FromNK(nk, 2, 40); err == nil || !strings.Contains(err.Error(), "(1, 35)") {
			t.Errorf("Int8FromNK with %v: err = %v, want one naming (1, 35)", v, err)
		}
		kn := make([]float32, 40*2)
		kn[35*2+1] = v
		if _, err := Int8FromKN(kn, 40, 2); err == nil || !strings.Contains(err.Error(), "(35, 1)") {
			t.Errorf("Int8FromKN with %v: err = %v, want one naming (35, 1)", v, err)
		}
	}
}

func TestChecks(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func()
		want string
	}{
		{"BF16 short", func() { (&BF16{N: 2, K: 33, Data: make([]uint16, 127)}).Check("f") }, "f: BF16 2×33: len(Data) = 127, want >= 2×64"},
		{"BF16 negative", func() { (&BF16{N: -1, K: 3}).Check("f") }, "sizes must be >= 0"},
		{"BF16 nil", func() { (*BF16)(nil).Check("f") }, "nil *lowbit.BF16"},
		{"Int8 short", func() { (&Int8{N: 3, K: 64, Blocks: make([]Int8Block, 5)}).Check("f") }, "f: Int8 3×64: len(Blocks) = 5, want >= 3×2"},
		{"Int8 nil", func() { (*Int8)(nil).Check("f") }, "nil *lowbit.Int8"},
		{"At outside", func() { NewBF16(2, 3).At(2, 0) }, "lowbit.BF16.At: (2, 0) is outside the 2×3 matrix"},
		{"Int8 At outside", func() { NewInt8(2, 3).At(0, 3) }, "lowbit.Int8.At: (0, 3)"},
		{"Row short", func() { NewBF16(2, 3).Row(0, make([]float32, 2)) }, "lowbit.BF16.Row: len(dst) = 2, want >= 3"},
		{"FromKN short", func() { BF16FromKN(make([]float32, 5), 2, 3) }, "lowbit.BF16FromKN: len(w) = 5, want >= 2×3"},
		{"Int8FromNK negative", func() { Int8FromNK(nil, -1, 3) }, "lowbit.Int8FromNK: n = -1"},
		{"QuantizeGroup long", func() { QuantizeGroup(new(Int8Block), make([]float32, 33)) }, "lowbit.QuantizeGroup: len(w) = 33, more than a group of 32"},
		// Sizes whose elements or bytes overflow int (n·k wrapping to 0
		// and the like), and sizes no allocation can hold.
		{"NewBF16 overflow", func() { NewBF16(pow2(40), pow2(40)) }, "lowbit.NewBF16: 1099511627776×1099511627776: 1099511627776·34359738368·32 elements of 2 bytes, more than an int can count"},
		{"NewInt8 overflow", func() { NewInt8(pow2(40), pow2(40)) }, "lowbit.NewInt8: 1099511627776×1099511627776: "},
		{"NewInt8 bytes overflow", func() { NewInt8(pow2(58), 32) }, "lowbit.NewInt8: 288230376151711744×32: 288230376151711744 elements of 36 bytes"},
		{"NewBF16 stride overflow", func() { NewBF16(1, math.MaxInt) }, "lowbit.NewBF16: 1×9223372036854775807: "},
		{"NewBF16 stride·n overflow", func() { NewBF16(pow2(59), 1) }, "lowbit.NewBF16: 576460752303423488×1: "},
		{"NewBF16 too large", func() { NewBF16(pow2(35), 1<<20) }, "lowbit.NewBF16: cannot allocate an 34359738368×1048576 matrix"},
		{"BF16FromKN overflow", func() { BF16FromKN(nil, pow2(40), pow2(40)) }, "lowbit.BF16FromKN: 1099511627776×1099511627776: "},
		{"BF16FromNK overflow", func() { BF16FromNK(nil, pow2(40), pow2(40)) }, "lowbit.BF16FromNK: 1099511627776×1099511627776: "},
		{"Int8FromKN overflow", func() { Int8FromKN(nil, pow2(40), pow2(40)) }, "lowbit.Int8FromKN: 1099511627776×1099511627776: "},
		{"Int8FromNK overflow", func() { Int8FromNK(nil, pow2(40), pow2(40)) }, "lowbit.Int8FromNK: 1099511627776×1099511627776: "},
		{"BF16 Check overflow", func() { (&BF16{N: pow2(40), K: pow2(40)}).Check("f") }, "f: BF16 1099511627776×1099511627776: "},
		{"Int8 Check overflow", func() { (&Int8{N: 1, K: math.MaxInt}).Check("f") }, "f: Int8 1×9223372036854775807: "},
	} {
		msg := func() (msg string) {
			defer func() { msg, _ = recover().(string) }()
			tc.f()
			return ""
		}()
		if !strings.Contains(msg, tc.want) {
			t.Errorf("%s: panic %q, want one containing %q", tc.name, msg, tc.want)
		}
	}
	if g := Groups(math.MaxInt); g != math.MaxInt/GroupSize+1 {
		t.Errorf("Groups(MaxInt) = %d, want %d", g, math.MaxInt/GroupSize+1)
	}
	(&BF16{N: 2, K: 33, Data: make([]uint16, 128)}).Check("f")
	(&Int8{N: 0, K: 0}).Check("f")
}

// TestQuantizeInt16 checks QuantizeInt16's contract on a table of rows:
// the scale is max|x|/Int16Max in float32, every q within Int16Max, every
// element within half a scale step (and float32's rounding of the scale)
// of scale*q, the largest element at ±Int16Max, ties to even; rows with a
// NaN, an infinity or only tiny elements are refused.
func TestQuantizeInt16(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	normal := make([]float32, 200)
	for i := range normal {
		normal[i] = float32(r.NormFloat64() * 3)
	}
	huge := []float32{math.MaxFloat32, -1, 1e30, -math.MaxFloat32 / 3}
	// With max 32767, the scale is 1 and x/scale is x: ties go to even.
	ties := []float32{32767, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 7.25, -7.75}
	tiesQ := []int16{32767, 0, 2, 2, 0, -2, -2, 7, -8}
	small := []float32{minInt16Max, -minInt16Max / 2, 0}
	subnormal := []float32{1, 1e-40, -1e-45} // a normal max: tiny elements quantize to 0
	for _, tc := range []struct {
		name string
		x    []float32
		ok   bool
		q    []int16 // expected q when not nil
	}{
		{"empty", nil, true, []int16{}},
		{"zeros", []float32{0, float32(math.Copysign(0, -1)), 0}, true, []int16{0, 0, 0}},
		{"normal", normal, true, nil},
		{"huge", huge, true, nil},
		{"ties", ties, true, tiesQ},
		{"smallest accepted max", small, true, nil},
		{"subnormal elements", subnormal, true, []int16{32767, 0, 0}},
		{"NaN", []float32{1, float32(math.NaN()), 2}, false, nil},
		{"+Inf", []float32{1, float32(math.Inf(1))}, false, nil},
		{"-Inf", []float32{float32(math.Inf(-1)), 1}, false, nil},
		{"max too small", []float32{minInt16Max / 2, 0}, false, nil},
		{"subnormal max", []float32{1e-42, -1e-44}, false, nil},
	} {
		q := make([]int16, len(tc.x)+2)
		q[len(tc.x)], q[len(tc.x)+1] = 11, 12
		scale, ok := QuantizeInt16(q, tc.x)
		if ok != tc.ok {
			t.Errorf("%s: ok = %v, want %v", tc.name, ok, tc.ok)
			continue
		}
		if q[len(tc.x)] != 11 || q[len(tc.x)+1] != 12 {
			t.Errorf("%s: wrote beyond len(x)", tc.name)
		}
		if !ok {
			continue
		}
		var mx float64
		for _, v := range tc.x {
			mx = math.Max(mx, math.Abs(float64(v)))
		}
		if want := float32(mx / Int16Max); scale != want {
			t.Errorf("%s: scale = %v, want %v", tc.name, scale, want)
		}
		for p, v := range tc.x {
			if tc.q != nil && q[p] != tc.q[p] {
				t.Errorf("%s: q[%d] = %d, want %d", tc.name, p, q[p], tc.q[p])
			}
			if q[p] > Int16Max || q[p] < -Int16Max {
				t.Errorf("%s: q[%d] = %d beyond ±%d", tc.name, p, q[p], Int16Max)
			}
			err := math.Abs(float64(v) - float64(scale)*float64(q[p]))
			if err > float64(scale)*(0.5+0x1p-20) {
				t.Errorf("%s: x[%d] = %v, scale*q = %v: error %g over half a step %g", tc.name, p, v, float64(scale)*float64(q[p]), err, float64(scale)/2)
			}
			if math.Abs(float64(v)) == mx && mx > 0 && q[p] != Int16Max && q[p] != -Int16Max {
				t.Errorf("%s: the largest element x[%d] = %v quantized to %d", tc.name, p, v, q[p])
			}
		}
	}
	defer func() {
		if e := recover(); e == nil || !strings.Contains(e.(string), "lowbit.QuantizeInt16: len(q) = 1, want >= len(x) = 2") {
			t.Errorf("short q: panic %v", e)
		}
	}()
	QuantizeInt16(make([]int16, 1), []float32{1, 2})
}

// pow2 returns 2ⁿ as an int, computed at run time so that sizes beyond a
// 32-bit int still compile there (the cases that use them assume a
// 64-bit int; on 32 bits they come out 0).
func pow2(n int) int { return 1 << n }

// TestQuantizeInt16ScaledShortQ checks that QuantizeInt16Scaled refuses a
// q shorter than x, naming the function and the lengths, before writing.
func TestQuantizeInt16ScaledShortQ(t *testing.T) {
	q := []int16{7}
	defer func() {
		if e := recover(); e == nil || !strings.Contains(e.(string), "lowbit.QuantizeInt16Scaled: len(q) = 1, want >= len(x) = 2") {
			t.Errorf("short q: panic %v", e)
		}
		if q[0] != 7 {
			t.Errorf("short q: q[0] written: %d", q[0])
		}
	}()
	QuantizeInt16Scaled(q, []float32{1, 2}, 1)
}
