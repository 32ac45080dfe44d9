package kernels

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/simdgpt/simdgpt/internal/race"
	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

// rbf returns v rounded to bfloat16 (lowbit.ToBF16) in float64.
func rbf(v float32) float64 { return float64(lowbit.FromBF16(lowbit.ToBF16(v))) }

// bf16Ref returns, for each element of C, the exact (float64) value e =
// alpha·Σ â·b̂ + beta·C of the bfloat16 contract and the error bound the
// package documents, with op(A) and op(B) read through at and bt.
func bf16Ref(m, n, k int, alpha float32, at, bt func(i, p int) float32, beta float32, c []float32, ldc int) (ref, bound []float64) {
	ref = make([]float64, m*n)
	bound = make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s, mag, sub float64
			for p := 0; p < k; p++ {
				x, y := rbf(at(i, p)), rbf(bt(p, j))
				s += x * y
				mag += math.Abs(x * y)
				sub += math.Abs(x) + math.Abs(y) + 1
			}
			e := float64(alpha) * s
			cb := 0.0
			if beta != 0 {
				e += float64(beta) * float64(c[i*ldc+j])
				cb = math.Abs(float64(beta) * float64(c[i*ldc+j]))
			}
			ref[i*n+j] = e
			bound[i*n+j] = float64(k+2)*0x1p-23*(math.Abs(float64(alpha))*mag+cb) + math.Abs(float64(alpha))*0x1p-126*sub
		}
	}
	return ref, bound
}

// opAt returns op(X)(i, p) of x stored with leading dimension ld.
func opAt(x []float32, trans bool, ld int) func(i, p int) float32 {
	if trans {
		return func(i, p int) float32 { return x[p*ld+i] }
	}
	return func(i, p int) float32 { return x[i*ld+p] }
}

// checkBF16 fails t unless every element of got (m×n, leading dimension
// ldc) is within bound of ref (and only the m×n elements changed from
// before, when before is not nil).
func checkBF16(t *testing.T, what string, got []float32, ldc, m, n int, ref, bound []float64) {
	t.Helper()
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			g, e := float64(got[i*ldc+j]), ref[i*n+j]
			if math.IsNaN(e) || math.IsInf(e, 0) || math.Abs(e) > math.MaxFloat32 {
				continue // the special-value tests cover these
			}
			if !(math.Abs(g-e) <= bound[i*n+j]) {
				t.Fatalf("%s: C[%d][%d] = %v, want %v within %.3g (off by %.3g)", what, i, j, g, e, bound[i*n+j], math.Abs(g-e))
			}
		}
	}
}

// bf16Sizes are the sizes the parity tests cross: 0 and 1, and both sides
// of the micro-kernels' tiles (AVX-512's 14×32, NEON's 8×8), of 16-column
// vectors, 32-float conversion blocks and odd k, and every count (0-3)
// of pairs of k left after NEON's steps of four pairs.
var (
	bf16Ms = []int{1, 2, 8, 9, 13, 14, 15, 28, 29, 43}
	bf16Ns = []int{1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 97}
	bf16Ks = []int{1, 2, 3, 13, 31, 32, 33, 64, 65, 97}
)

// TestGemmBF16ComputeBound holds every implementation to the error
// contract against float64, over every transpose, sizes across the
// tiles' edges, padded (odd) leading dimensions, unaligned starts, alpha
// and beta, and checks that C's padding is not written.
func TestGemmBF16ComputeBound(t *testing.T) {
	ms, ns, ks := bf16Ms, bf16Ns, bf16Ks
	if testing.Short() {
		ms, ns, ks = []int{1, 15, 29}, []int{1, 17, 33, 65}, []int{1, 3, 13, 33, 64}
	}
	forEachImpl(t, func(t *testing.T, p *Impl) {
		r := newRand(33)
		for ti := 0; ti < 4; ti++ {
			ta, tb := ti&1 != 0, ti&2 != 0
			for _, m := range ms {
				for _, n := range ns {
					for _, k := range ks {
						tc := gemmCase{transA: ta, transB: tb, m: m, n: n, k: k, alpha: 1, beta: 0, pad: (m + n) % 3, off: k % 5}
						if (m+n+k)%2 == 0 {
							tc.alpha, tc.beta = -1.5, 0.75
						}
						d := tc.data(r)
						before := append([]float32(nil), d.c...)
						ref, bound := bf16Ref(m, n, k, tc.alpha, opAt(d.a, ta, d.lda), opAt(d.b, tb, d.ldb), tc.beta, before, d.ldc)
						p.GemmBF16Compute(ta, tb, m, n, k, tc.alpha, d.a, d.lda, d.b, d.ldb, tc.beta, d.c, d.ldc)
						what := fmt.Sprintf("%+v", tc)
						checkBF16(t, what, d.c, d.ldc, m, n, ref, bound)
						for i := range d.c {
							if i%d.ldc >= n && d.c[i] != before[i] {
								t.Fatalf("%s: padding c[%d] written", what, i)
							}
						}
					}
				}
			}
		}
	})
}

