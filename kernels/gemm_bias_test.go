package kernels

import (
	"math"
	"runtime"
	"strings"
	"testing"
)

// gemmBiasCase runs GemmBias of every implementation in impls on one case
// (alpha and beta of tc are ignored) and checks it: C against the float64
// product plus bias within Gemm's tolerance (the bias counts as one more
// term), and bitwise against the same implementation's Gemm followed by
// its Add of the bias to every row, as GemmBias documents. C is poisoned
// with NaN (it must not be read) and its padding beyond n columns, which
// must stay untouched, holds a sentinel; the bias must not change.
func gemmBiasCase(t *testing.T, impls []*Impl, tc gemmCase, seed uint64) {
	t.Helper()
	tc.alpha, tc.beta = 1, 0
	r := newRand(seed)
	d := tc.data(r)
	ref, mag := gemmRef(tc, d)
	bias := offsetCopy(randSlice(r, tc.n), (tc.off+1)%5)
	bias0 := append([]float32(nil), bias...)
	ldc := tc.n + tc.pad
	fill := func(off int) []float32 {
		s := make([]float32, tc.m*ldc)
		for i := range s {
			s[i] = float32(math.NaN())
			if i%ldc >= tc.n {
				s[i] = 12345
			}
		}
		return offsetCopy(s, off)
	}
	for _, p := range impls {
		name := fmtShape("impl", p.Name(), "transA", tc.transA, "transB", tc.transB, "m", tc.m, "n", tc.n, "k", tc.k, "ldc", ldc)
		c := fill(tc.off)
		p.GemmBias(tc.transA, tc.transB, tc.m, tc.n, tc.k, d.a, d.lda, d.b, d.ldb, bias, c, ldc)
		want := fill(0)
		p.Gemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, 1, d.a, d.lda, d.b, d.ldb, 0, want, ldc)
		for i := 0; i < tc.m; i++ {
			p.Add(want[i*ldc:i*ldc+tc.n], want[i*ldc:i*ldc+tc.n], bias[:tc.n])
		}
		for i := range want {
			if !bitsEqual(c[i], want[i]) {
				t.Fatalf("%s: c[%d] = %v, Gemm then Add gives %v", name, i, c[i], want[i])
			}
		}
		for i := range bias {
			if !bitsEqual(bias[i], bias0[i]) {
				t.Fatalf("%s: bias[%d] changed", name, i)
			}
		}
		for i := 0; i < tc.m; i++ {
			for j := 0; j < tc.n; j++ {
				w := ref[i*tc.n+j] + float64(bias[j])
				tol := gemmTol(tc.k+1, mag[i*tc.n+j]+math.Abs(float64(bias[j])))
				if got := c[i*ldc+j]; math.Abs(float64(got)-w) > tol || got != got {
					t.Fatalf("%s: c[%d,%d] = %v, want %v (tol %.3g)", name, i, j, got, w, tol)
				}
			}
		}
	}
}

// TestGemmBias runs GemmBias over shapes that cross the micro-tiles' edges
// (m around MR = 6, 8 and 14, n around NR = 12, 16 and 32 and the narrow
// and dot paths; m up to 4, or 16 with B transposed, on the skinny
// kernels), k = 0 and k across the unroll and kc, with all four
// transposes and odd leading dimensions.
func TestGemmBias(t *testing.T) {
	epilogueSweep(600, []int{1, 2, 3, 13, 14, 15, 29, 100}, func(tc gemmCase, seed uint64) {
		gemmBiasCase(t, gemmImpls(), tc, seed)
	})
}

// TestGemmBiasLarge runs GemmBias past the column block of the SIMD
// drivers and above the size at which their GEMM splits C into strips of
// rows (m >= n) or of columns (m < n) over goroutines, with GOMAXPROCS at
// least 2 so that it does: the epilogue of each strip must take its own
// part of the bias. Smaller blockings are tested in kernels/amd64 and
// kernels/arm64.
func TestGemmBiasLarge(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	epilogueLarge(1000, func(tc gemmCase, seed uint64) { gemmBiasCase(t, gemmNonGeneric(), tc, seed) })
}

