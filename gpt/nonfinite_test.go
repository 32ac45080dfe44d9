package gpt

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/simdgpt/simdgpt/gpt/rng"
)

// TestNonFiniteLogits: a model of finite weights near ±3e38, whose
// LayerNorms overflow, makes Generate and EvalSequential return an error
// wrapping ErrNotFinite (never a token drawn from NaN logits, nor a NaN
// mean), in every weight format; the same model with its weights scaled
// back to ordinary sizes returns none.
func TestNonFiniteLogits(t *testing.T) {
	cfg := Config{Vocab: 11, BlockSize: 8, Layers: 2, Heads: 2, Width: 8}
	toks := make([]uint16, 40)
	for i := range toks {
		toks[i] = uint16(i % cfg.Vocab)
	}
	for _, c := range []struct {
		name  string
		scale float64 // the weights' magnitude (0: as initialised)
		fail  bool
	}{{"as initialised", 0, false}, {"±1", 1, false}, {"±3e38", 3e38, true}} {
		for _, f := range []Weights{WeightsF32, WeightsBF16, WeightsInt8} {
			t.Run(c.name+"/"+f.String(), func(t *testing.T) {
				m, err := New(cfg, 1)
				if err != nil {
					t.Fatal(err)
				}
				if c.scale != 0 {
					for i, v := range m.Params {
						m.Params[i] = float32(math.Copysign(c.scale, float64(v)))
					}
				}
				if m, err = m.WithWeights(f); err != nil {
					t.Fatal(err)
				}
				var emitted int
				err = m.NewSampler().Generate([]int32{1, 2}, 5, 1, 0, rng.New(1), func(int32) error { emitted++; return nil })
				if c.fail {
					if !errors.Is(err, ErrNotFinite) || !strings.Contains(err.Error(), "position 2") || emitted != 0 {
						t.Errorf("Generate: %v after %d tokens; want ErrNotFinite at position 2 before any token", err, emitted)
					}
				} else if err != nil || emitted != 5 {
					t.Errorf("Generate: %v after %d tokens; want 5 and no error", err, emitted)
				}
				loss, done, err := m.EvalSequentialContext(t.Context(), toks, 2, 4, 3)
				if c.fail {
					if !errors.Is(err, ErrNotFinite) || !strings.Contains(err.Error(), "batch 0") || done != 0 || !math.IsNaN(loss) {
						t.Errorf("EvalSequential: %v, %v after %d batches; want ErrNotFinite at batch 0", loss, err, done)
					}
				} else if err != nil || done != 3 || math.IsNaN(loss) || math.IsInf(loss, 0) {
					t.Errorf("EvalSequential: %v, %v after %d batches; want a finite loss", loss, err, done)
				}
			})
		}
	}
}
