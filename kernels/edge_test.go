package kernels

import (
	"math"
	"strings"
	"testing"
)

// TestVecInPlaceAllowed checks the other side of the overlap rule of the
// vector operations on every implementation: an output that is exactly
// an input (the same first element) is allowed and gives bitwise the
// result of the same call on separate memory, and inputs that are only
// read may overlap each other in any way.
func TestVecInPlaceAllowed(t *testing.T) {
	forEachImpl(t, func(t *testing.T, p *Impl) {
		for _, n := range []int{0, 1, 7, 17, 64, 100, 1000} {
			r := newRand(uint64(n) + 11)
			buf := randSlice(r, 2*n+3)
			x0, y0 := buf[:n:n], buf[n+3:]
			same := func(op string, got, want []float32) {
				t.Helper()
				for i := range want {
					if !bitsEqual(got[i], want[i]) {
						t.Fatalf("n=%d %s: element %d = %v, want %v", n, op, i, got[i], want[i])
					}
				}
			}
			cp := func(s []float32) []float32 { return append([]float32(nil), s...) }

			want := make([]float32, n)
			p.Add(want, x0, y0)
			x := cp(x0)
			p.Add(x, x, cp(y0))
			same("Add(x, x, y)", x, want)
			y := cp(y0)
			p.Add(y, cp(x0), y)
			same("Add(y, x, y)", y, want)

			// Read-only inputs overlapping: x and y shifted by 3 in one
			// buffer, and x added to itself.
			if n > 3 {
				src := cp(buf[:n+3])
				want = make([]float32, n)
				p.Add(want, cp(src[:n]), cp(src[3:]))
				got := make([]float32, n)
				p.Add(got, src[:n], src[3:])
				same("Add(dst, x, x shifted)", got, want)
			}
			want = make([]float32, n)
			p.Add(want, x0, cp(x0))
			got := make([]float32, n)
			p.Add(got, x0, x0)
			same("Add(dst, x, x)", got, want)

			want = cp(x0)
			p.Axpy(0.37, cp(x0), want)
			x = cp(x0)
			p.Axpy(0.37, x, x)
			same("Axpy(x, x)", x, want)
		}
	})
}

// TestMaskedScoresExtremeOffsets runs MaskedScores on every
// implementation with the largest offset it accepts, MaxInt-tq, which
// must unmask every key exactly as offset = tk does, and with MinInt,
// which must mask every key; the padding of S must survive both.
func TestMaskedScoresExtremeOffsets(t *testing.T) {
	const tq, tk, d, lds = 5, 70, 9, 73
	r := newRand(7)
	q, k := randSlice(r, tq*d), randSlice(r, tk*d)
	run := func(p *Impl, offset int) []float32 {
		s := make([]float32, tq*lds)
		for i := range s {
			s[i] = 777
		}
		p.MaskedScores(tq, tk, d, 0.5, q, d, k, d, offset, s, lds)
		return s
	}
	forEachImpl(t, func(t *testing.T, p *Impl) {
		want := run(p, tk)
		for _, off := range []int{math.MaxInt - tq, math.MaxInt - tq - 1} {
			got := run(p, off)
			for i := range want {
				if !bitsEqual(got[i], want[i]) {
					t.Fatalf("offset %d: S[%d] = %v, with offset tk = %v", off, i, got[i], want[i])
				}
			}
		}
		for _, off := range []int{math.MinInt, -tk} {
			got := run(p, off)
			for i, v := range got {
				if i%lds < tk && !math.IsInf(float64(v), -1) || i%lds >= tk && v != 777 {
					t.Fatalf("offset %d: S[%d] = %v, want -Inf (777 in the padding)", off, i, v)
				}
			}
		}
	})
}

// TestFMAPeakLoopOverflow checks that an iteration count whose number of
// operations overflows int panics, naming the method, before the loop
// runs; generic, which has no loop, returns 0.
func TestFMAPeakLoopOverflow(t *testing.T) {
	forEachImpl(t, func(t *testing.T, p *Impl) {
		if p == genericImpl {
			if got := p.FMAPeakLoop(math.MaxInt); got != 0 {
				t.Errorf("generic FMAPeakLoop = %d, want 0", got)
			}
			return
		}
		msg := panicMessage(func() { p.FMAPeakLoop(math.MaxInt) })
		if !strings.HasPrefix(msg, "kernels.Impl.FMAPeakLoop: iters = ") || !strings.Contains(msg, "overflows int") {
			t.Errorf("panic %q, want it to name kernels.Impl.FMAPeakLoop and the overflow", msg)
		}
		if got := p.FMAPeakLoop(1); got <= 0 {
			t.Errorf("FMAPeakLoop(1) = %d, want > 0", got)
		}
	})
}
