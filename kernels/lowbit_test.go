package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/simdgpt/simdgpt/internal/race"
	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

// lowbitFormat is one low-bit weight type, for tests over both.
type lowbitFormat struct {
	name string
	// make converts the row-major n×k float32 matrix nk; off > 0 places
	// the storage that many elements (bf16) or blocks (int8) into its
	// backing array.
	make func(nk []float32, n, k, off int) any
	at   func(w any, j, p int) float32
	gemm func(p *Impl, m int, alpha float32, a []float32, lda int, w any, beta float32, c []float32, ldc int)
	gemv func(p *Impl, alpha float32, w any, x []float32, beta float32, y []float32)
	// xErr bounds the error the handling of x, a row of A of a product
	// of m rows on p, adds to each element of x: within abs + rel·|x[p]|.
	// int8 quantizes x to int16 (lowbit.QuantizeInt16, within half a
	// scale step); bf16 uses x as it is, except where p multiplies one row
	// as the sum of two bfloat16 (hi = bf16(x), lo = bf16(x - hi), each
	// within 2⁻⁸ relative, so hi + lo within 2⁻¹⁶ of x).
	xErr func(p *Impl, m int, x []float32) (abs, rel float64)
}

var lowbitFormats = []lowbitFormat{
	{
		name: "bf16",
		make: func(nk []float32, n, k, off int) any {
			w := lowbit.BF16FromNK(nk, n, k)
			w.Data = append(make([]uint16, off), w.Data...)[off:]
			return w
		},
		at: func(w any, j, p int) float32 { return w.(*lowbit.BF16).At(j, p) },
		gemm: func(p *Impl, m int, alpha float32, a []float32, lda int, w any, beta float32, c []float32, ldc int) {
			p.GemmBF16(m, alpha, a, lda, w.(*lowbit.BF16), beta, c, ldc)
		},
		gemv: func(p *Impl, alpha float32, w any, x []float32, beta float32, y []float32) {
			p.GemvBF16(alpha, w.(*lowbit.BF16), x, beta, y)
		},
		xErr: func(p *Impl, m int, x []float32) (abs, rel float64) {
			if p.set.BF16Pair && m == 1 {
				return 0, 0x1p-16
			}
			return 0, 0
		},
	},
	{
		name: "int8",
		make: func(nk []float32, n, k, off int) any {
			w, err := lowbit.Int8FromNK(nk, n, k)
			if err != nil {
				panic(err)
			}
			w.Blocks = append(make([]lowbit.Int8Block, off), w.Blocks...)[off:]
			return w
		},
		at: func(w any, j, p int) float32 { return w.(*lowbit.Int8).At(j, p) },
		gemm: func(p *Impl, m int, alpha float32, a []float32, lda int, w any, beta float32, c []float32, ldc int) {
			p.GemmInt8(m, alpha, a, lda, w.(*lowbit.Int8), beta, c, ldc)
		},
		gemv: func(p *Impl, alpha float32, w any, x []float32, beta float32, y []float32) {
			p.GemvInt8(alpha, w.(*lowbit.Int8), x, beta, y)
		},
		xErr: func(_ *Impl, _ int, x []float32) (abs, rel float64) {
			scale, ok := lowbit.QuantizeInt16(make([]int16, len(x)), x)
			if !ok {
				return 0, 0 // computed in float32
			}
			return float64(scale) * (0.5 + 0x1p-20), 0
		},
	},
}

// lowbitCase is one product C (m×n) = alpha*A·Wᵀ + beta*C with W n×k; A
// has leading dimension k+padA and C n+padC, and A, C and W's storage
// start off elements into their backing arrays.
type lowbitCase struct {
	m, n, k     int
	alpha, beta float32
	padA, padC  int
	off         int
}

func (tc lowbitCase) String() string {
	return fmt.Sprintf("m=%d n=%d k=%d alpha=%v beta=%v padA=%d padC=%d off=%d", tc.m, tc.n, tc.k, tc.alpha, tc.beta, tc.padA, tc.padC, tc.off)
}

// lowbitData is a case's inputs: c0 is C's whole buffer, with guard
// elements around C.
type lowbitData struct {
	w        any
	a, c0, c []float32
	lda, ldc int
}

