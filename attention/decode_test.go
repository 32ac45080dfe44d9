package attention

import (
	"math"
	"testing"
)

// decodeTol is the documented agreement of Decode with Forward, relative
// to the largest |output|.
const decodeTol = 5e-6

// TestDecodeEqualsForward feeds sequences token by token (and as a prompt
// followed by single tokens) and compares every output row with the full
// forward pass.
func TestDecodeEqualsForward(t *testing.T) {
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
		l := newLayer(t, tc.c, tc.h)
		pr := newProblem(s, 9)
		want := make([]float32, tc.t*tc.c)
		l.Forward(want, pr.x, 1, tc.t, pr.p)
		cache := NewKVCache(tc.c, tc.t)
		got := make([]float32, tc.t*tc.c)
		for rep := 0; rep < 2; rep++ { // the second time after Reset
			cache.Reset()
			for pos := 0; pos < tc.t; {
				n := 1
				if pos == 0 {
					n = tc.prompt
				}
				l.Decode(got[pos*tc.c:], pr.x[pos*tc.c:], n, pr.p, cache)
				pos += n
				if cache.Len() != pos {
					t.Fatalf("after %d tokens cache.Len() = %d", pos, cache.Len())
				}
			}
			if e := relErr(got, to64(want)); e > decodeTol {
				t.Errorf("T=%d C=%d H=%d prompt=%d: decoded outputs differ from Forward by %.2g (relative), more than %g", tc.t, tc.c, tc.h, tc.prompt, e, decodeTol)
			}
		}
		// Decode leaves Forward's state alone.
		if P := l.Probs(); len(P) != tc.t*tc.t*l.Heads() {
			t.Errorf("Probs() after Decode has length %d", len(P))
		}
	}
}

func TestDecodeBadArguments(t *testing.T) {
	const c = 8
	l := newLayer(t, c, 2)
	p := ViewParams(c, make([]float32, NumParams(c)))
	x := make([]float32, 4*c)
	cache := NewKVCache(c, 3)
	other := NewKVCache(16, 3)
	for _, tc := range []struct {
		f    func()
		want string
	}{
		{func() { l.Decode(x, x, 0, p, cache) }, "attention.Decode: n = 0, must be >= 1"},
		{func() { l.Decode(x, x, 1, p, nil) }, "attention.Decode: cache is nil"},
		{func() { l.Decode(x, x, 1, p, other) }, "attention.Decode: cache is for C = 16, the layer has C = 8"},
		{func() { l.Decode(x, x, 4, p, cache) }, "attention.Decode: cache.Len() = 0 plus n = 4 tokens exceeds the cache's maxT = 3"},
		{func() { l.Decode(x, x[:15], 2, p, cache) }, "attention.Decode: len(x) = 15, want >= n*C = 2*8 = 16"},
		{func() { l.Decode(x[:7], x, 1, p, cache) }, "attention.Decode: len(out) = 7, want >= n*C = 1*8 = 8"},
		{func() { l.Decode(x, x, 1, Params{}, cache) }, "attention.Decode: len(p.WQKV) = 0, want 192"},
		{func() { NewKVCache(0, 4) }, "attention.NewKVCache: c = 0, must be >= 1"},
		{func() { NewKVCache(4, 0) }, "attention.NewKVCache: maxT = 0, must be >= 1"},
	} {
		mustPanic(t, tc.f, tc.want)
		if cache.Len() != 0 {
			t.Fatalf("%q: the cache grew before the panic", tc.want)
		}
	}
	l.Decode(x, x, 3, p, cache)
	mustPanic(t, func() { l.Decode(x, x, 1, p, cache) }, "attention.Decode: cache.Len() = 3 plus n = 1 tokens exceeds the cache's maxT = 3")
}

func TestDecodeNoAllocs(t *testing.T) {
	const c, T = 32, 64
	l := newLayer(t, c, 4)
	pr := newProblem(refShape{1, T, c, 4}, 10)
	cache := NewKVCache(c, T)
	out := make([]float32, T*c)
	pos := 0
	step := func() {
		if pos == T {
			cache.Reset()
			pos = 0
		}
		l.Decode(out[pos*c:], pr.x[pos*c:], 1, pr.p, cache)
		pos++
	}
	for i := 0; i < T; i++ { // warm up to the longest cache
		step()
	}
	if a := testing.AllocsPerRun(3*T, step); a != 0 {
		t.Errorf("Decode allocates %v times per call", a)
	}
	if math.IsNaN(float64(out[0])) {
		t.Error("NaN output")
	}
}
