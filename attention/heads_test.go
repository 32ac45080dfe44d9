package attention

import (
	"math"
	"testing"

	"github.com/simdgpt/simdgpt/kernels"
	"github.com/simdgpt/simdgpt/kernels/kernelstest"
)

// TestHeadsEqualProjectedForward checks Layer.ForwardHeads and
// Decoder.DecodeHeads, given the query/key/value projection of x and
// followed by the output projection, against Forward and Decode of x: the
// same operations, so the same bits.
func TestHeadsEqualProjectedForward(t *testing.T) {
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		for _, tc := range []struct {
			b, t, c, h int
			prompt     int
		}{
			{1, 1, 8, 0, 1},
			{2, 9, 16, 2, 1},
			{3, 33, 32, 4, 5},
			{1, 70, 48, 6, 70},
		} {
			s := refShape{tc.b, tc.t, tc.c, max(tc.h, 1)}
			l := newLayer(t, p, tc.c, tc.h)
			pr := newProblem(s, 3)
			n, C := tc.b*tc.t, tc.c
			want := make([]float32, n*C)
			l.Forward(want, pr.x, tc.b, tc.t, pr.p)

			qkv, y, got := make([]float32, n*3*C), make([]float32, n*C), make([]float32, n*C)
			l.project(n, C, 3*C, pr.x, pr.p.WQKV, pr.p.BQKV, qkv)
			l.ForwardHeads(y, qkv, tc.b, tc.t)
			l.project(n, C, C, y, pr.p.WProj, pr.p.BProj, got)
			equal(t, "ForwardHeads", []namedF32{{"out", got}}, []namedF32{{"out", want}})
			if P := l.Probs(); P != nil {
				t.Errorf("Probs() after ForwardHeads has length %d, want nil", len(P))
			}
			mustPanic(t, func() { l.Backward(got, got, pr.p, pr.p) }, "attention.Layer.Backward: ")

			// One sequence, decoded as a prompt and then token by token.
			T := tc.t
			x := pr.x[:T*C]
			dw, dg := l.NewDecoder(T), l.NewDecoder(T)
			wantD, gotD := make([]float32, T*C), make([]float32, T*C)
			for pos := 0; pos < T; {
				k := 1
				if pos == 0 {
					k = tc.prompt
				}
				dw.Decode(wantD[pos*C:], x[pos*C:], k, pr.p)
				l.project(k, C, 3*C, x[pos*C:], pr.p.WQKV, pr.p.BQKV, qkv)
				dg.DecodeHeads(y, qkv, k)
				l.project(k, C, C, y, pr.p.WProj, pr.p.BProj, gotD[pos*C:])
				pos += k
				if dg.Len() != pos {
					t.Fatalf("after %d tokens Len() = %d", pos, dg.Len())
				}
			}
			equal(t, "DecodeHeads", []namedF32{{"out", gotD}}, []namedF32{{"out", wantD}})
		}
	})
}

func TestHeadsBadArguments(t *testing.T) {
	const c = 8
	l := newLayer(t, nil, c, 2)
	qkv, y := make([]float32, 4*3*c), make([]float32, 4*c)
	d := l.NewDecoder(3)
	for _, tc := range []struct {
		f    func()
		want string
	}{
		{func() { l.ForwardHeads(y, qkv, 0, 1) }, "attention.Layer.ForwardHeads: "},
		{func() { l.ForwardHeads(y, qkv[:3*c*2-1], 1, 2) }, "attention.Layer.ForwardHeads: len(qkv) = 47, want >= 3*b*t*C = 3*1*2*8 = 48"},
		{func() { l.ForwardHeads(y[:2*c-1], qkv, 1, 2) }, "attention.Layer.ForwardHeads: "},
		{func() { l.ForwardHeads(y, qkv, math.MaxInt/2, 2) }, "attention.Layer.ForwardHeads: "},
		{func() { d.DecodeHeads(y, qkv, 0) }, "attention.Decoder.DecodeHeads: n = 0, must be >= 1"},
		{func() { d.DecodeHeads(y, qkv, 4) }, "attention.Decoder.DecodeHeads: Len() = 0 plus n = 4 tokens exceeds the decoder's maxT = 3"},
		{func() { d.DecodeHeads(y, qkv[:3*c*2-1], 2) }, "attention.Decoder.DecodeHeads: len(qkv) = 47, want >= 3*n*C = 3*2*8 = 48"},
		{func() { d.DecodeHeads(y[:c-1], qkv, 1) }, "attention.Decoder.DecodeHeads: len(y) = 7, want >= n*C = 1*8 = 8"},
	} {
		mustPanic(t, tc.f, tc.want)
		if d.Len() != 0 {
			t.Fatalf("%q: the cache grew before the panic", tc.want)
		}
	}
}