func (tc lowbitCase) data(f lowbitFormat, r *rand.Rand) lowbitData {
	nk := make([]float32, tc.n*tc.k)
	for i := range nk {
		nk[i] = float32(r.NormFloat64())
	}
	d := lowbitData{w: f.make(nk, tc.n, tc.k, tc.off), lda: max(tc.k+tc.padA, 1), ldc: max(tc.n+tc.padC, 1)}
	d.a = offsetCopy(randSlice(r, tc.m*d.lda), tc.off)
	d.c0 = randSlice(r, tc.m*d.ldc+tc.off+3)
	d.c = d.c0[tc.off : tc.off+tc.m*d.ldc]
	if tc.beta == 0 {
		// Not read when beta is 0.
		for i := 0; i < tc.m; i++ {
			for j := 0; j < tc.n; j++ {
				d.c[i*d.ldc+j] = float32(math.NaN())
			}
		}
	}
	return d
}

// lowbitRef returns C in float64, from W's weights as At returns them and
// A's elements as they are, and each element's tolerance on p: gemmTol of
// its magnitude |alpha|·Σ|w·a| + |beta·c|, plus what the error f.xErr
// allows each element of A's row adds: |alpha|·(abs·Σ|w| + rel·Σ|w·a|).
func lowbitRef(p *Impl, f lowbitFormat, tc lowbitCase, d lowbitData) (ref, tol []float64) {
	ref = make([]float64, tc.m*tc.n)
	tol = make([]float64, tc.m*tc.n)
	for i := 0; i < tc.m; i++ {
		var xe, xr float64
		if tc.alpha != 0 && tc.k > 0 {
			xe, xr = f.xErr(p, tc.m, d.a[i*d.lda:i*d.lda+tc.k])
		}
		for j := 0; j < tc.n; j++ {
			var s, sa, sw float64
			if tc.alpha != 0 {
				for q := 0; q < tc.k; q++ {
					w := float64(f.at(d.w, j, q))
					v := w * float64(d.a[i*d.lda+q])
					s += v
					sa += math.Abs(v)
					sw += math.Abs(w)
				}
			}
			s *= float64(tc.alpha)
			sa *= math.Abs(float64(tc.alpha))
			sx := sa // |alpha|·Σ|w·a|
			if tc.beta != 0 {
				c := float64(tc.beta) * float64(d.c[i*d.ldc+j])
				s += c
				sa += math.Abs(c)
			}
			ref[i*tc.n+j] = s
			tol[i*tc.n+j] = gemmTol(tc.k, sa) + math.Abs(float64(tc.alpha))*sw*xe + sx*xr
		}
	}
	return ref, tol
}

// checkLowbitCase runs one case on p and compares C against the float64
// reference, and everything else of C's buffer against what it held.
func checkLowbitCase(t *testing.T, p *Impl, f lowbitFormat, tc lowbitCase, seed uint64) {
	t.Helper()
	d := tc.data(f, newRand(seed))
	ref, tol := lowbitRef(p, f, tc, d)
	before := append([]float32(nil), d.c0...)
	f.gemm(p, tc.m, tc.alpha, d.a, d.lda, d.w, tc.beta, d.c, d.ldc)
	for q := range d.c0 {
		i, j := (q-tc.off)/d.ldc, (q-tc.off)%d.ldc
		if q < tc.off || i >= tc.m || j >= tc.n {
			if math.Float32bits(d.c0[q]) != math.Float32bits(before[q]) {
				t.Fatalf("%s %s %v: element %d outside C written", p.Name(), f.name, tc, q)
			}
			continue
		}
		if !closeTo(d.c[i*d.ldc+j], float32(ref[i*tc.n+j]), tol[i*tc.n+j]) {
			t.Fatalf("%s %s %v: C[%d][%d] = %v, want %v", p.Name(), f.name, tc, i, j, d.c[i*d.ldc+j], ref[i*tc.n+j])
		}
	}
}

// TestGemmLowbitSweep checks GemmBF16 and GemmInt8 on every implementation
// against the float64 reference over m across the kernels' 1..8 rows and
// beyond, n across every block of rows of W, k across the group and its
// tail, with odd strides and unaligned starts.
func TestGemmLowbitSweep(t *testing.T) {
	ms := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 17}
	ns := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 17, 41}
	ks := []int{0, 1, 5, 16, 31, 32, 33, 63, 64, 65, 97}
	if testing.Short() {
		ms, ns, ks = []int{1, 3, 8, 9}, []int{1, 7, 9}, []int{1, 31, 33, 64}
	}
	seed := uint64(1)
	forEachImpl(t, func(t *testing.T, p *Impl) {
		for _, f := range lowbitFormats {
			for _, m := range ms {
				for _, n := range ns {
					for _, k := range ks {
						seed++
						tc := lowbitCase{m: m, n: n, k: k, alpha: 1, beta: 0, padA: int(seed % 3), padC: int(seed % 2), off: int(seed % 4)}
						switch seed % 3 {
						case 1:
							tc.alpha, tc.beta = -0.75, 1
						case 2:
							tc.alpha, tc.beta = 2, -0.5
						}
						checkLowbitCase(t, p, f, tc, seed)
					}
				}
			}
		}
	})
}