// intData returns n small integers in [-8, 8] as float32: bfloat16
// exactly, with products and sums exact in float32 for any order.
func intData(seed uint64, n int) []float32 {
	r := newRand(seed)
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.IntN(17) - 8)
	}
	return s
}

// TestGemmBF16ComputeExact checks every implementation bit for bit
// against generic where every sum is exact (small integers), so that a
// misplaced pair, row or column cannot hide within the bound, for sizes
// from 1 past the blocks of the bfloat16 driver (k across several
// blocks of pairs, n across several column blocks).
func TestGemmBF16ComputeExact(t *testing.T) {
	shapes := [][3]int{{1, 1, 1}, {14, 32, 2}, {15, 33, 3}, {29, 65, 130}, {3, 200, 513}, {43, 1100, 40}, {57, 70, 1100}}
	for _, p := range nonGeneric() {
		t.Run(p.Name(), func(t *testing.T) {
			for _, s := range shapes {
				m, n, k := s[0], s[1], s[2]
				for ti := 0; ti < 4; ti++ {
					ta, tb := ti&1 != 0, ti&2 != 0
					a, b := intData(1, m*k), intData(2, k*n)
					lda, ldb := k, n
					if ta {
						lda = m
					}
					if tb {
						ldb = k
					}
					want := make([]float32, m*n)
					got := make([]float32, m*n)
					genericImpl.GemmBF16Compute(ta, tb, m, n, k, 2, a, lda, b, ldb, 0, want, n)
					p.GemmBF16Compute(ta, tb, m, n, k, 2, a, lda, b, ldb, 0, got, n)
					for i := range want {
						if got[i] != want[i] {
							t.Fatalf("m=%d n=%d k=%d transA=%v transB=%v: C[%d] = %v, want %v", m, n, k, ta, tb, i, got[i], want[i])
						}
					}
				}
			}
		})
	}
}

// TestGemmBF16ComputeRounds checks that the operands are rounded to
// bfloat16 to nearest even, not truncated: operands just above and below
// the midpoints between bfloat16 values, and ties.
func TestGemmBF16ComputeRounds(t *testing.T) {
	cases := []struct {
		a, b float32
		want float32
	}{
		{math.Float32frombits(0x3f808000), 1, 1},                    // tie, rounds to even 1
		{math.Float32frombits(0x3f818000), 1, 1.015625},             // tie, rounds up to even
		{math.Float32frombits(0x3f808001), 1, 1.0078125},            // above the midpoint
		{math.Float32frombits(0x3f807fff), 1, 1},                    // below it
		{1, math.Float32frombits(0xbf808001), -1.0078125},           // B rounded too
		{math.Float32frombits(0x7f7fffff), 1, float32(math.Inf(1))}, // beyond bfloat16's range
	}
	forEachImpl(t, func(t *testing.T, p *Impl) {
		for _, c := range cases {
			for _, m := range []int{1, 20} { // edge and full tiles
				n, k := 40, 3
				a := make([]float32, m*k)
				b := make([]float32, k*n)
				a[(m-1)*k+1] = c.a
				b[1*n+n-1] = c.b
				got := make([]float32, m*n)
				p.GemmBF16Compute(false, false, m, n, k, 1, a, k, b, n, 0, got, n)
				if g := got[(m-1)*n+n-1]; g != c.want {
					t.Errorf("m=%d: bf16(%v)·bf16(%v) = %v, want %v", m, c.a, c.b, g, c.want)
				}
			}
		}
	})
}

