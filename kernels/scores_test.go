package kernels

import (
	"math"
	"strings"
	"testing"
)

// scoresCase is one MaskedScores problem.
type scoresCase struct {
	tq, tk, d, offset int
	pad               int // added to every leading dimension
}

// checkScores runs tc on p and checks every score against a float64
// reference: masked entries must be exactly -Inf, visible ones within
// (d+2)·eps32·scale·Σ|q·k| (any summation order, FMA allowed), and the
// padding of S must be untouched.
func checkScores(t *testing.T, p *Impl, tc scoresCase, seed uint64) {
	t.Helper()
	r := newRand(seed)
	ldq, ldk, lds := tc.d+tc.pad, tc.d+tc.pad, tc.tk+tc.pad
	q := offsetCopy(randSlice(r, tc.tq*ldq), int(seed%4))
	k := offsetCopy(randSlice(r, tc.tk*ldk), int(seed%3))
	s := make([]float32, tc.tq*lds)
	for i := range s {
		s[i] = 777 // sentinel: padding must survive, every score must be written
	}
	scale := float32(1 / math.Sqrt(float64(max(tc.d, 1))))
	p.MaskedScores(tc.tq, tc.tk, tc.d, scale, q, ldq, k, ldk, tc.offset, s, lds)
	for i := 0; i < tc.tq; i++ {
		for j := 0; j < lds; j++ {
			got := s[i*lds+j]
			if j >= tc.tk {
				if got != 777 {
					t.Fatalf("%s %+v: padding S[%d,%d] = %v", p.Name(), tc, i, j, got)
				}
				continue
			}
			if j > i+tc.offset {
				if !math.IsInf(float64(got), -1) {
					t.Fatalf("%s %+v: masked S[%d,%d] = %v, want -Inf", p.Name(), tc, i, j, got)
				}
				continue
			}
			var dot, mag float64
			for c := 0; c < tc.d; c++ {
				v := float64(q[i*ldq+c]) * float64(k[j*ldk+c])
				dot += v
				mag += math.Abs(v)
			}
			want := float64(scale) * dot
			tol := float64(tc.d+2)*float32Eps*float64(scale)*mag + 1e-30
			if math.Abs(float64(got)-want) > tol || got != got {
				t.Fatalf("%s %+v: S[%d,%d] = %v, want %v (tol %.3g)", p.Name(), tc, i, j, got, want, tol)
			}
		}
	}
}

// TestMaskedScoresSweep runs tq and tk over 0..70 (crossing every tile
// edge of every micro-kernel) with several head sizes and offsets,
// including negative ones and offsets that unmask everything.
func TestMaskedScoresSweep(t *testing.T) {
	ds := []int{0, 1, 5, 16, 33, 64}
	offsets := []int{0, -3, 2, 17, 100}
	if testing.Short() {
		ds, offsets = []int{7, 64}, []int{0, 5}
	}
	forEachGemmImpl(t, func(t *testing.T, p *Impl) {
		seed := uint64(1)
		for _, d := range ds {
			for _, off := range offsets {
				for n := 0; n <= 70; n++ {
					seed++
					checkScores(t, p, scoresCase{tq: n, tk: n + off%3, d: d, offset: off, pad: n % 3}, seed)
					seed++
					checkScores(t, p, scoresCase{tq: 1 + n%5, tk: n, d: d, offset: n - 1, pad: 1}, seed) // decoding with a KV cache
				}
			}
		}
		for _, tc := range []scoresCase{{256, 256, 64, 0, 0}, {100, 300, 130, 200, 3}, {70, 70, 300, 0, 1}, {33, 500, 64, 467, 0}} {
			seed++
			checkScores(t, p, tc, seed)
		}
	})
}

// TestMaskedScoresMatchesGemm checks the fast path against GEMM followed
// by masking on the same implementation, bit for bit where visible.
func TestMaskedScoresMatchesGemm(t *testing.T) {
	forEachGemmImpl(t, func(t *testing.T, p *Impl) {
		const tq, tk, d = 64, 64, 32
		r := newRand(3)
		q, k := randSlice(r, tq*d), randSlice(r, tk*d)
		s, g := make([]float32, tq*tk), make([]float32, tq*tk)
		p.MaskedScores(tq, tk, d, 0.125, q, d, k, d, 0, s, tk)
		p.Gemm(false, true, tq, tk, d, 0.125, q, d, k, d, 0, g, tk)
		for i := 0; i < tq; i++ {
			for j := 0; j <= i; j++ {
				if s[i*tk+j] != g[i*tk+j] {
					t.Fatalf("S[%d,%d] = %v, Gemm gives %v", i, j, s[i*tk+j], g[i*tk+j])
				}
			}
		}
	})
}

func TestMaskedScoresAllocs(t *testing.T) {
	forEachGemmImpl(t, func(t *testing.T, p *Impl) {
		const tq, tk, d = 100, 130, 64
		q, k, s := make([]float32, tq*d), make([]float32, tk*d), make([]float32, tq*tk)
		p.MaskedScores(tq, tk, d, 1, q, d, k, d, 30, s, tk)
		if a := testing.AllocsPerRun(10, func() { p.MaskedScores(tq, tk, d, 1, q, d, k, d, 30, s, tk) }); a != 0 {
			t.Errorf("%v allocations per call, want 0", a)
		}
	})
}

func TestMaskedScoresBadShapes(t *testing.T) {
	q, k, s := make([]float32, 12), make([]float32, 12), make([]float32, 9)
	for _, tc := range []struct {
		call func()
		want string
	}{
		{func() { MaskedScores(3, 3, -4, 1, q, 4, k, 4, 0, s, 3) }, "kernels.MaskedScores: d = -4"},
		{func() { MaskedScores(3, 3, 4, 1, q, 3, k, 4, 0, s, 3) }, "kernels.MaskedScores: ldq = 3 is smaller than the row length 4"},
		{func() { MaskedScores(3, 4, 4, 1, q, 4, k, 4, 0, s, 4) }, "kernels.MaskedScores: len(k) = 12, want >= 16"},
		{func() { MaskedScores(3, 3, 4, 1, q, 4, k, 4, 0, s[:8], 3) }, "kernels.MaskedScores: len(s) = 8, want >= 9"},
	} {
		if msg := panicMessage(tc.call); !strings.Contains(msg, tc.want) {
			t.Errorf("panic %q, want it to contain %q", msg, tc.want)
		}
	}
}