// TestGemmLowbitSpecial checks the scalars' special cases (alpha 0 reads
// neither A nor W; beta 0 does not read C) and NaN and infinities in A
// and W against generic.
func TestGemmLowbitSpecial(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, f := range lowbitFormats {
		for _, tc := range []lowbitCase{
			{m: 2, n: 9, k: 40, alpha: 0, beta: 2},
			{m: 2, n: 9, k: 40, alpha: 0, beta: 0},
			{m: 3, n: 9, k: 0, alpha: 1, beta: 0.5},
			{m: 1, n: 9, k: 33, alpha: 1, beta: 0},
		} {
			forEachImpl(t, func(t *testing.T, p *Impl) { checkLowbitCase(t, p, f, tc, 7) })
		}
		// NaN in A, and (bf16) infinite weights, propagate as in generic.
		n, k := 9, 37
		nk := make([]float32, n*k)
		for i := range nk {
			nk[i] = float32(i%7) - 3
		}
		if f.name == "bf16" {
			nk[2*k+5], nk[3*k+36] = inf, -inf
		}
		w := f.make(nk, n, k, 0)
		a := make([]float32, 2*k)
		for i := range a {
			a[i] = 1
		}
		a[k+36] = nan
		a[3] = 0
		want := make([]float32, 2*n)
		f.gemm(genericImpl, 2, 1, a, k, w, 0, want, n)
		for _, p := range nonGeneric() {
			got := make([]float32, 2*n)
			f.gemm(p, 2, 1, a, k, w, 0, got, n)
			for i := range got {
				if !closeTo(got[i], want[i], 1e-3) {
					t.Errorf("%s %s: C[%d] = %v, generic %v", p.Name(), f.name, i, got[i], want[i])
				}
			}
		}
	}
}

// TestGemvLowbit checks GemvBF16 and GemvInt8 against the float64
// reference, and that they are GemmBF16 and GemmInt8 with one row, bit for
// bit.
func TestGemvLowbit(t *testing.T) {
	forEachImpl(t, func(t *testing.T, p *Impl) {
		for _, f := range lowbitFormats {
			for _, n := range []int{0, 1, 8, 9, 33} {
				for _, k := range []int{0, 1, 31, 32, 33, 100} {
					tc := lowbitCase{m: 1, n: n, k: k, alpha: 1.5, beta: 0.5, off: 1}
					d := tc.data(f, newRand(uint64(n*1000+k)))
					ref, tol := lowbitRef(p, f, tc, d)
					y := append([]float32(nil), d.c[:n]...)
					f.gemv(p, 1.5, d.w, d.a[:k], 0.5, y)
					f.gemm(p, 1, 1.5, d.a, d.lda, d.w, 0.5, d.c, d.ldc)
					for j := range y {
						if !closeTo(y[j], float32(ref[j]), tol[j]) || math.Float32bits(y[j]) != math.Float32bits(d.c[j]) {
							t.Fatalf("%s n=%d k=%d: y[%d] = %v, Gemm %v, want %v", f.name, n, k, j, y[j], d.c[j], ref[j])
						}
					}
				}
			}
		}
	})
}