// TestGemmBF16ComputeSpecial covers zeros, subnormals, infinities, NaN
// and float32 overflow of the sum: one special operand at a time, in
// every row position of a tile.
func TestGemmBF16ComputeSpecial(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	const sub = float32(1e-40)
	cases := []struct {
		name   string
		av, bv float32 // A[i][1] and B[1][j], the rest of row 1 of B and column 1 of A 0.5
		// want classifies C[i][j]: "nan", "+inf", "-inf", or "" for the bound
		want string
	}{
		{"zeros", 0, float32(math.Copysign(0, -1)), ""},
		{"subnormal A", sub, 3, ""},
		{"subnormal B", 2, -sub, ""},
		{"both subnormal", sub, sub, ""},
		{"smallest normal", 0x1p-126, 1.5, ""},
		{"inf times positive", inf, 2, "+inf"},
		{"inf times negative", inf, -2, "-inf"},
		{"inf times zero", inf, 0, "nan"},
		{"nan", nan, 1, "nan"},
		{"nan in B", 1, nan, "nan"},
		{"rounds to inf", math.MaxFloat32, 1, "+inf"},
		{"sum overflows", 0x1p100, -0x1p100, "-inf"},
	}
	forEachImpl(t, func(t *testing.T, p *Impl) {
		for _, c := range cases {
			m, n, k := 16, 34, 4
			a := make([]float32, m*k)
			b := make([]float32, k*n)
			for i := range a {
				a[i] = 0.25
			}
			for i := range b {
				b[i] = 0.5
			}
			for i := 0; i < m; i++ {
				a[i*k+1] = c.av
			}
			for j := 0; j < n; j++ {
				b[1*n+j] = c.bv
			}
			got := make([]float32, m*n)
			p.GemmBF16Compute(false, false, m, n, k, 1, a, k, b, n, 0, got, n)
			ref, bound := bf16Ref(m, n, k, 1, opAt(a, false, k), opAt(b, false, n), 0, got, n)
			for i, g := range got {
				ok := true
				switch c.want {
				case "nan":
					ok = math.IsNaN(float64(g))
				case "+inf":
					ok = math.IsInf(float64(g), 1)
				case "-inf":
					ok = math.IsInf(float64(g), -1)
				default:
					ok = math.Abs(float64(g)-ref[i]) <= bound[i]
				}
				if !ok {
					t.Fatalf("%s: C[%d] = %v, want %s (exact %v, bound %.3g)", c.name, i, g, c.want, ref[i], bound[i])
				}
			}
		}
	})
}

// TestGemmBF16ComputeEpilogues checks that the fused products are
// bitwise GemmBF16Compute followed by the bias (or BiasGELU) on the same
// implementation, for k = 0 too.
func TestGemmBF16ComputeEpilogues(t *testing.T) {
	forEachImpl(t, func(t *testing.T, p *Impl) {
		r := newRand(5)
		for _, s := range [][3]int{{1, 1, 0}, {5, 7, 3}, {29, 65, 33}, {100, 300, 200}} {
			m, n, k := s[0], s[1], s[2]
			for ti := 0; ti < 4; ti++ {
				ta, tb := ti&1 != 0, ti&2 != 0
				tc := gemmCase{transA: ta, transB: tb, m: m, n: n, k: k, pad: 1}
				d := tc.data(r)
				bias := randSlice(r, n)
				want := make([]float32, len(d.c))
				p.GemmBF16Compute(ta, tb, m, n, k, 1, d.a, d.lda, d.b, d.ldb, 0, want, d.ldc)
				wantOut := make([]float32, len(d.c))
				for i := 0; i < m; i++ {
					copy(wantOut[i*d.ldc:i*d.ldc+n], want[i*d.ldc:i*d.ldc+n])
				}
				p.BiasGELU(m, n, wantOut, d.ldc, bias, wantOut, d.ldc)
				for i := 0; i < m; i++ {
					row := want[i*d.ldc : i*d.ldc+n]
					p.Add(row, row, bias)
				}
				got := make([]float32, len(d.c))
				p.GemmBiasBF16Compute(ta, tb, m, n, k, d.a, d.lda, d.b, d.ldb, bias, got, d.ldc)
				pre := make([]float32, len(d.c))
				out := make([]float32, len(d.c))
				p.GemmBiasGELUBF16Compute(ta, tb, m, n, k, d.a, d.lda, d.b, d.ldb, bias, pre, d.ldc, out, d.ldc)
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) || math.Float32bits(pre[i]) != math.Float32bits(want[i]) {
						t.Fatalf("m=%d n=%d k=%d transA=%v transB=%v: bias C[%d] = %v, pre %v, want %v", m, n, k, ta, tb, i, got[i], pre[i], want[i])
					}
					if math.Float32bits(out[i]) != math.Float32bits(wantOut[i]) {
						t.Fatalf("m=%d n=%d k=%d transA=%v transB=%v: out[%d] = %v, want %v", m, n, k, ta, tb, i, out[i], wantOut[i])
					}
				}
			}
		}
	})
}

