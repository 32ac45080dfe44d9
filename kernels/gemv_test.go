package kernels

import (
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// gemvCase is one Gemv problem: A is m×n with leading dimension n+pad, and
// every slice starts off elements into its backing array.
type gemvCase struct {
	trans       bool
	m, n        int
	alpha, beta float32
	pad, off    int
}

// gemvData holds a case's inputs; y has 3 guard elements on either side
// of its ylen elements (y0 is the whole buffer).
type gemvData struct {
	a, x, y0, y []float32
	lda         int
	xlen, ylen  int
}

func (tc gemvCase) data(r *rand.Rand) gemvData {
	d := gemvData{lda: max(tc.n, 1) + tc.pad, xlen: tc.n, ylen: tc.m}
	if tc.trans {
		d.xlen, d.ylen = tc.m, tc.n
	}
	d.a = offsetCopy(randSlice(r, tc.m*d.lda), tc.off)
	d.x = offsetCopy(randSlice(r, d.xlen), tc.off)
	d.y0 = offsetCopy(randSlice(r, d.ylen+6), tc.off)
	d.y = d.y0[3 : 3+d.ylen]
	return d
}

// gemvRef returns y = alpha*op(A)*x + beta*y in float64 and, for each
// element, the magnitude |alpha|·Σ|op(A)·x| + |beta·y| of its terms.
func gemvRef(tc gemvCase, d gemvData) (ref, mag []float64) {
	ref = make([]float64, d.ylen)
	mag = make([]float64, d.ylen)
	for i := range ref {
		var s, sa float64
		for p := 0; p < d.xlen; p++ {
			var av float32
			if tc.trans {
				av = d.a[p*d.lda+i]
			} else {
				av = d.a[i*d.lda+p]
			}
			v := float64(av) * float64(d.x[p])
			s += v
			sa += math.Abs(v)
		}
		cv := 0.0
		if tc.beta != 0 {
			cv = float64(tc.beta) * float64(d.y[i])
		}
		ref[i] = float64(tc.alpha)*s + cv
		mag[i] = math.Abs(float64(tc.alpha))*sa + math.Abs(cv)
	}
	return ref, mag
}

// checkGemvCase runs tc on p and compares y with the float64 reference
// within Gemv's documented bound (gemmTol with k = len(x)), the guard
// elements around y untouched, and a second run bitwise equal.
func checkGemvCase(t *testing.T, p *Impl, tc gemvCase, seed uint64) {
	t.Helper()
	d := tc.data(newRand(seed))
	ref, mag := gemvRef(tc, d)
	orig := append([]float32(nil), d.y0...)
	p.Gemv(tc.trans, tc.m, tc.n, tc.alpha, d.a, d.lda, d.x, tc.beta, d.y)
	for i, v := range d.y0 {
		j := i - 3
		if j < 0 || j >= d.ylen {
			if math.Float32bits(v) != math.Float32bits(orig[i]) {
				t.Fatalf("%+v: guard y0[%d] changed from %v to %v", tc, i, orig[i], v)
			}
			continue
		}
		if !closeTo(v, float32(ref[j]), gemmTol(d.xlen, mag[j])) {
			t.Fatalf("%+v: y[%d] = %v, want %v (±%g)", tc, j, v, ref[j], gemmTol(d.xlen, mag[j]))
		}
	}
	first := append([]float32(nil), d.y...)
	copy(d.y0, orig)
	p.Gemv(tc.trans, tc.m, tc.n, tc.alpha, d.a, d.lda, d.x, tc.beta, d.y)
	for i := range first {
		if math.Float32bits(first[i]) != math.Float32bits(d.y[i]) {
			t.Fatalf("%+v: y[%d] = %v on one run, %v on the next", tc, i, first[i], d.y[i])
		}
	}
}

// gemvSizes cross every unroll and tail boundary of the kernels: the
// vector widths (4, 8, 16 lanes), their multiples up to the unrolled
// blocks, and the row blocks of the dot kernels (up to 8 rows).
var gemvSizes = []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 23, 31, 32, 33, 47, 63, 64, 65, 100, 127, 128, 129, 255, 257}