// TestGemmLowbitDeterministicSplit checks that a product large enough to
// be split between goroutines gives the same bits on one thread and at
// GOMAXPROCS 2, 3, 8, 32 and 64, and that each output does not depend on the rows of W around
// it (a matrix of rows j0..j1 of W gives the same outputs).
func TestGemmLowbitDeterministicSplit(t *testing.T) {
	if testing.Short() {
		t.Skip("large problem")
	}
	for _, p := range Implementations() {
		for _, f := range lowbitFormats {
			for _, m := range []int{1, 3} {
				tc := lowbitCase{m: m, n: 4100, k: 300, alpha: 1, beta: 0.5, padA: 1, padC: 2}
				d := tc.data(f, newRand(3))
				orig := append([]float32(nil), d.c...)
				prev := runtime.GOMAXPROCS(1)
				f.gemm(p, m, 1, d.a, d.lda, d.w, 0.5, d.c, d.ldc)
				one := append([]float32(nil), d.c...)
				for _, procs := range []int{2, 3, 8, 32, 64} {
					runtime.GOMAXPROCS(procs)
					copy(d.c, orig)
					f.gemm(p, m, 1, d.a, d.lda, d.w, 0.5, d.c, d.ldc)
					for i := range one {
						if math.Float32bits(one[i]) != math.Float32bits(d.c[i]) {
							runtime.GOMAXPROCS(prev)
							t.Fatalf("%s %s m=%d: C[%d] = %v with one thread, %v with GOMAXPROCS %d", p.Name(), f.name, m, i, one[i], d.c[i], procs)
						}
					}
				}
				runtime.GOMAXPROCS(prev)
				// Rows 5..12 of W alone.
				j0, j1 := 5, 13
				var sub any
				switch w := d.w.(type) {
				case *lowbit.BF16:
					sub = &lowbit.BF16{N: j1 - j0, K: w.K, Data: w.Data[j0*w.Stride():]}
				case *lowbit.Int8:
					sub = &lowbit.Int8{N: j1 - j0, K: w.K, Blocks: w.Blocks[j0*lowbit.Groups(w.K):]}
				}
				c := append([]float32(nil), orig...)
				f.gemm(p, m, 1, d.a, d.lda, sub, 0.5, c[j0:], d.ldc)
				for i := 0; i < m; i++ {
					for j := j0; j < j1; j++ {
						if math.Float32bits(c[i*d.ldc+j]) != math.Float32bits(one[i*d.ldc+j]) {
							t.Fatalf("%s %s m=%d: C[%d][%d] = %v from rows %d..%d of W, %v from all", p.Name(), f.name, m, i, j, c[i*d.ldc+j], j0, j1, one[i*d.ldc+j])
						}
					}
				}
			}
		}
	}
}

// TestGemmLowbitAllocs checks that the products allocate nothing per
// call, split or not.
func TestGemmLowbitAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("under the race detector sync.Pool drops what it is given at random: the allocation counts are not the program's")
	}
	for _, p := range Implementations() {
		for _, f := range lowbitFormats {
			for _, tc := range []lowbitCase{{m: 1, n: 64, k: 100, alpha: 1, beta: 1}, {m: 9, n: 64, k: 100, alpha: 1, beta: 1}, {m: 1, n: 4100, k: 300, alpha: 1, beta: 1}, {m: 2, n: 4100, k: 300, alpha: 1, beta: 1}} {
				d := tc.data(f, newRand(5))
				f.gemm(p, tc.m, 1, d.a, d.lda, d.w, 1, d.c, d.ldc)
				if n := testing.AllocsPerRun(5, func() { f.gemm(p, tc.m, 1, d.a, d.lda, d.w, 1, d.c, d.ldc) }); n != 0 {
					t.Errorf("%s %s %v: %v allocations per call", p.Name(), f.name, tc, n)
				}
				if n := testing.AllocsPerRun(5, func() { f.gemv(p, 1, d.w, d.a[:tc.k], 1, d.c[:tc.n]) }); n != 0 {
					t.Errorf("%s %s Gemv %v: %v allocations per call", p.Name(), f.name, tc, n)
				}
			}
		}
	}
}