// TestGemmBF16ComputeWeights holds the product over lowbit.BF16 weights
// to the contract (W as stored, A rounded), bit for bit against generic
// on exact data and within the bound on random data, K across the
// weights' groups of 32.
func TestGemmBF16ComputeWeights(t *testing.T) {
	forEachImpl(t, func(t *testing.T, p *Impl) {
		r := newRand(8)
		for _, s := range [][3]int{{1, 1, 1}, {3, 17, 31}, {14, 32, 32}, {15, 33, 33}, {29, 70, 100}, {50, 40, 640}} {
			m, n, k := s[0], s[1], s[2]
			for _, exact := range []bool{true, false} {
				var wf, a []float32
				if exact {
					wf, a = intData(3, n*k), intData(4, m*k)
				} else {
					wf, a = randSlice(r, n*k), randSlice(r, m*k)
				}
				w := lowbit.BF16FromNK(wf, n, k)
				lda, ldc := k+1, n+2
				ap := make([]float32, m*lda)
				for i := 0; i < m; i++ {
					copy(ap[i*lda:i*lda+k], a[i*k:(i+1)*k])
				}
				c := randSlice(r, m*ldc)
				if exact {
					c = intData(5, m*ldc)
				}
				before := append([]float32(nil), c...)
				p.GemmBF16ComputeWeights(m, 0.5, ap, lda, w, -1, c, ldc)
				if exact {
					want := append([]float32(nil), before...)
					genericImpl.GemmBF16ComputeWeights(m, 0.5, ap, lda, w, -1, want, ldc)
					for i := range want {
						if got := c[i]; math.Float32bits(got) != math.Float32bits(want[i]) && !(got == 0 && want[i] == 0) {
							t.Fatalf("exact m=%d n=%d k=%d: C[%d] = %v, want %v", m, n, k, i, got, want[i])
						}
					}
					continue
				}
				wt := w.Float32() // n×k, exact
				ref, bound := bf16Ref(m, n, k, 0.5, opAt(ap, false, lda), opAt(wt, true, k), -1, before, ldc)
				checkBF16(t, fmt.Sprintf("m=%d n=%d k=%d", m, n, k), c, ldc, m, n, ref, bound)
			}
		}
	})
}