// TestGemvSweep compares every implementation with the float64 reference
// over all pairs of gemvSizes, both transposes, odd and even leading
// dimensions, unaligned starts and several alpha, beta.
func TestGemvSweep(t *testing.T) {
	scalars := [][2]float32{{1, 0}, {-0.5, 1}, {2, -0.75}}
	sizes := gemvSizes
	if testing.Short() {
		sizes = []int{0, 1, 3, 8, 9, 17, 33, 64, 65, 129}
	}
	forEachImpl(t, func(t *testing.T, p *Impl) {
		seed := uint64(1)
		for _, trans := range []bool{false, true} {
			for _, m := range sizes {
				for _, n := range sizes {
					sc := scalars[(m+n)%len(scalars)]
					tc := gemvCase{trans: trans, m: m, n: n, alpha: sc[0], beta: sc[1], pad: (m + 2*n) % 4, off: (m + n) % 5}
					checkGemvCase(t, p, tc, seed)
					seed++
				}
			}
		}
		// Transposed, beyond the size from which the SIMD drivers read A
		// row by row (the stream kernels): rows past a multiple of the
		// rows a pass takes, columns past a block of sums into whole
		// steps, a single vector and a masked tail.
		for _, sh := range [][2]int{{1025, 1029}, {263, 4179}, {1030, 1100}} {
			sc := scalars[seed%uint64(len(scalars))]
			tc := gemvCase{trans: true, m: sh[0], n: sh[1], alpha: sc[0], beta: sc[1], pad: int(seed % 4), off: int(seed % 5)}
			checkGemvCase(t, p, tc, seed)
			seed++
		}
	})
}

// TestGemvSpecial checks the BLAS rules on every implementation: beta = 0
// ignores y (NaN included); alpha = 0 reads neither A nor x (NaN there
// does not reach y) and scales y by beta; an empty op(A) row scales y.
func TestGemvSpecial(t *testing.T) {
	nan := float32(math.NaN())
	forEachImpl(t, func(t *testing.T, p *Impl) {
		for _, trans := range []bool{false, true} {
			for _, sz := range [][2]int{{5, 37}, {64, 64}, {33, 1}, {1, 200}} {
				m, n := sz[0], sz[1]
				tc := gemvCase{trans: trans, m: m, n: n, alpha: 1.5}
				d := tc.data(newRand(uint64(m*n + 7)))
				ref, mag := gemvRef(tc, d)
				for i := range d.y {
					d.y[i] = nan
				}
				p.Gemv(trans, m, n, 1.5, d.a, d.lda, d.x, 0, d.y)
				for i, v := range d.y {
					if !closeTo(v, float32(ref[i]), gemmTol(d.xlen, mag[i])) {
						t.Fatalf("trans=%v %d×%d beta=0 over NaN: y[%d] = %v, want %v", trans, m, n, i, v, ref[i])
					}
				}
				for i := range d.a {
					d.a[i] = nan
				}
				for i := range d.x {
					d.x[i] = nan
				}
				for i := range d.y {
					d.y[i] = float32(i)
				}
				p.Gemv(trans, m, n, 0, d.a, d.lda, d.x, 0.5, d.y)
				for i, v := range d.y {
					if v != 0.5*float32(i) {
						t.Fatalf("trans=%v %d×%d alpha=0: y[%d] = %v, want %v", trans, m, n, i, v, 0.5*float32(i))
					}
				}
				p.Gemv(trans, m, n, 0, d.a, d.lda, d.x, 0, d.y)
				for i, v := range d.y {
					if v != 0 {
						t.Fatalf("trans=%v %d×%d alpha=0 beta=0: y[%d] = %v, want 0", trans, m, n, i, v)
					}
				}
			}
		}
		// op(A) with no columns: y = beta*y.
		y := []float32{1, 2, 3}
		p.Gemv(false, 3, 0, 1, nil, 1, nil, 2, y)
		p.Gemv(true, 0, 3, 1, nil, 3, nil, 2, y)
		if y[0] != 4 || y[1] != 8 || y[2] != 12 {
			t.Fatalf("empty op(A): y = %v, want [4 8 12]", y)
		}
	})
}

