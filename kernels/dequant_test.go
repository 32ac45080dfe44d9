package kernels

import (
	"fmt"
	"math"
	"testing"

	"github.com/simdgpt/simdgpt/internal/race"
	"github.com/simdgpt/simdgpt/kernels/internal/generic"
	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

// dequantCase is one DequantizeInt8 call: rows j0 .. j0+n-1 of an N×K
// matrix into D with leading dimension ldd, D starting off floats into
// its slice.
type dequantCase struct {
	N, K, j0, n, ldd, off int
}

func (c dequantCase) String() string {
	return fmt.Sprintf("N=%d K=%d j0=%d n=%d ldd=%d off=%d", c.N, c.K, c.j0, c.n, c.ldd, c.off)
}

// dequantWeights returns an N×K Int8 matrix of random weights and scales,
// some groups with special scales: 0, subnormal, the largest float32,
// negative zero, and scales whose products with the weights round.
func dequantWeights(seed uint64, n, k int) *lowbit.Int8 {
	r := newRand(seed)
	w := lowbit.NewInt8(n, k)
	special := []float32{0, float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, 3e-39, math.MaxFloat32 / 127, 1.0 / 3, -0.1}
	for i := range w.Blocks {
		b := &w.Blocks[i]
		b.Scale = float32(r.NormFloat64()) * 0.01
		if r.IntN(4) == 0 {
			b.Scale = special[r.IntN(len(special))]
		}
		for p := range b.Q {
			b.Q[p] = int8(r.IntN(255) - 127)
		}
	}
	return w
}

// TestDequantizeInt8 checks every implementation bit for bit against
// generic.DequantizeInt8 (itself against lowbit.Int8.At), over K from 0
// past two groups and every tail, row ranges at the start, middle and
// end, leading dimensions with slack, and unaligned starts of D; the
// floats of D's slice outside the rows written must not change.
func TestDequantizeInt8(t *testing.T) {
	var cases []dequantCase
	for _, k := range []int{0, 1, 7, 16, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 768} {
		for _, rows := range [][3]int{{1, 0, 1}, {5, 0, 5}, {5, 2, 3}, {9, 8, 1}, {4, 4, 0}, {3, 1, 0}} {
			for _, off := range []int{0, 1, 3} {
				ldd := max(k, 1) + off%2*3
				cases = append(cases, dequantCase{N: rows[0], K: k, j0: rows[1], n: rows[2], ldd: ldd, off: off})
			}
		}
	}
	forEachImpl(t, func(t *testing.T, p *Impl) {
		for i, tc := range cases {
			w := dequantWeights(uint64(i+1), tc.N, tc.K)
			size := tc.off + 7
			if tc.n > 0 {
				size += (tc.n-1)*tc.ldd + tc.K
			}
			d := make([]float32, size)
			want := make([]float32, size)
			for q := range d {
				d[q] = float32(q) + 0.5
				want[q] = d[q]
			}
			generic.DequantizeInt8(w, tc.j0, tc.n, want[tc.off:], tc.ldd)
			for r := 0; r < tc.n; r++ {
				for q := 0; q < tc.K; q++ {
					if got, at := want[tc.off+r*tc.ldd+q], w.At(tc.j0+r, q); math.Float32bits(got) != math.Float32bits(at) {
						t.Fatalf("generic %v: D[%d][%d] = %v, At gives %v", tc, r, q, got, at)
					}
				}
			}
			p.DequantizeInt8(w, tc.j0, tc.n, d[tc.off:], tc.ldd)
			for q := range d {
				if math.Float32bits(d[q]) != math.Float32bits(want[q]) {
					t.Fatalf("%v: d[%d] = %v (%#x), want %v (%#x)", tc, q, d[q], math.Float32bits(d[q]), want[q], math.Float32bits(want[q]))
				}
			}
		}
	})
}

// TestDequantizeInt8Allocs checks that a call allocates nothing.
func TestDequantizeInt8Allocs(t *testing.T) {
	w := dequantWeights(1, 8, 100)
	d := make([]float32, 8*100)
	forEachImpl(t, func(t *testing.T, p *Impl) {
		if n := testing.AllocsPerRun(10, func() { p.DequantizeInt8(w, 0, 8, d, 100) }); n != 0 {
			t.Errorf("%v allocations a call, want 0", n)
		}
	})
}

// gemmDequantCase is one GemmDequantInt8 call: m rows of A (leading
// dimension lda) times the N×K int8 W into C (ldc), A and C starting off
// floats into their slices.
type gemmDequantCase struct {
	m, N, K, lda, ldc, off int
	alpha, beta            float32
}

func (c gemmDequantCase) String() string {
	return fmt.Sprintf("m=%d N=%d K=%d lda=%d ldc=%d off=%d alpha=%v beta=%v", c.m, c.N, c.K, c.lda, c.ldc, c.off, c.alpha, c.beta)
}

// TestGemmDequantInt8 checks every implementation bit for bit against
// its own DequantizeInt8 of all of W followed by its Gemm, the contract:
// m on either side of the small-M rule (16 rows with W transposed) and
// across the micro-kernels' rows, N across the 16-column packing blocks,
// the 32-column panels and the 256-row dequantized panels, K from 0 past
// two groups and every half-group tail and past a GEMM block (kc), odd
// leading dimensions and unaligned starts, alpha 0 and beta 0, 1 and
// other; one case large enough to be split between goroutines. The
// floats of C's slice outside C must not change.
func TestGemmDequantInt8(t *testing.T) {
	var cases []gemmDequantCase
	for _, m := range []int{1, 5, 16, 17, 30} {
		for _, n := range []int{1, 15, 16, 17, 33, 70} {
			for _, k := range []int{0, 1, 15, 16, 17, 31, 32, 33, 48, 100} {
				off := (m + n + k) % 3
				cases = append(cases, gemmDequantCase{m: m, N: n, K: k, lda: max(k, 1) + off, ldc: n + 2*off, off: off, alpha: 1.5, beta: float32(off) / 2})
			}
		}
	}
	cases = append(cases,
		gemmDequantCase{m: 40, N: 300, K: 800, lda: 803, ldc: 301, off: 1, alpha: 1, beta: 0},
		gemmDequantCase{m: 300, N: 520, K: 400, lda: 400, ldc: 520, alpha: -0.5, beta: 1},
		gemmDequantCase{m: 20, N: 40, K: 64, lda: 64, ldc: 40, alpha: 0, beta: 0.5},
		gemmDequantCase{m: 20, N: 40, K: 64, lda: 64, ldc: 40, alpha: 0, beta: 0},
	)
	forEachImpl(t, func(t *testing.T, p *Impl) {
		for i, tc := range cases {
			w := dequantWeights(uint64(i+7), tc.N, tc.K)
			r := newRand(uint64(i + 100))
			a := make([]float32, tc.off+(tc.m-1)*tc.lda+tc.K)
			for q := range a {
				a[q] = float32(r.NormFloat64())
			}
			size := tc.off + (tc.m-1)*tc.ldc + tc.N + 5
			c, want := make([]float32, size), make([]float32, size)
			for q := range c {
				c[q] = float32(r.NormFloat64())
				want[q] = c[q]
			}
			d := make([]float32, tc.N*max(tc.K, 1))
			p.DequantizeInt8(w, 0, tc.N, d, max(tc.K, 1))
			p.Gemm(false, true, tc.m, tc.N, tc.K, tc.alpha, a[tc.off:], tc.lda, d, max(tc.K, 1), tc.beta, want[tc.off:], tc.ldc)
			p.GemmDequantInt8(tc.m, tc.alpha, a[tc.off:], tc.lda, w, tc.beta, c[tc.off:], tc.ldc)
			for q := range c {
				if math.Float32bits(c[q]) != math.Float32bits(want[q]) {
					t.Fatalf("%v: c[%d] = %v, DequantizeInt8 and Gemm give %v", tc, q, c[q], want[q])
				}
			}
		}
	})
}

// TestGemmDequantInt8Allocs checks that a call allocates nothing once
// warm, on either path (small m, and many rows).
func TestGemmDequantInt8Allocs(t *testing.T) {
	if race.Enabled {
		t.Skip("under the race detector sync.Pool drops what it is given at random: the allocation counts are not the program's")
	}
	w := dequantWeights(1, 64, 96)
	a, c := make([]float32, 40*96), make([]float32, 40*64)
	forEachImpl(t, func(t *testing.T, p *Impl) {
		for _, m := range []int{8, 40} {
			p.GemmDequantInt8(m, 1, a, 96, w, 0, c, 64)
			if n := testing.AllocsPerRun(10, func() { p.GemmDequantInt8(m, 1, a, 96, w, 0, c, 64) }); n != 0 {
				t.Errorf("m=%d: %v allocations a call, want 0", m, n)
			}
		}
	})
}
