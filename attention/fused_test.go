package attention

import (
	"testing"

	"github.com/simdgpt/simdgpt/kernels"
	"github.com/simdgpt/simdgpt/kernels/kernelstest"
)

// fusedTol is the documented agreement of Fused.Forward with
// Layer.Forward and with the float64 reference, relative to the largest
// |output|.
const fusedTol = 5e-6

// TestFusedMatchesReference holds Fused.Forward to the explicit float64
// reference for H in {1,2,4,8}, T = 1, odd T and T across the blocks.
func TestFusedMatchesReference(t *testing.T) {
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		for _, tc := range refCases {
			s := tc.s
			l := newLayer(t, p, s.c, tc.h)
			pr := newProblem(s, 11)
			out := make([]float32, s.b*s.t*s.c)
			l.NewFused().Forward(out, pr.qkv, s.b, s.t)
			tr := refForward(s, float64(l.Scale()), to64(pr.qkv))
			if e := relErr(out, tr.y); e > fusedTol {
				t.Errorf("B=%d T=%d C=%d H=%d: Fused.Forward differs from the reference by %.2g (relative)", s.b, s.t, s.c, tc.h, e)
			}
		}
	})
}

// TestFusedLongContext compares Fused.Forward with Layer.Forward at
// contexts where the T×T matrices no longer fit in cache.
func TestFusedLongContext(t *testing.T) {
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
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
			l := newLayer(t, p, tc.c, tc.h)
			pr := newProblem(s, 12)
			want := make([]float32, tc.b*tc.t*tc.c)
			l.Forward(want, pr.qkv, tc.b, tc.t)
			got := make([]float32, len(want))
			l.NewFused().Forward(got, pr.qkv, tc.b, tc.t)
			if e := relErr(got, to64(want)); e > fusedTol {
				t.Errorf("B=%d T=%d C=%d H=%d: Fused.Forward differs from Layer.Forward by %.2g (relative)", tc.b, tc.t, tc.c, tc.h, e)
			}
		}
	})
}

// TestInferenceLeavesForwardState checks that fused inference and
// decoding with a layer's Fused and Decoder between its Forward and
// Backward change nothing Backward or Probs use.
func TestInferenceLeavesForwardState(t *testing.T) {
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		s := refShape{2, 40, 16, 2}
		pr := newProblem(s, 13)
		want := runFast(newLayer(t, p, s.c, 2), pr)

		l := newLayer(t, p, s.c, 2)
		n := s.b * s.t * s.c
		y := make([]float32, n)
		l.Forward(y, pr.qkv, s.b, s.t)
		other := newProblem(refShape{1, 70, 16, 2}, 14)
		l.NewFused().Forward(make([]float32, 70*16), other.qkv, 1, 70)
		l.NewDecoder(4).Decode(make([]float32, 16), other.qkv, 1)
		dqkv := make([]float32, 3*n)
		l.Backward(dqkv, lossGradient(pr, y), pr.qkv)
		equal(t, "after Fused.Forward and Decoder.Decode", fastResult{y, l.Probs(), dqkv}.named(), want.named())
	})
}

func TestFusedBadArgumentsAndAllocs(t *testing.T) {
	const c = 8
	f := newLayer(t, nil, c, 2).NewFused()
	qkv, y := make([]float32, 3*2*3*c), make([]float32, 2*3*c)
	for _, tc := range []struct {
		f    func()
		want string
	}{
		{func() { f.Forward(y, qkv[:143], 2, 3) }, "attention.Fused.Forward: len(qkv) = 143, want >= 3*b*t*C = 3*2*3*8 = 144"},
		{func() { f.Forward(y, qkv[:48], 2, 3) }, "attention.Fused.Forward: len(qkv) = 48, want >= 3*b*t*C = 3*2*3*8 = 144"},
		{func() { f.Forward(y[:1], qkv, 2, 3) }, "attention.Fused.Forward: len(y) = 1, want >= b*t*C = 2*3*8 = 48"},
		{func() { f.Forward(y, qkv, 2, 0) }, "attention.Fused.Forward: t = 0, must be >= 1"},
		{func() { f.Forward(y, qkv, 0, 3) }, "attention.Fused.Forward: b = 0, must be >= 1"},
	} {
		mustPanic(t, tc.f, tc.want)
	}

	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		s := refShape{2, 150, 32, 4}
		pr := newProblem(s, 15)
		out := make([]float32, s.b*s.t*s.c)
		lf := newLayer(t, p, s.c, 4).NewFused()
		run := func() { lf.Forward(out, pr.qkv, s.b, s.t) }
		run()
		if a := testing.AllocsPerRun(10, run); a != 0 {
			t.Errorf("Fused.Forward allocates %v times per call", a)
		}
	})
}
