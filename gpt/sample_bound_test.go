package gpt

import (
	"testing"

	"github.com/simdgpt/simdgpt/gpt/rng"
)

// TestGenerateBoundedMemory: generating many tokens keeps only a context
// window of them, and gives the same tokens as before the bound (the
// sequence depends only on the last BlockSize tokens).
func TestGenerateBoundedMemory(t *testing.T) {
	cfg := Config{Vocab: 7, BlockSize: 8, Layers: 1, Heads: 1, Width: 8}
	m, err := New(cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		prompt []int32
		n      int
	}{{[]int32{1}, 5000}, {make([]int32, 50), 3000}} {
		s := m.NewSampler()
		var got []int32
		if err := s.Generate(c.prompt, c.n, 1, 0, rng.New(1), func(tok int32) error { got = append(got, tok); return nil }); err != nil {
			t.Fatal(err)
		}
		if len(got) != c.n {
			t.Fatalf("%d tokens, want %d", len(got), c.n)
		}
		// The same loop with the whole history kept.
		ref, r, hist := m.NewSampler(), rng.New(1), append([]int32(nil), c.prompt...)
		ref.Logits(hist[max(0, len(hist)-cfg.BlockSize):])
		for i := 0; i < c.n; i++ {
			tok := ref.draw(1, 0, 0, r)
			hist = append(hist, tok)
			if tok != got[i] {
				t.Fatalf("token %d: %d, with the whole history %d", i, got[i], tok)
			}
			if ref.caches[0].Len() == cfg.BlockSize {
				ref.Logits(hist[len(hist)-max(cfg.BlockSize/2, 1):])
			} else {
				ref.feed(hist[len(hist)-1:])
			}
		}
		if limit := max(len(c.prompt), 2*cfg.BlockSize) + 1; cap(s.history) > 2*limit {
			t.Errorf("prompt %d, %d tokens: history capacity %d, want at most %d", len(c.prompt), c.n, cap(s.history), 2*limit)
		}
	}
}
