package kernels

import (
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
		t.Skip("no implementation multiplies BF16 weights by a pair of bfloat16 on this CPU (it needs AVX512_BF16)")
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
		// Split between goroutines (n·k >= wdots.MinParallel).
		checkLowbitCase(t, p, lowbitFormats[0], lowbitCase{m: 1, n: 1029, k: 300, alpha: 1, beta: 0.5, off: 1}, 7)
	}
}

// TestGemvBF16PairFallback checks the rows of A and of W the pair kernel
// leaves to the float32 kernel: a row of A with a NaN or an infinity, or
// whose max|x| is in (0, 2⁻¹⁰⁰) or from 2¹²⁶ up, gives what the avx2
// implementation gives bit for bit; a row of W with an infinite or NaN
// weight gives avx2's result for that row and leaves every other row,
// of its block of 8 or not, as it was without it.
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
			{"max|x| below 2^-100", func(x []float32) {
				for i := range x {
					x[i] *= 0x1p-101
				}
			}},
			{"max|x| 2^126", func(x []float32) { x[3] = 0x1p126 }},
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
		// In range just inside the bounds, the pair kernel is used: within
		// its tolerance, not necessarily avx2's bits.
		clean := gemv(p, w, base)
		for _, bad := range []struct {
			row, col int
			v        float32
		}{{0, 0, float32(math.Inf(1))}, {3, 33, float32(math.Inf(-1))}, {7, 69, float32(math.NaN())}, {12, 5, float32(math.Inf(1))}, {25, 64, float32(math.Inf(-1))}} {
			wb := &lowbit.BF16{N: w.N, K: w.K, Data: append([]uint16(nil), w.Data...)}
			wb.Set(bad.row, bad.col, bad.v)
			got, ref := gemv(p, wb, base), gemv(avx2, wb, base)
			for j := range got {
				want := clean[j]
				if j == bad.row {
					want = ref[j]
				}
				if !same(got[j], want) {
					t.Errorf("%s, weight (%d, %d) = %v: y[%d] = %v, want %v", p.Name(), bad.row, bad.col, bad.v, j, got[j], want)
				}
			}
			if !math.IsInf(float64(got[bad.row]), 0) && !math.IsNaN(float64(got[bad.row])) {
				t.Errorf("%s, weight (%d, %d) = %v: y[%d] = %v, want an infinity or NaN", p.Name(), bad.row, bad.col, bad.v, bad.row, got[bad.row])
			}
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
