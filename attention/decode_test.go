package attention

import (
	"math"
	"testing"

	"github.com/simdgpt/simdgpt/internal/race"
	"github.com/simdgpt/simdgpt/kernels"
	"github.com/simdgpt/simdgpt/kernels/kernelstest"
)

// decodeTol is the documented agreement of Decode with Forward, relative
// to the largest |output|.
const decodeTol = 5e-6

// TestDecodeEqualsForward feeds sequences token by token (and as a prompt
// followed by single tokens) and compares every output row with the full
// forward pass.
func TestDecodeEqualsForward(t *testing.T) {
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		for _, tc := range []struct {
			t, c, h int
			prompt  int // tokens in the first Decode call
		}{
			{1, 8, 0, 1},
			{5, 8, 0, 1},
			{9, 16, 2, 1},
			{33, 32, 4, 1},
			{70, 32, 8, 1},
			{70, 32, 4, 17},
			{130, 64, 1, 129},
			{200, 48, 6, 1},
			{160, 64, 4, 150}, // the prompt's heads run in parallel
		} {
			s := refShape{1, tc.t, tc.c, max(tc.h, 1)}
			l := newLayer(t, p, tc.c, tc.h)
			pr := newProblem(s, 9)
			want := make([]float32, tc.t*tc.c)
			l.Forward(want, pr.qkv, 1, tc.t)
			d := l.NewDecoder(tc.t)
			if d.Cap() != tc.t || d.Len() != 0 {
				t.Fatalf("NewDecoder(%d): Cap() = %d, Len() = %d", tc.t, d.Cap(), d.Len())
			}
			got := make([]float32, tc.t*tc.c)
			for rep := 0; rep < 2; rep++ { // the second time after Reset
				d.Reset()
				for pos := 0; pos < tc.t; {
					n := 1
					if pos == 0 {
						n = tc.prompt
					}
					d.Decode(got[pos*tc.c:], pr.qkv[pos*3*tc.c:], n)
					pos += n
					if d.Len() != pos {
						t.Fatalf("after %d tokens Len() = %d", pos, d.Len())
					}
				}
				if e := relErr(got, to64(want)); e > decodeTol {
					t.Errorf("T=%d C=%d H=%d prompt=%d: decoded outputs differ from Forward by %.2g (relative), more than %g", tc.t, tc.c, tc.h, tc.prompt, e, decodeTol)
				}
			}
			// Decoding leaves the layer's Forward state alone.
			if P := l.Probs(); len(P) != tc.t*tc.t*l.Heads() {
				t.Errorf("Probs() after Decode has length %d", len(P))
			}
		}
	})
}

// TestDecodersAreIndependent decodes two sequences with two decoders of
// one layer, a token of each in turn, and checks each against a decoder
// that ran its sequence alone: the decoders share nothing but the
// layer's shape.
func TestDecodersAreIndependent(t *testing.T) {
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		const T, c = 40, 32
		l := newLayer(t, p, c, 4)
		a, b := newProblem(refShape{1, T, c, 4}, 16), newProblem(refShape{1, T, c, 4}, 17)
		alone := func(pr *problem) []float32 {
			out := make([]float32, T*c)
			d := newLayer(t, p, c, 4).NewDecoder(T)
			for pos := 0; pos < T; pos++ {
				d.Decode(out[pos*c:], pr.qkv[pos*3*c:], 1)
			}
			return out
		}
		wantA, wantB := alone(a), alone(b)
		da, db := l.NewDecoder(T), l.NewDecoder(T)
		gotA, gotB := make([]float32, T*c), make([]float32, T*c)
		for pos := 0; pos < T; pos++ {
			da.Decode(gotA[pos*c:], a.qkv[pos*3*c:], 1)
			db.Decode(gotB[pos*c:], b.qkv[pos*3*c:], 1)
		}
		equal(t, "interleaved decoders against each alone",
			[]namedF32{{"sequence a", gotA}, {"sequence b", gotB}},
			[]namedF32{{"sequence a", wantA}, {"sequence b", wantB}})
	})
}

