package gpt

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestDecaySpans checks that the spans cover exactly the 2-D tensors of
// each config (matrices and embeddings), in order, disjoint, adjacent
// tensors merged, and that an AdamW built on them decays exactly those
// parameters.
func TestDecaySpans(t *testing.T) {
	for _, cfg := range []Config{
		{Vocab: 7, BlockSize: 5, Layers: 1, Heads: 1, Width: 4},
		{Vocab: 11, BlockSize: 6, Layers: 3, Heads: 2, Width: 8},
		{Vocab: 11, BlockSize: 6, Layers: 2, Heads: 2, Width: 8, TieEmbeddings: true},
	} {
		n := cfg.NumParams()
		want := make([]bool, n)
		for _, ts := range cfg.Tensors() {
			for i := ts.Offset; i < ts.Offset+ts.Size(); i++ {
				want[i] = len(ts.Shape) == 2
			}
		}
		spans := cfg.DecaySpans()
		got := make([]bool, n)
		for i, sp := range spans {
			if i > 0 && sp.Offset <= spans[i-1].Offset+spans[i-1].Len {
				t.Errorf("%+v: span %d %+v touches or overlaps the one before (%+v): adjacent spans must be merged", cfg, i, sp, spans[i-1])
			}
			for j := sp.Offset; j < sp.Offset+sp.Len; j++ {
				got[j] = true
			}
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%+v: parameter %d decayed %v by the spans, want %v", cfg, i, got[i], want[i])
			}
		}
		// wte and wpe are one span; each block has its four matrices in
		// two runs (w_qkv, w_proj apart; w_fc, w_out apart); the untied
		// head one more.
		wantSpans := 1 + 4*cfg.Layers
		if !cfg.TieEmbeddings {
			wantSpans++
		}
		if len(spans) != wantSpans {
			t.Errorf("%+v: %d spans, want %d", cfg, len(spans), wantSpans)
		}

		// The update decays exactly the spans' parameters: with zero
		// gradients, only weight decay moves a parameter.
		o := NewAdamW(n, spans)
		params, grads := make([]float32, n), make([]float32, n)
		for i := range params {
			params[i] = 1
		}
		o.Update(params, grads, 0.5)
		for i, p := range params {
			if (p != 1) != want[i] {
				t.Fatalf("%+v: parameter %d = %v after an update with zero gradients, decayed %v", cfg, i, p, want[i])
			}
		}
	}
}

// TestAdamWBadSpans checks that every list of spans that is not in
// increasing order, disjoint and within the parameters panics naming
// the span and the numbers, from NewAdamW and, for spans set on the
// field, from Update.
func TestAdamWBadSpans(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spans []Span
		want  string
	}{
		{"empty span", []Span{{0, 2}, {3, 0}}, "decay[1] = {Offset:3 Len:0} has length 0, must be >= 1"},
		{"negative length", []Span{{1, -1}}, "decay[0] = {Offset:1 Len:-1} has length -1"},
		{"negative offset", []Span{{-1, 2}}, "decay[0] = {Offset:-1 Len:2} starts at -1, before the end 0"},
		{"overlap", []Span{{0, 3}, {2, 2}}, "decay[1] = {Offset:2 Len:2} starts at 2, before the end 3 of the span before it"},
		{"out of order", []Span{{4, 1}, {1, 1}}, "decay[1] = {Offset:1 Len:1} starts at 1, before the end 5"},
		{"beyond the end", []Span{{8, 3}}, "decay[0] = {Offset:8 Len:3} ends beyond the 10 parameters"},
		{"offset beyond the end", []Span{{11, 1}}, "decay[0] = {Offset:11 Len:1} ends beyond the 10 parameters"},
		{"length overflowing", []Span{{5, math.MaxInt}}, fmt.Sprintf("decay[0] = {Offset:5 Len:%d} ends beyond the 10 parameters", math.MaxInt)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := panicMessage(func() { NewAdamW(10, tc.spans) })
			if want := "gpt.NewAdamW: " + tc.want; !strings.Contains(msg, want) {
				t.Errorf("NewAdamW panics with %q, want it to contain %q", msg, want)
			}
			o := NewAdamW(10, nil)
			o.Decay = tc.spans
			p, g := make([]float32, 10), make([]float32, 10)
			msg = panicMessage(func() { o.Update(p, g, 0.1) })
			if want := "gpt.AdamW.Update: " + tc.want; !strings.Contains(msg, want) {
				t.Errorf("Update panics with %q, want it to contain %q", msg, want)
			}
		})
	}
	// Touching spans, a span to the very end and an empty list are valid.
	for _, ok := range [][]Span{{{0, 2}, {2, 3}}, {{7, 3}}, {}} {
		if msg := panicMessage(func() { NewAdamW(10, ok).Update(make([]float32, 10), make([]float32, 10), 0.1) }); msg != "" {
			t.Errorf("spans %v: %s", ok, msg)
		}
	}
}

// panicMessage returns the message f panics with, or "" if it returns.
func panicMessage(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}