// TestGemmBiasSmallMSplit checks that GemmBias on a small-M product large
// enough for the skinny kernels to split it between goroutines gives
// bitwise the results of GOMAXPROCS=1.
func TestGemmBiasSmallMSplit(t *testing.T) {
	if testing.Short() {
		t.Skip("large problem")
	}
	for _, p := range gemmNonGeneric() {
		for ti := 0; ti < 4; ti++ {
			for _, m := range []int{1, 3, 8} {
				ta, tb := ti&1 != 0, ti&2 != 0
				tc := gemmCase{transA: ta, transB: tb, m: m, n: 2100, k: 700, pad: 1}
				r := newRand(uint64(ti*10 + m))
				d := tc.data(r)
				bias := randSlice(r, tc.n)
				run := func(procs int) []float32 {
					prev := runtime.GOMAXPROCS(procs)
					defer runtime.GOMAXPROCS(prev)
					c := make([]float32, m*tc.n)
					p.GemmBias(ta, tb, m, tc.n, tc.k, d.a, d.lda, d.b, d.ldb, bias, c, tc.n)
					return c
				}
				c1, c4 := run(1), run(4)
				for i := range c1 {
					if !bitsEqual(c1[i], c4[i]) {
						t.Fatalf("%s %+v: c[%d] = %v with one thread, %v with several", p.Name(), tc, i, c1[i], c4[i])
					}
				}
			}
		}
	}
}

// TestGemmBiasAllocs checks that a warm GemmBias allocates nothing, on one
// goroutine (the skinny and the blocked paths) and on parallel strips.
func TestGemmBiasAllocs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	forEachGemmImpl(t, func(t *testing.T, p *Impl) {
		for _, s := range [][3]int{{3, 9, 5}, {7, 9, 5}, {100, 130, 0}, {100, 130, 300}, {512, 256, 256}, {256, 512, 256}} {
			m, n, k := s[0], s[1], s[2]
			if p == genericImpl && m*n*k > 1e6 {
				continue
			}
			a, b, bias, c := make([]float32, m*k), make([]float32, k*n), make([]float32, n), make([]float32, m*n)
			for _, tb := range []bool{false, true} {
				ldb := n
				if tb {
					ldb = k
				}
				p.GemmBias(false, tb, m, n, k, a, k, b, ldb, bias, c, n) // warm up
				allocs := testing.AllocsPerRun(5, func() {
					p.GemmBias(false, tb, m, n, k, a, k, b, ldb, bias, c, n)
				})
				if allocs != 0 {
					t.Errorf("%v transB=%v: %v allocations per call, want 0", s, tb, allocs)
				}
			}
		}
	})
}

// TestGemmBiasEmpty checks that empty shapes, and A and B overlapping C
// when k = 0 (they are not read), are accepted, and that with k = 0 every
// row of C is the bias.
func TestGemmBiasEmpty(t *testing.T) {
	buf := make([]float32, 100)
	bias := []float32{1, 2, 3}
	for _, p := range gemmImpls() {
		for _, f := range []func(){
			func() { p.GemmBias(false, false, 0, 3, 4, nil, 4, buf[:12], 3, bias, nil, 3) },
			func() { p.GemmBias(false, false, 3, 0, 4, buf[:12], 4, nil, 0, nil, nil, 0) },
		} {
			if msg := panicMessage(f); msg != "" {
				t.Errorf("%s: unexpected panic %q", p.Name(), msg)
			}
		}
		c := buf[:6]
		p.GemmBias(false, false, 2, 3, 0, buf, 0, buf, 3, bias, c, 3)
		for i, want := range []float32{1, 2, 3, 1, 2, 3} {
			if c[i] != want {
				t.Errorf("%s: GemmBias with k = 0: c[%d] = %v, want %v", p.Name(), i, c[i], want)
			}
		}
	}
}

// TestGemmBiasBadArgs checks messages of GemmBias's argument checks beyond
// those of TestBadArgumentsPanic (which runs on every implementation).
func TestGemmBiasBadArgs(t *testing.T) {
	buf := make([]float32, 100)
	a, b, bias, c := make([]float32, 12), make([]float32, 12), make([]float32, 3), make([]float32, 9)
	cases := []struct {
		name string
		call func()
		want string
	}{
		{"short a transposed", func() { GemmBias(true, false, 3, 3, 5, a, 3, buf, 3, bias, c, 3) }, "kernels.GemmBias: len(a) = 12, want >= 15"},
		{"short b transposed", func() { GemmBias(false, true, 3, 3, 5, buf, 5, b, 5, bias, c, 3) }, "kernels.GemmBias: len(b) = 12, want >= 15"},
		{"short bias", func() { GemmBias(false, false, 3, 3, 4, a, 4, b, 3, bias[:2], c, 3) }, "kernels.GemmBias: len(bias) = 2, want >= 3"},
		{"small ldc", func() { GemmBias(false, false, 3, 3, 4, a, 4, b, 3, bias, c, 2) }, "kernels.GemmBias: ldc = 2 is smaller than the row length 3"},
		{"bias in c", func() { GemmBias(false, false, 3, 3, 4, a, 4, b, 3, buf[4:7], buf, 3) }, "kernels.GemmBias: c overlaps bias"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if msg := panicMessage(tc.call); !strings.Contains(msg, tc.want) {
				t.Errorf("panic %q, want it to contain %q", msg, tc.want)
			}
		})
	}
}