// TestGemvDeterministicSplit checks that a Gemv large enough to be split
// between goroutines gives bitwise the results of GOMAXPROCS=1.
func TestGemvDeterministicSplit(t *testing.T) {
	if testing.Short() {
		t.Skip("large problem")
	}
	for _, p := range nonGeneric() {
		t.Run(p.Name(), func(t *testing.T) {
			for _, trans := range []bool{false, true} {
				tc := gemvCase{trans: trans, m: 1031, n: 1100, alpha: 1, beta: 0.5, pad: 3}
				d := tc.data(newRand(3))
				orig := append([]float32(nil), d.y...)
				prev := runtime.GOMAXPROCS(1)
				p.Gemv(trans, tc.m, tc.n, 1, d.a, d.lda, d.x, 0.5, d.y)
				one := append([]float32(nil), d.y...)
				runtime.GOMAXPROCS(max(prev, 4))
				copy(d.y, orig)
				p.Gemv(trans, tc.m, tc.n, 1, d.a, d.lda, d.x, 0.5, d.y)
				runtime.GOMAXPROCS(prev)
				for i := range one {
					if math.Float32bits(one[i]) != math.Float32bits(d.y[i]) {
						t.Fatalf("trans=%v: y[%d] = %v with one thread, %v with several", trans, i, one[i], d.y[i])
					}
				}
			}
		})
	}
}

// TestGemvChecks checks that bad arguments panic naming Gemv, the
// argument and the numbers.
func TestGemvChecks(t *testing.T) {
	buf := make([]float32, 100)
	cases := []struct {
		name string
		f    func()
		want string
	}{
		{"negative m", func() { Gemv(false, -1, 2, 1, buf, 2, buf, 0, buf) }, "kernels.Gemv: m = -1"},
		{"negative n", func() { Gemv(false, 2, -3, 1, buf, 2, buf, 0, buf) }, "kernels.Gemv: n = -3"},
		{"small lda", func() { Gemv(false, 2, 4, 1, buf, 3, buf, 0, buf) }, "lda = 3, want >= max(n, 1) = 4"},
		{"zero lda", func() { Gemv(false, 2, 0, 1, buf, 0, buf, 0, buf) }, "lda = 0, want >= max(n, 1) = 1"},
		{"short a", func() { Gemv(false, 5, 4, 1, buf[:10], 4, buf[10:], 0, buf[20:]) }, "len(a) = 10, want >= 20"},
		{"short x", func() { Gemv(false, 2, 4, 1, buf[:8], 4, buf[10:13], 0, buf[20:]) }, "len(x) = 3, want >= 4"},
		{"short y", func() { Gemv(false, 2, 4, 1, buf[:8], 4, buf[10:14], 0, buf[20:21]) }, "len(y) = 1, want >= 2"},
		{"short x trans", func() { Gemv(true, 3, 4, 1, buf[:12], 4, buf[20:22], 0, buf[30:]) }, "len(x) = 2, want >= 3"},
		{"short y trans", func() { Gemv(true, 3, 4, 1, buf[:12], 4, buf[20:23], 0, buf[30:33]) }, "len(y) = 3, want >= 4"},
		{"y overlaps a", func() { Gemv(false, 2, 4, 1, buf[:8], 4, buf[10:14], 0, buf[7:9]) }, "kernels.Gemv: y overlaps a"},
		{"y overlaps x", func() { Gemv(true, 2, 4, 1, buf[:8], 4, buf[10:12], 0, buf[11:15]) }, "kernels.Gemv: y overlaps x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				r := recover()
				msg, _ := r.(string)
				if !strings.Contains(msg, c.want) {
					t.Fatalf("panic %v, want one containing %q", r, c.want)
				}
			}()
			c.f()
		})
	}
}

// TestGemvAllocs checks that Gemv allocates nothing per call, split or
// not.
func TestGemvAllocs(t *testing.T) {
	for _, p := range Implementations() {
		for _, sz := range [][2]int{{64, 100}, {1100, 1000}} {
			for _, trans := range []bool{false, true} {
				tc := gemvCase{trans: trans, m: sz[0], n: sz[1], alpha: 1, beta: 1}
				d := tc.data(newRand(5))
				p.Gemv(trans, tc.m, tc.n, 1, d.a, d.lda, d.x, 1, d.y)
				if n := testing.AllocsPerRun(5, func() { p.Gemv(trans, tc.m, tc.n, 1, d.a, d.lda, d.x, 1, d.y) }); n != 0 {
					t.Errorf("%s trans=%v %d×%d: %v allocations per call", p.Name(), trans, tc.m, tc.n, n)
				}
			}
		}
	}
}
