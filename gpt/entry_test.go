package gpt

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/simdgpt/simdgpt/gpt/data"
	"github.com/simdgpt/simdgpt/gpt/rng"
)

// TestEntryPointSizes calls the package's entry points with sizes a
// caller controls set out of range: each returns an error or panics with
// a message naming the function and the argument, before allocating;
// never a bare runtime error (makeslice, index out of range).
func TestEntryPointSizes(t *testing.T) {
	t.Setenv(MemoryEnv, "1000000000") // 1 GB: nothing below may allocate more
	small := Config{Vocab: 8, BlockSize: 4, Layers: 1, Heads: 1, Width: 4}
	m, err := New(small, 1)
	if err != nil {
		t.Fatal(err)
	}
	d, err := data.FromText(strings.Repeat("abcdefgh", 8), small.BlockSize)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTrainer(m, d, DefaultTrainConfig(2, 10, 1e-3, 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		call func() error
		want string // in the error or the panic
	}{
		{"New huge width", func() error {
			_, err := New(Config{Vocab: 8, BlockSize: 4, Layers: 1, Heads: 1, Width: math.MaxInt}, 1)
			return err
		}, "Config.Width"},
		{"New negative layers", func() error {
			_, err := New(Config{Vocab: 8, BlockSize: 4, Layers: -1, Heads: 1, Width: 4}, 1)
			return err
		}, "Layers"},
		{"New at every limit", func() error {
			_, err := New(Config{Vocab: MaxVocab, BlockSize: MaxBlockSize, Layers: MaxLayers, Heads: MaxHeads, Width: MaxWidth}, 1)
			return err
		}, "needs about"},
		{"NewTrainer huge batch", func() error {
			_, err := NewTrainer(m, d, DefaultTrainConfig(math.MaxInt/2, 10, 1e-3, 1))
			return err
		}, "batch size"},
		{"NewTrainer batch above the limit", func() error {
			_, err := NewTrainer(m, d, DefaultTrainConfig(MaxBatch+1, 10, 1e-3, 1))
			return err
		}, "batch size 65537"},
		{"NewTrainer zero batch", func() error {
			_, err := NewTrainer(m, d, DefaultTrainConfig(0, 10, 1e-3, 1))
			return err
		}, "batch size 0"},
		{"NewAdamW negative n", func() error { NewAdamW(-1, nil); return nil }, "gpt.NewAdamW: n = -1"},
		{"Eval short split", func() error { tr.Eval([]uint16{1, 2}, 1); return nil }, "gpt.Trainer.Eval"},
		{"EvalSequential huge batch", func() error {
			_, err := m.EvalSequential(make([]uint16, 64), math.MaxInt, 4, 1)
			return err
		}, "EvalSequential"},
		{"EvalSequential huge batches", func() error {
			_, err := m.EvalSequential(make([]uint16, 64), 2, 4, math.MaxInt)
			return err
		}, "EvalSequential"},
		{"EvalSequential huge length", func() error {
			_, err := m.EvalSequential(make([]uint16, 64), 1, math.MaxInt, 1)
			return err
		}, "sequence length"},
		{"WithBlockSize huge", func() error { _, err := m.WithBlockSize(math.MaxInt); return err }, "WithBlockSize"},
		{"Forward huge b", func() error { m.Forward(nil, nil, math.MaxInt, 4); return nil }, "gpt.Model.Forward"},
		{"Sampler huge prompt", func() error { m.NewSampler().Logits(make([]int32, 5)); return nil }, "gpt.Sampler.Logits"},
		{"Generate huge n of a bad prompt", func() error {
			return m.NewSampler().Generate(nil, math.MaxInt, 1, 0, rng.New(1), func(int32) error { return nil })
		}, "prompt"},
		{"Generate huge topK", func() error {
			n := 0
			return m.NewSampler().Generate([]int32{1}, 3, 1, math.MaxInt, rng.New(1), func(int32) error { n++; return fmt.Errorf("stop %d", n) })
		}, "stop 1"},
		{"Batch huge b", func() error {
			data.Batch(rng.New(1), make([]uint16, 64), math.MaxInt, 4, nil, nil)
			return nil
		}, "data.Batch"},
		{"FromText huge block", func() error { _, err := data.FromText("abcabc", math.MaxInt); return err }, "block"},
		{"SequentialBatches huge", func() error {
			if n := SequentialBatches(math.MaxInt, 1, 1); n != math.MaxInt-1 {
				return fmt.Errorf("SequentialBatches = %d", n)
			}
			return fmt.Errorf("ok")
		}, "ok"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got string
			func() {
				defer func() {
					if r := recover(); r != nil {
						got = fmt.Sprint(r)
						if _, ok := r.(error); ok && strings.Contains(got, "runtime error") {
							got = "bare runtime error: " + got
						}
					}
				}()
				if err := c.call(); err != nil {
					got = err.Error()
				}
			}()
			if got == "" || strings.HasPrefix(got, "bare") || !strings.Contains(got, c.want) {
				t.Errorf("got %q, want an error or a panic containing %q", got, c.want)
			}
		})
	}
}