// TestGemmBF16ComputeDeterministic checks that results repeat bit for
// bit and do not depend on GOMAXPROCS, on a product large enough to be
// split between goroutines.
func TestGemmBF16ComputeDeterministic(t *testing.T) {
	m, n, k := 300, 260, 520
	r := newRand(6)
	a, b := randSlice(r, m*k), randSlice(r, k*n)
	w := lowbit.BF16FromKN(b, k, n)
	for _, p := range nonGeneric() {
		t.Run(p.Name(), func(t *testing.T) {
			var first, firstW []float32
			for _, procs := range []int{1, 2, 4, 8, 32, 64, 1} {
				old := runtime.GOMAXPROCS(procs)
				c := make([]float32, m*n)
				p.GemmBF16Compute(false, false, m, n, k, 1, a, k, b, n, 0, c, n)
				cw := make([]float32, m*n)
				p.GemmBF16ComputeWeights(m, 1, a, k, w, 0, cw, n)
				runtime.GOMAXPROCS(old)
				if first == nil {
					first, firstW = c, cw
					continue
				}
				for i := range c {
					if math.Float32bits(c[i]) != math.Float32bits(first[i]) || math.Float32bits(cw[i]) != math.Float32bits(firstW[i]) {
						t.Fatalf("GOMAXPROCS=%d: C[%d] = %v (weights %v), first run %v (%v)", procs, i, c[i], cw[i], first[i], firstW[i])
					}
				}
			}
		})
	}
}

// TestGemmBF16ComputeAllocs checks that no call allocates once warm, on
// the calling goroutine and split between goroutines.
func TestGemmBF16ComputeAllocs(t *testing.T) {
	for _, p := range nonGeneric() {
		t.Run(p.Name(), func(t *testing.T) {
			for _, s := range [][3]int{{29, 65, 33}, {512, 256, 256}} {
				m, n, k := s[0], s[1], s[2]
				r := newRand(7)
				a, b, bias := randSlice(r, m*k), randSlice(r, k*n), randSlice(r, n)
				c, out := make([]float32, m*n), make([]float32, m*n)
				w := lowbit.BF16FromKN(b, k, n)
				calls := map[string]func(){
					"Gemm":     func() { p.GemmBF16Compute(false, true, m, n, k, 1, a, k, b, k, 0.5, c, n) },
					"Bias":     func() { p.GemmBiasBF16Compute(true, false, m, n, k, a, m, b, n, bias, c, n) },
					"BiasGELU": func() { p.GemmBiasGELUBF16Compute(false, false, m, n, k, a, k, b, n, bias, c, n, out, n) },
					"Weights":  func() { p.GemmBF16ComputeWeights(m, 1, a, k, w, 0, c, n) },
				}
				if race.Enabled {
					// Under the race detector sync.Pool drops what it is
					// given at random (the weights' panel sources): the
					// counts are not the program's.
					delete(calls, "Weights")
				}
				for name, f := range calls {
					f()
					if got := testing.AllocsPerRun(3, f); got != 0 {
						t.Errorf("%s %v: %v allocations a call", name, s, got)
					}
				}
			}
		})
	}
}

// TestBF16PeakLoop checks BF16PeakLoop's count: iters times the set's
// operations where the CPU has the instruction (avx512 with AVX512_BF16,
// neon with FEAT_BF16), 0 elsewhere, and its overflow panic. With
// SIMDGPT_EXPECT_BF16=1 (or 0) in the environment it also fails unless
// some implementation has (or none has) a bfloat16 dot product, so that
// a run under an emulated CPU model shows which path the bfloat16
// products took (CI's arm64 runs under qemu set it).
func TestBF16PeakLoop(t *testing.T) {
	if want := os.Getenv("SIMDGPT_EXPECT_BF16"); want != "" {
		var have []string
		for _, p := range Implementations() {
			if p.set.Instruments.BF16Loop != nil {
				have = append(have, p.Name())
			}
		}
		if (want == "1") != (len(have) > 0) {
			t.Errorf("SIMDGPT_EXPECT_BF16=%s, but the implementations with a bfloat16 dot product are %v (CPU features %v)", want, have, CPU().Features)
		}
	}
	forEachImpl(t, func(t *testing.T, p *Impl) {
		flops := p.BF16PeakLoop(10)
		if p.set.Instruments.BF16Loop == nil {
			if flops != 0 {
				t.Errorf("BF16PeakLoop(10) = %d without a loop, want 0", flops)
			}
			return
		}
		if flops != 10*p.set.Instruments.BF16Flops || flops <= 0 {
			t.Errorf("BF16PeakLoop(10) = %d, want 10×%d", flops, p.set.Instruments.BF16Flops)
		}
		if got := p.BF16PeakLoop(0); got != 0 {
			t.Errorf("BF16PeakLoop(0) = %d, want 0", got)
		}
		msg := panicMessage(func() { p.BF16PeakLoop(math.MaxInt) })
		if !strings.HasPrefix(msg, "kernels.Impl.BF16PeakLoop: iters = ") || !strings.Contains(msg, "overflows int") {
			t.Errorf("panic %q, want it to name kernels.Impl.BF16PeakLoop and the overflow", msg)
		}
	})
}

