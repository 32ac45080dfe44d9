package kernels

import (
	"fmt"
	"math"
	"testing"

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
