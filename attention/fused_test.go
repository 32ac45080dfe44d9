package attention

import (
	"testing"
)

// fusedTol is the documented agreement of ForwardFused with Forward and
// with the float64 reference, relative to the largest |output|.
const fusedTol = 5e-6

// TestFusedMatchesReference holds ForwardFused to the explicit float64
// reference for H in {1,2,4,8}, T = 1, odd T and T across the blocks.
func TestFusedMatchesReference(t *testing.T) {
	for _, tc := range refCases {
		s := tc.s
		l := newLayer(t, s.c, tc.h)
		pr := newProblem(s, 11)
		out := make([]float32, s.b*s.t*s.c)
		l.ForwardFused(out, pr.x, s.b, s.t, pr.p)
		tr := refForward(s, float64(l.Scale()), to64(pr.x), toParams64(pr.p))
		if e := relErr(out, tr.out); e > fusedTol {
			t.Errorf("B=%d T=%d C=%d H=%d: ForwardFused differs from the reference by %.2g (relative)", s.b, s.t, s.c, tc.h, e)
		}
	}
}

// TestFusedLongContext compares ForwardFused with the explicit Forward at
// contexts where the T×T matrices no longer fit in cache.
func TestFusedLongContext(t *testing.T) {
	cases := []struct {
		b, t, c, h int
		long       bool // skipped under -short
	}{
		{1, 1000, 32, 2, false},
		{2, 513, 64, 4, false},
		{1, 2048, 64, 4, false},
		{1, 4096, 64, 1, true},
	}
	for _, tc := range cases {
		if tc.long && testing.Short() {
			continue
		}
		if testing.Short() && tc.t > 400 {
			tc.t = 400 // CI's arm64 run under qemu: keep it within a second
		}
		s := refShape{tc.b, tc.t, tc.c, tc.h}
		l := newLayer(t, tc.c, tc.h)
		pr := newProblem(s, 12)
		want := make([]float32, tc.b*tc.t*tc.c)
		l.Forward(want, pr.x, tc.b, tc.t, pr.p)
		got := make([]float32, len(want))
		l.ForwardFused(got, pr.x, tc.b, tc.t, pr.p)
		if e := relErr(got, to64(want)); e > fusedTol {
			t.Errorf("B=%d T=%d C=%d H=%d: ForwardFused differs from Forward by %.2g (relative)", tc.b, tc.t, tc.c, tc.h, e)
		}
	}
}

// TestFusedLeavesForwardState checks that inference between Forward and
// Backward changes nothing Backward uses.
func TestFusedLeavesForwardState(t *testing.T) {
	s := refShape{2, 40, 16, 2}
	pr := newProblem(s, 13)
	want := runFast(newLayer(t, s.c, 2), pr)

	l := newLayer(t, s.c, 2)
	n := s.b * s.t * s.c
	out := make([]float32, n)
	l.Forward(out, pr.x, s.b, s.t, pr.p)
	other := newProblem(refShape{1, 70, 16, 2}, 14)
	l.ForwardFused(make([]float32, 70*16), other.x, 1, 70, other.p)
	l.Decode(make([]float32, 16), other.x, 1, other.p, NewKVCache(16, 4))
	_, dout64 := crossEntropy(s.b*s.t, s.c, to64(out), pr.targets)
	dout := make([]float32, n)
	for i, v := range dout64 {
		dout[i] = float32(v)
	}
	dx := make([]float32, n)
	g := ViewParams(s.c, make([]float32, NumParams(s.c)))
	l.Backward(dx, dout, pr.p, g)
	got := fastResult{out, l.Probs(), dx, g}.named()
	for i, w := range want.named() {
		for j := range w.s {
			if got[i].s[j] != w.s[j] {
				t.Fatalf("%s[%d] = %v after ForwardFused and Decode, %v without", w.name, j, got[i].s[j], w.s[j])
			}
		}
	}
}

func TestFusedBadArgumentsAndAllocs(t *testing.T) {
	const c = 8
	l := newLayer(t, c, 2)
	p := ViewParams(c, make([]float32, NumParams(c)))
	x := make([]float32, 2*3*c)
	mustPanic(t, func() { l.ForwardFused(x, x[:47], 2, 3, p) }, "attention.ForwardFused: len(x) = 47, want >= b*t*C = 2*3*8 = 48")
	mustPanic(t, func() { l.ForwardFused(x[:1], x, 2, 3, p) }, "attention.ForwardFused: len(out) = 1, want >= b*t*C = 2*3*8 = 48")
	mustPanic(t, func() { l.ForwardFused(x, x, 2, 0, p) }, "attention.ForwardFused: t = 0, must be >= 1")
	mustPanic(t, func() { l.ForwardFused(x, x, 2, 3, Params{}) }, "attention.ForwardFused: len(p.WQKV) = 0, want 192")

	s := refShape{2, 150, 32, 4}
	pr := newProblem(s, 15)
	out := make([]float32, s.b*s.t*s.c)
	lf := newLayer(t, s.c, 4)
	run := func() { lf.ForwardFused(out, pr.x, s.b, s.t, pr.p) }
	run()
	if a := testing.AllocsPerRun(10, run); a != 0 {
		t.Errorf("ForwardFused allocates %v times per call", a)
	}
}