// TestGemmBF16ManyRows covers GemmBF16 (float32 A, bfloat16 weights)
// from bf16compute.ManyRows rows of A on, where the SIMD sets convert the
// weights once and run the float32 GEMM: within the low-bit products'
// bound against float64, infinities and NaN in W propagating, bit for
// bit the same under any GOMAXPROCS, no allocation once warm.
func TestGemmBF16ManyRows(t *testing.T) {
	inf := float32(math.Inf(1))
	for _, p := range Implementations() {
		t.Run(p.Name(), func(t *testing.T) {
			r := newRand(12)
			for _, s := range [][3]int{{15, 40, 33}, {16, 70, 64}, {17, 33, 100}, {64, 300, 200}, {256, 520, 300}} {
				m, n, k := s[0], s[1], s[2]
				wf := randSlice(r, n*k)
				wf[3*k+1] = inf  // row 3: an infinite weight
				wf[5*k+2] = -inf // row 5: -Inf ...
				wf[5*k+3] = inf  // ... and +Inf: NaN
				wf[7*k] = 1e-40  // row 7: a subnormal weight (bfloat16 keeps it)
				wf[8*k] = float32(math.NaN())
				w := lowbit.BF16FromNK(wf, n, k)
				wt := w.Float32()
				lda, ldc := k+3, n+1
				a := randSlice(r, m*lda)
				c := randSlice(r, m*ldc)
				before := append([]float32(nil), c...)
				p.GemmBF16(m, 0.75, a, lda, w, 0.5, c, ldc)
				for i := 0; i < m; i++ {
					for j := 0; j < n; j++ {
						var e, mag float64
						for q := 0; q < k; q++ {
							x := float64(a[i*lda+q]) * float64(wt[j*k+q])
							e += x
							mag += math.Abs(x)
						}
						e = 0.75*e + 0.5*float64(before[i*ldc+j])
						mag = 0.75*mag + math.Abs(0.5*float64(before[i*ldc+j]))
						g := float64(c[i*ldc+j])
						switch {
						case math.IsNaN(e):
							if !math.IsNaN(g) {
								t.Fatalf("m=%d: C[%d][%d] = %v, want NaN", m, i, j, g)
							}
						case math.IsInf(e, 0):
							if g != e && !math.IsNaN(g) {
								t.Fatalf("m=%d: C[%d][%d] = %v, want %v", m, i, j, g, e)
							}
						case math.Abs(g-e) > float64(k+2)*0x1p-23*mag:
							t.Fatalf("m=%d: C[%d][%d] = %v, want %v within %.3g", m, i, j, g, e, float64(k+2)*0x1p-23*mag)
						}
					}
				}
				var first []float32
				for _, procs := range []int{1, 2, 4} {
					old := runtime.GOMAXPROCS(procs)
					cc := append([]float32(nil), before...)
					p.GemmBF16(m, 0.75, a, lda, w, 0.5, cc, ldc)
					runtime.GOMAXPROCS(old)
					if first == nil {
						first = cc
						continue
					}
					for i := range cc {
						if math.Float32bits(cc[i]) != math.Float32bits(first[i]) {
							t.Fatalf("m=%d GOMAXPROCS=%d: C[%d] = %v, %v with one thread", m, procs, i, cc[i], first[i])
						}
					}
				}
				// Under the race detector sync.Pool drops what it is given
				// at random (the few-row path's tasks): the counts are not
				// the program's.
				if p != genericImpl && !race.Enabled {
					f := func() { p.GemmBF16(m, 0.75, a, lda, w, 0.5, c, ldc) }
					if allocs := testing.AllocsPerRun(3, f); allocs != 0 {
						t.Errorf("m=%d: %v allocations a call", m, allocs)
					}
				}
			}
		})
	}
}
