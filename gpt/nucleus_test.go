package gpt

import (
	"math"
	"slices"
	"sort"
	"testing"

	"github.com/simdgpt/simdgpt/gpt/rng"
)

func TestNucleus(t *testing.T) {
	for _, c := range []struct {
		name  string
		probs []float64
		p     float64
		want  int
	}{
		{"off at 1", []float64{4, 3, 2, 1}, 1, 4},
		{"off at 0", []float64{4, 3, 2, 1}, 0, 4},
		{"first alone reaches", []float64{4, 3, 2, 1}, 0.4, 1},
		{"just above the first", []float64{4, 3, 2, 1}, 0.41, 2},
		{"exactly two", []float64{4, 3, 2, 1}, 0.7, 2},
		{"three", []float64{4, 3, 2, 1}, 0.71, 3},
		{"unnormalised sum", []float64{0.5, 0.25, 0.25}, 0.6, 2},
		{"ties", []float64{1, 1, 1, 1}, 0.5, 2},
		{"tiny p keeps one", []float64{1, 1}, 1e-9, 1},
		{"single token", []float64{7}, 0.3, 1},
	} {
		sum := 0.0
		for _, q := range c.probs {
			sum += q
		}
		if got := nucleus(c.probs, sum, c.p); got != c.want {
			t.Errorf("%s: nucleus(%v, p=%g) = %d, want %d", c.name, c.probs, c.p, got, c.want)
		}
	}
}

// TestGenerateTopP draws many first tokens with top-p from a small model
// and checks that every draw is in the nucleus computed from the logits
// directly (the smallest prefix of the sorted probabilities reaching p),
// that every token of the nucleus is drawn, and that top-p 1 draws exactly
// what Generate draws.
func TestGenerateTopP(t *testing.T) {
	cfg := Config{Vocab: 12, BlockSize: 8, Layers: 1, Heads: 2, Width: 8}
	m, err := New(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	// Spread the logits out so the nucleus is a strict subset.
	for i := range m.p.wte {
		m.p.wte[i] *= 60
	}
	prompt := []int32{1, 5, 2}
	s := m.NewSampler()
	logits := append([]float32(nil), s.Logits(prompt)...)
	for _, c := range []struct {
		temp float64
		topK int
		topP float64
	}{{1, 0, 0.5}, {1, 0, 0.9}, {0.7, 0, 0.3}, {1, 5, 0.8}, {2, 0, 0.7}} {
		order := make([]int, cfg.Vocab)
		for i := range order {
			order[i] = i
		}
		sort.Slice(order, func(a, b int) bool { return logits[order[a]] > logits[order[b]] })
		k := cfg.Vocab
		if c.topK > 0 {
			k = c.topK
		}
		probs := make([]float64, k)
		sum := 0.0
		for i := range probs {
			probs[i] = math.Exp(float64(logits[order[i]]-logits[order[0]]) / c.temp)
			sum += probs[i]
		}
		acc, kept := 0.0, 0
		for kept < k && acc < c.topP*sum {
			acc += probs[kept]
			kept++
		}
		if kept == k {
			t.Fatalf("%+v: the nucleus is every token; the test needs a strict subset", c)
		}
		want := map[int32]bool{}
		for _, id := range order[:kept] {
			want[int32(id)] = true
		}
		drawn := map[int32]int{}
		r := rng.New(7)
		for range 2000 {
			err := s.GenerateWith(prompt, 1, SampleOptions{Temperature: c.temp, TopK: c.topK, TopP: c.topP}, r, func(tok int32) error {
				drawn[tok]++
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		for tok := range drawn {
			if !want[tok] {
				t.Errorf("%+v: drew token %d outside the nucleus %v", c, tok, order[:kept])
			}
		}
		for tok := range want {
			if drawn[tok] == 0 {
				t.Errorf("%+v: never drew token %d of the nucleus %v (draws %v)", c, tok, order[:kept], drawn)
			}
		}
	}
	// Top-p 1 is Generate.
	var a, b []int32
	s.Generate(prompt, 6, 1, 0, rng.New(9), func(tok int32) error { a = append(a, tok); return nil })
	s.GenerateWith(prompt, 6, SampleOptions{Temperature: 1, TopP: 1}, rng.New(9), func(tok int32) error { b = append(b, tok); return nil })
	if len(a) != 6 || !slices.Equal(a, b) {
		t.Errorf("Generate %v, GenerateWith top-p 1 %v", a, b)
	}
	for _, p := range []float64{-0.1, 1.5, math.NaN()} {
		if err := s.GenerateWith(prompt, 1, SampleOptions{Temperature: 1, TopP: p}, rng.New(1), func(int32) error { return nil }); err == nil {
			t.Errorf("top-p %g: no error", p)
		}
	}
}