func TestDecodeBadArguments(t *testing.T) {
	const c = 8
	l := newLayer(t, nil, c, 2)
	qkv, y := make([]float32, 4*3*c), make([]float32, 4*c)
	d := l.NewDecoder(3)
	for _, tc := range []struct {
		f    func()
		want string
	}{
		{func() { d.Decode(y, qkv, 0) }, "attention.Decoder.Decode: n = 0, must be >= 1"},
		{func() { d.Decode(y, qkv, 4) }, "attention.Decoder.Decode: Len() = 0 plus n = 4 tokens exceeds the decoder's maxT = 3"},
		{func() { d.Decode(y, qkv[:47], 2) }, "attention.Decoder.Decode: len(qkv) = 47, want >= 3*n*C = 3*2*8 = 48"},
		{func() { d.Decode(y, qkv[:16], 2) }, "attention.Decoder.Decode: len(qkv) = 16, want >= 3*n*C = 3*2*8 = 48"},
		{func() { d.Decode(y[:7], qkv, 1) }, "attention.Decoder.Decode: len(y) = 7, want >= n*C = 1*8 = 8"},
		{func() { l.NewDecoder(0) }, "attention.Layer.NewDecoder: maxT = 0, must be >= 1"},
	} {
		mustPanic(t, tc.f, tc.want)
		if d.Len() != 0 {
			t.Fatalf("%q: the cache grew before the panic", tc.want)
		}
	}
	d.Decode(y, qkv, 3)
	mustPanic(t, func() { d.Decode(y, qkv, 1) }, "attention.Decoder.Decode: Len() = 3 plus n = 1 tokens exceeds the decoder's maxT = 3")
}

// TestDecodeNoAllocs decodes one token at a time, through Reset, as
// sampling does, on each cache format. The bf16 cache's products take
// their tasks from a sync.Pool, which drops what it is given under the
// race detector: not counted there.
func TestDecodeNoAllocs(t *testing.T) {
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		for _, kv := range []KVCache{KVFloat32, KVBF16} {
			if kv == KVBF16 && race.Enabled {
				continue
			}
			const c, T = 64, 80
			l := newLayer(t, p, c, 2)
			pr := newProblem(refShape{1, T, c, 2}, 10)
			d := l.NewDecoderKV(T, kv)
			out := make([]float32, T*c)
			pos := 0
			step := func() {
				if pos == T {
					d.Reset()
					pos = 0
				}
				d.Decode(out[pos*c:], pr.qkv[pos*3*c:], 1)
				pos++
			}
			for i := 0; i < T; i++ { // warm up to the longest cache
				step()
			}
			if a := testing.AllocsPerRun(3*T, step); a != 0 {
				t.Errorf("Decode on a %v cache allocates %v times per call", kv, a)
			}
			if math.IsNaN(float64(out[0])) {
				t.Errorf("%v cache: NaN output", kv)
			}
		}
	})
}

// TestDecodePromptScoresBounded feeds prompts of several lengths in one
// call and checks that the decoder's scores are one block of rows per
// goroutine (rowBlock × positions), not a matrix per head of every row
// against every position, and that the outputs still match Forward.
func TestDecodePromptScoresBounded(t *testing.T) {
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		for _, tc := range []struct{ t, c, h int }{{300, 32, 4}, {65, 16, 2}, {20, 16, 4}} {
			l := newLayer(t, p, tc.c, tc.h)
			pr := newProblem(refShape{1, tc.t, tc.c, tc.h}, 18)
			want := make([]float32, tc.t*tc.c)
			l.Forward(want, pr.qkv, 1, tc.t)
			d := l.NewDecoder(tc.t)
			got := make([]float32, tc.t*tc.c)
			d.Decode(got, pr.qkv, tc.t)
			bound := workersFor(tc.h) * min(tc.t, rowBlock) * tc.t
			if len(d.s) > bound {
				t.Errorf("T=%d H=%d: %d floats of scores, want at most %d (a block of rows per goroutine)", tc.t, tc.h, len(d.s), bound)
			}
			if e := relErr(got, to64(want)); e > decodeTol {
				t.Errorf("T=%d H=%d: prompt outputs differ from Forward by %.2g", tc.t, tc.h, e)
			}
		}
	})
}
