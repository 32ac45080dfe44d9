package kernels

import (
	"fmt"
	"math"
	"testing"

	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

// pairImpls returns the implementations whose GemmBF16 multiplies one row
// of A as two bfloat16 (hi + lo), skipping the test when there are none,
// and the avx2 implementation, whose one-row BF16 kernel is the float32
// one the pair path falls back to.
func pairImpls(t *testing.T) (pairs []*Impl, avx2 *Impl) {
	t.Helper()
	for _, p := range Implementations() {
		if p.set.BF16Pair {
			pairs = append(pairs, p)
		}
		if p.Name() == "avx2" {
			avx2 = p
		}
	}
	if len(pairs) == 0 || avx2 == nil {
		t.Skip("no implementation multiplies BF16 weights by a pair of bfloat16 on this CPU (it needs AVX512_BF16, on a class whose VDPBF16PS outruns converting the weights; the kernel itself is tested in kernels/amd64)")
	}
	return pairs, avx2
}

// TestGemvBF16PairSweep checks the one-row BF16 product of the
// implementations with the pair kernel against the float64 reference
// (within the tolerance of lowbitRef, hi + lo within 2⁻¹⁶ of x) across
// the kernel's blocks of 8 rows and its single rows, the groups of K and
// the tail group, both splits of columns between goroutines, every
// alpha and beta kind, odd strides and unaligned starts.
func TestGemvBF16PairSweep(t *testing.T) {
	pairs, _ := pairImpls(t)
	ns := []int{1, 2, 7, 8, 9, 15, 16, 17, 23, 63, 64, 65, 129}
	ks := []int{1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 96, 100, 257, 768}
	seed := uint64(100)
	for _, p := range pairs {
		for _, n := range ns {
			for _, k := range ks {
				seed++
				tc := lowbitCase{m: 1, n: n, k: k, alpha: 1, beta: 0, padC: int(seed % 2), off: int(seed % 4)}
				switch seed % 3 {
				case 1:
					tc.alpha, tc.beta = -0.75, 1
				case 2:
					tc.alpha, tc.beta = 2, -0.5
				}
				checkLowbitCase(t, p, lowbitFormats[0], tc, seed)
			}
		}
		// Split between goroutines (n·k >= lowbit.MinParallel).
		checkLowbitCase(t, p, lowbitFormats[0], lowbitCase{m: 1, n: 1029, k: 300, alpha: 1, beta: 0.5, off: 1}, 7)
	}
}

// TestGemvBF16PairFallback checks the rows of A and of W the pair kernel
// leaves to the float32 kernel: a row of A with a NaN or an infinity, or
// with an element whose scaled hi or lo part VDPBF16PS would count as 0,
// gives what the avx2 implementation gives bit for bit; a row of W with
// an infinite or NaN weight, a subnormal weight, or a product that
// overflows at the split's scale gives avx2's result for that row and
// leaves every other row, of its block of 8 or not, as it was without it.
// A zero weight, which sends a block of 8 to the one-row loop, changes
// nothing either.
func TestGemvBF16PairFallback(t *testing.T) {
	pairs, avx2 := pairImpls(t)
	const n, k = 27, 70
	nk := make([]float32, n*k)
	r := newRand(9)
	for i := range nk {
		nk[i] = float32(r.NormFloat64())
	}
	w := lowbit.BF16FromNK(nk, n, k)
	base := randSlice(r, k)
	gemv := func(p *Impl, w *lowbit.BF16, x []float32) []float32 {
		y := make([]float32, n)
		for j := range y {
			y[j] = float32(j) - 3
		}
		p.GemvBF16(1.5, w, x, 0.5, y)
		return y
	}
	same := func(a, b float32) bool {
		return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
	}
	for _, p := range pairs {
		for _, tc := range []struct {
			name string
			set  func(x []float32)
		}{
			{"NaN", func(x []float32) { x[40] = float32(math.NaN()) }},
			{"+Inf", func(x []float32) { x[69] = float32(math.Inf(1)) }},
			{"-Inf in the tail group", func(x []float32) { x[65] = float32(math.Inf(-1)) }},
			// max|x| 2^100 scales x by 2^-37: 2^-140 becomes 2^-177.
			{"2^-140 beside 2^100", func(x []float32) { x[3], x[50] = 0x1p100, 0x1p-140 }},
			// 2^-149 needs a scale of 2^46 or more, 2^127 one below 2^-63.
			{"2^-149 beside 2^127", func(x []float32) { x[66], x[0] = 0x1p127, 0x1p-149 }},
			// Beside 2^100 (scale 2^-37), (1+2^-20)·2^-75 becomes v =
			// (1+2^-20)·2^-112, normal, but its lo, 2^-132, is not.
			{"lo subnormal at the scale", func(x []float32) { x[10], x[11] = 0x1p100, float32(math.Ldexp(1+0x1p-20, -75)) }},
		} {
			x := append([]float32(nil), base...)
			tc.set(x)
			got, want := gemv(p, w, x), gemv(avx2, w, x)
			for j := range got {
				if !same(got[j], want[j]) {
					t.Errorf("%s, x with %s: y[%d] = %v, avx2 %v", p.Name(), tc.name, j, got[j], want[j])
				}
			}
		}
		clean := gemv(p, w, base)
		for _, bad := range []struct {
			row, col int
			v        float32
			fallback bool // the row comes from the float32 kernel
		}{
			{0, 0, float32(math.Inf(1)), true},
			{3, 33, float32(math.Inf(-1)), true},
			{7, 69, float32(math.NaN()), true},
			{12, 5, float32(math.Inf(1)), true},
			{25, 64, float32(math.Inf(-1)), true},
			{1, 2, 1e-39, true},       // subnormal, in a block of 8
			{9, 68, -5e-40, true},     // subnormal, in the last group of a block
			{26, 31, 0x1p-133, true},  // subnormal, a single row
			{4, 20, 0x1.fep127, true}, // x·w overflows at the scale
			{17, 1, 0, false},         // a zero weight
			{2, 0, float32(math.Copysign(0, -1)), false},
		} {
			wb := &lowbit.BF16{N: w.N, K: w.K, Data: append([]uint16(nil), w.Data...)}
			wb.Set(bad.row, bad.col, bad.v)
			got, ref := gemv(p, wb, base), gemv(avx2, wb, base)
			if !bad.fallback {
				y0 := make([]float32, n)
				for j := range y0 {
					y0[j] = float32(j) - 3
				}
				checkPairBound(t, p, avx2, fmt.Sprintf("weight (%d, %d) = %v", bad.row, bad.col, bad.v), 1.5, wb, base, 0.5, y0)
			}
			for j := range got {
				want := clean[j]
				if j == bad.row {
					want = ref[j]
					if !bad.fallback {
						continue // within the bound (above)
					}
				}
				if !same(got[j], want) {
					t.Errorf("%s, weight (%d, %d) = %v: y[%d] = %v, want %v", p.Name(), bad.row, bad.col, bad.v, j, got[j], want)
				}
			}
		}
	}
}

// pairBound is the error the contract allows the pair kernel for y =
// alpha·Σ w·x + beta·y0 against its float64 value: 2⁻¹⁶ of |alpha|·Σ|w·x|
// (hi + lo against x), float32's summation error (K+2)·2⁻²³ of
// |alpha|·Σ|w·x| + |beta·y0|, the partial sums VDPBF16PS flushes to zero,
// |alpha|·K'·2⁻¹⁸⁷·max(max|x|, 2⁻⁶⁴) for K' = K rounded up to a multiple
// of 32, and the rounding of a subnormal result, 2⁻¹⁴⁹.
func pairBound(alpha, beta, y0 float64, sa, mx float64, k int) float64 {
	kp := float64((k + 31) / 32 * 32)
	return 0x1p-16*math.Abs(alpha)*sa + float64(k+2)*0x1p-23*(math.Abs(alpha)*sa+math.Abs(beta*y0)) +
		math.Abs(alpha)*kp*0x1p-187*math.Max(mx, 0x1p-64) + 0x1p-149
}

// checkPairBound runs GemvBF16 with p and checks every output against the
// float64 value within pairBound (within float32's own bound when it is
// the float32 kernel's, avx2's, bit for bit), or, when the output is not
// finite, that it is the float32 kernel's bit for bit; an output whose
// float64 value is beyond float32's range is not checked.
func checkPairBound(t *testing.T, p, avx2 *Impl, name string, alpha float32, w *lowbit.BF16, x []float32, beta float32, y0 []float32) {
	t.Helper()
	got := append([]float32(nil), y0...)
	f32 := append([]float32(nil), y0...)
	p.GemvBF16(alpha, w, x, beta, got)
	avx2.GemvBF16(alpha, w, x, beta, f32)
	var mx float64
	for _, v := range x {
		mx = math.Max(mx, math.Abs(float64(v)))
	}
	for j := 0; j < w.N; j++ {
		var s, sa float64
		for q := 0; q < w.K; q++ {
			v := float64(w.At(j, q)) * float64(x[q])
			s += v
			sa += math.Abs(v)
		}
		var yb float64
		if beta != 0 {
			yb = float64(beta) * float64(y0[j])
		}
		want := float64(alpha)*s + yb
		if math.Abs(want) > math.MaxFloat32 {
			continue
		}
		g := float64(got[j])
		if math.IsInf(g, 0) || math.IsNaN(g) {
			if math.Float32bits(got[j]) != math.Float32bits(f32[j]) {
				t.Errorf("%s %s: y[%d] = %v, want %.7g (the float32 kernel's %v)", p.Name(), name, j, got[j], want, f32[j])
			}
			continue
		}
		e, b := math.Abs(g-want), pairBound(float64(alpha), float64(beta), float64(y0[j]), sa, mx, w.K)
		if math.Float32bits(got[j]) == math.Float32bits(f32[j]) {
			// A row left to the float32 kernel (or as exact): float32's
			// bound, with its sum's gradual underflow, |alpha|·(K+2)·2⁻¹⁴⁹.
			b = math.Max(b, float64(w.K+2)*0x1p-23*(math.Abs(float64(alpha))*sa+math.Abs(yb))+
				math.Abs(float64(alpha))*float64(w.K+2)*0x1p-149+0x1p-149)
		}
		if !(e <= b) {
			t.Errorf("%s %s: y[%d] = %v, want %.7g: error %.3g, bound %.3g (float32 kernel %v)", p.Name(), name, j, got[j], want, e, b, f32[j])
		}
	}
}

// TestGemvBF16PairBound checks the pair kernel's bound (pairBound) on
// operands at float32's ends: subnormal weights, elements of x whose hi
// or lo part is subnormal, products that overflow, and a random search
// with weights and x over float32's whole range and alpha up to 1e20.
func TestGemvBF16PairBound(t *testing.T) {
	pairs, avx2 := pairImpls(t)
	maxBF16 := lowbit.FromBF16(0x7f7f)
	for _, p := range pairs {
		for _, tc := range []struct {
			name string
			w, x []float32 // the first elements of a 1×32 W and x
		}{
			{"weight 1e-39, x 1e30", []float32{1e-39}, []float32{1e30}},
			{"x 1e-39 under weight 1e38", []float32{0, 1e38}, []float32{1, 1e-39}},
			{"x 3e-38 under weight 1e38", []float32{0, 1e38}, []float32{1, 3e-38}},
			{"x 1.00391 under the largest weight", []float32{maxBF16}, []float32{1.00391}},
			{"x 2^-149 under weight 2^127", []float32{1, 0x1p127}, []float32{1, 0x1p-149}},
			{"subnormal products", []float32{0x1p-126, 0x1p-120}, []float32{0x1p-10, 0x1p-20}},
			{"weight 2^-133 beside 1", []float32{1, 0x1p-133}, []float32{1e-30, 1e30}},
		} {
			w := lowbit.NewBF16(1, 32)
			x := make([]float32, 32)
			for i := range tc.w {
				w.Set(0, i, tc.w[i])
				x[i] = tc.x[i]
			}
			checkPairBound(t, p, avx2, tc.name, 1, w, x, 0, make([]float32, 1))
			checkPairBound(t, p, avx2, tc.name+", alpha 1e20", 1e20, w, x, 0.5, []float32{3})
		}
		// Random search: exponents over the whole range, a share of them
		// at the ends.
		r := newRand(30)
		wide := func(lo, hi int) float32 {
			return float32(math.Ldexp(r.Float64()*2-1, lo+r.IntN(hi-lo+1)))
		}
		for it := 0; it < 1500; it++ {
			n, k := 1+r.IntN(20), 1+r.IntN(100)
			w := lowbit.NewBF16(n, k)
			x := make([]float32, k)
			span := 10 + r.IntN(270) // binades x and w spread over
			for i := range x {
				x[i] = wide(max(-149, 20-span), min(128, 20+span/2))
				if r.IntN(8) == 0 {
					x[i] = 0
				}
			}
			for j := 0; j < n; j++ {
				for q := 0; q < k; q++ {
					w.Set(j, q, wide(max(-133, -span), min(127, span/3)))
				}
			}
			alpha := float32(math.Ldexp(r.Float64()+0.5, r.IntN(134)-67))
			beta := []float32{0, 1, -0.5}[r.IntN(3)]
			y0 := make([]float32, n)
			for j := range y0 {
				y0[j] = wide(-20, 20)
			}
			checkPairBound(t, p, avx2, fmt.Sprintf("random %d (%dx%d, span %d, alpha %v)", it, n, k, span, alpha), alpha, w, x, beta, y0)
		}
	}
}

// TestGemvBF16PairAccuracy checks that the pair kernel's error on GPT-2's
// shapes, against the float64 dot products of the same bfloat16 weights,
// stays within 2⁻¹⁶·Σ|w·x| plus float32's summation error, and reports
// how far the largest is from float32's own (the avx2 kernel's).
func TestGemvBF16PairAccuracy(t *testing.T) {
	pairs, avx2 := pairImpls(t)
	for _, p := range pairs {
		for _, sh := range [][2]int{{768, 768}, {3072, 768}, {768, 3072}} {
			n, k := sh[0], sh[1]
			r := newRand(uint64(n + k))
			nk := make([]float32, n*k)
			for i := range nk {
				nk[i] = float32(r.NormFloat64() * 0.02)
			}
			w := lowbit.BF16FromNK(nk, n, k)
			x := make([]float32, k)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			got, f32 := make([]float32, n), make([]float32, n)
			p.GemvBF16(1, w, x, 0, got)
			avx2.GemvBF16(1, w, x, 0, f32)
			var worst, worstF32 float64
			for j := 0; j < n; j++ {
				var s, sa float64
				for q := 0; q < k; q++ {
					v := float64(w.At(j, q)) * float64(x[q])
					s += v
					sa += math.Abs(v)
				}
				e := math.Abs(float64(got[j])-s) / sa
				if e > 0x1p-16+float64(k+2)*0x1p-24 {
					t.Errorf("%s %dx%d: y[%d] = %v, want %v: error %.3g of Σ|w·x|", p.Name(), n, k, j, got[j], s, e)
				}
				worst = math.Max(worst, e)
				worstF32 = math.Max(worstF32, math.Abs(float64(f32[j])-s)/sa)
			}
			t.Logf("%s %dx%d: largest error %.3g of Σ|w·x| (float32 kernel: %.3g)", p.Name(), n, k, worst, worstF32)
		}
	}
}
