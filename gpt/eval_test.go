package gpt

import (
	"math"
	"strings"
	"testing"
)

func TestSequentialBatches(t *testing.T) {
	for _, c := range []struct{ n, b, t, want int }{
		{0, 1, 4, 0}, {4, 1, 4, 0}, {5, 1, 4, 1}, {9, 2, 4, 1}, {8, 2, 4, 0}, {100, 3, 8, 4}, {10, 0, 4, 0},
	} {
		if got := SequentialBatches(c.n, c.b, c.t); got != c.want {
			t.Errorf("SequentialBatches(%d, %d, %d) = %d, want %d", c.n, c.b, c.t, got, c.want)
		}
	}
}

// TestEvalSequential: the loss is the mean of Forward over the batches
// built by hand, for a sequence length below the block size too; bad
// arguments are errors naming the numbers.
func TestEvalSequential(t *testing.T) {
	cfg := Config{Vocab: 11, BlockSize: 8, Layers: 1, Heads: 2, Width: 8}
	m, err := New(cfg, 5)
	if err != nil {
		t.Fatal(err)
	}
	toks := make([]uint16, 61)
	for i := range toks {
		toks[i] = uint16(i * 7 % 11)
	}
	for _, c := range []struct{ b, t, batches int }{{2, 8, 3}, {1, 5, 12}, {3, 4, 5}} {
		got, err := m.EvalSequential(toks, c.b, c.t, c.batches)
		if err != nil {
			t.Fatal(err)
		}
		var want float64
		for k := 0; k < c.batches; k++ {
			var x, y []int32
			for i := 0; i < c.b; i++ {
				s := (k*c.b + i) * c.t
				for j := 0; j < c.t; j++ {
					x, y = append(x, int32(toks[s+j])), append(y, int32(toks[s+j+1]))
				}
			}
			want += m.Forward(x, y, c.b, c.t)
		}
		want /= float64(c.batches)
		if got != want || math.IsNaN(got) {
			t.Errorf("%+v: EvalSequential %v, by hand %v", c, got, want)
		}
	}
	bad := append([]uint16(nil), toks...)
	bad[20] = 11
	for _, c := range []struct {
		toks          []uint16
		b, t, batches int
		want          string
	}{
		{toks, 2, 9, 1, "above the model's block size 8"},
		{toks, 2, 8, 4, "61 tokens hold 3 batches of 2×8"},
		{toks, 0, 8, 1, "batch size 0"},
		{bad, 2, 8, 3, "token 11 at position 20"},
	} {
		if _, err := m.EvalSequential(c.toks, c.b, c.t, c.batches); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("b=%d t=%d batches=%d: error %v, want %q", c.b, c.t, c.batches, err, c.want)
		}
	}
}

// TestWithBlockSize: the cropped model computes the same logits as the
// original on a context within the new block size.
func TestWithBlockSize(t *testing.T) {
	for _, tie := range []bool{false, true} {
		cfg := Config{Vocab: 9, BlockSize: 12, Layers: 2, Heads: 2, Width: 8, TieEmbeddings: tie}
		m, err := New(cfg, 2)
		if err != nil {
			t.Fatal(err)
		}
		c, err := m.WithBlockSize(5)
		if err != nil {
			t.Fatal(err)
		}
		if c.Config.BlockSize != 5 || len(c.Params) != len(m.Params)-7*8 {
			t.Fatalf("cropped config %+v with %d parameters", c.Config, len(c.Params))
		}
		toks := []int32{1, 4, 2, 8, 0}
		m.Forward(toks, nil, 1, 5)
		c.Forward(toks, nil, 1, 5)
		a, b := m.Logits(), c.Logits()
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("tie=%v: logit %d: %v, cropped %v", tie, i, a[i], b[i])
			}
		}
		for _, bad := range []int{0, 13} {
			if _, err := m.WithBlockSize(bad); err == nil || !strings.Contains(err.Error(), "must be in [1, 12]") {
				t.Errorf("WithBlockSize(%d): %v", bad, err)
			}
		}
	}
}