// TestLowbitChecks checks that bad arguments panic naming the function,
// the argument and the numbers.
func TestLowbitChecks(t *testing.T) {
	buf := make([]float32, 400)
	w := lowbit.NewBF16(4, 40) // 4×40, stride 64
	q := lowbit.NewInt8(4, 40)
	alias := unsafe.Slice((*float32)(unsafe.Pointer(&w.Data[0])), len(w.Data)/2)
	aliasQ := unsafe.Slice((*float32)(unsafe.Pointer(&q.Blocks[0])), len(q.Blocks)*9)
	cases := []struct {
		name string
		f    func()
		want string
	}{
		{"negative m", func() { GemmBF16(-1, 1, buf, 40, w, 0, buf[200:], 4) }, "kernels.GemmBF16: m = -1"},
		{"small lda", func() { GemmBF16(2, 1, buf, 39, w, 0, buf[200:], 4) }, "kernels.GemmBF16: lda = 39, want >= max(w.K, 1) = 40"},
		{"small ldc", func() { GemmInt8(2, 1, buf, 40, q, 0, buf[200:], 3) }, "kernels.GemmInt8: ldc = 3, want >= max(w.N, 1) = 4"},
		{"short a", func() { GemmBF16(3, 1, buf[:100], 40, w, 0, buf[200:], 4) }, "kernels.GemmBF16: len(a) = 100, want >= 120"},
		{"short c", func() { GemmInt8(3, 1, buf, 40, q, 0, buf[200:210], 4) }, "kernels.GemmInt8: len(c) = 10, want >= 12"},
		{"c overlaps a", func() { GemmBF16(2, 1, buf, 40, w, 0, buf[79:], 4) }, "kernels.GemmBF16: c overlaps a"},
		{"c overlaps w", func() { GemmBF16(1, 1, buf, 40, w, 0, alias[10:], 4) }, "kernels.GemmBF16: c overlaps the storage of w"},
		{"c overlaps w int8", func() { GemmInt8(1, 1, buf, 40, q, 0, aliasQ[3:], 4) }, "kernels.GemmInt8: c overlaps the storage of w"},
		{"short data", func() { GemmBF16(1, 1, buf, 40, &lowbit.BF16{N: 4, K: 40, Data: w.Data[:255]}, 0, buf[200:], 4) }, "kernels.GemmBF16: BF16 4×40: len(Data) = 255, want >= 4×64"},
		{"nil w", func() { GemvInt8(1, nil, buf, 0, buf[200:]) }, "kernels.GemvInt8: nil *lowbit.Int8"},
		{"gemv short x", func() { GemvBF16(1, w, buf[:39], 0, buf[200:]) }, "kernels.GemvBF16: len(x) = 39, want >= 40"},
		{"gemv short y", func() { GemvInt8(1, q, buf[:40], 0, buf[200:203]) }, "kernels.GemvInt8: len(y) = 3, want >= 4"},
		{"gemv y overlaps x", func() { GemvBF16(1, w, buf[:40], 0, buf[38:]) }, "kernels.GemvBF16: y overlaps x"},
		{"gemv y overlaps w", func() { GemvInt8(1, q, buf[:40], 0, aliasQ[20:]) }, "kernels.GemvInt8: y overlaps the storage of w"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if msg := panicMessage(c.f); !strings.Contains(msg, c.want) {
				t.Fatalf("panic %q, want one containing %q", msg, c.want)
			}
		})
	}
}

// TestGemmInt8MatchesGeneric holds every SIMD implementation of GemmInt8
// to generic's on the same quantized activations: the group sums are
// exact integers everywhere, so the results differ only by the order of
// the float32 sums over groups and lanes, within (groups+16+2)·2⁻²³ of
// the magnitude |alpha|·Σ|w·a| + |beta·c|. Rows of A with a NaN, an
// infinity, only zeros or only tiny elements sit among quantized rows in
// the same call.
func TestGemmInt8MatchesGeneric(t *testing.T) {
	f := lowbitFormats[1]
	seed := uint64(100)
	for _, p := range nonGeneric() {
		for _, m := range []int{1, 2, 3, 5, 8, 9, 12} {
			for _, n := range []int{1, 7, 8, 9, 17} {
				for _, k := range []int{1, 31, 32, 33, 64, 100, 257} {
					seed++
					tc := lowbitCase{m: m, n: n, k: k, alpha: 1.25, beta: float32(seed % 2), padA: 1, padC: 2, off: int(seed % 3)}
					d := tc.data(f, newRand(seed))
					if m >= 5 {
						row := func(i int) []float32 { return d.a[i*d.lda : i*d.lda+k] }
						row(1)[k/2] = float32(math.NaN())
						clear(row(2))
						for q := range row(3) {
							row(3)[q] = 1e-41
						}
						row(4)[0] = float32(math.Inf(-1))
					}
					_, tol := lowbitRef(p, f, tc, d)
					want := append([]float32(nil), d.c...)
					f.gemm(genericImpl, m, tc.alpha, d.a, d.lda, d.w, tc.beta, want, d.ldc)
					f.gemm(p, m, tc.alpha, d.a, d.lda, d.w, tc.beta, d.c, d.ldc)
					groups := lowbit.Groups(k)
					for i := 0; i < m; i++ {
						for j := 0; j < n; j++ {
							q := i*d.ldc + j
							// tol's gemmTol part is (k+2)·eps·magnitude; rescale it.
							bound := tol[i*n+j] / float64(k+2) * float64(groups+16+2)
							if m >= 5 && i >= 1 && i <= 4 {
								bound = tol[i*n+j] // rows computed in float32, a summation order of their own
							}
							if !closeTo(d.c[q], want[q], bound) {
								t.Fatalf("%s %v: C[%d][%d] = %v, generic %v", p.Name(), tc, i, j, d.c[q], want[q])
							}
						}
					}
				}
			}
		}
	}
}
