package gpt

import (
	"math"
	"testing"

	"github.com/simdgpt/simdgpt/gpt/data"
	"github.com/simdgpt/simdgpt/kernels"
)

// The largest relative increase of the validation loss over float32's
// that TestWeightsOpticks accepts for each low-bit format.
var opticksWeightsBound = map[Weights]float64{WeightsBF16: 0.002, WeightsInt8: 0.01}

// TestWeightsOpticks trains a character model of 4 layers, 4 heads and
// width 128 on Opticks for 300 steps and evaluates it on the validation
// text with bf16 and int8 weights: the loss may rise by at most
// opticksWeightsBound relative to float32's. It also logs how many of 200
// greedy tokens from the same prompt agree with float32's.
func TestWeightsOpticks(t *testing.T) {
	if testing.Short() {
		t.Skip("trains for several seconds; skipped with -short")
	}
	if kernels.Default().Name() == "generic" {
		t.Skip("the generic kernels are too slow for a training run")
	}
	d, err := data.Load(opticksPath(t), 64)
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(Config{Vocab: d.VocabSize, BlockSize: 64, Layers: 4, Heads: 4, Width: 128}, 1)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTrainer(m, d, DefaultTrainConfig(16, 300, 3e-3, 1))
	if err != nil {
		t.Fatal(err)
	}
	for tr.Step() < tr.Cfg.MaxIters {
		tr.TrainStep()
	}
	const b, T = 8, 64
	batches := SequentialBatches(len(d.Val), b, T)
	f32, err := m.EvalSequential(d.Val, b, T, batches)
	if err != nil {
		t.Fatal(err)
	}
	if uniform := math.Log(float64(d.VocabSize)); !(f32 < 0.7*uniform) {
		t.Fatalf("float32 validation loss %.4f after %d steps, not well below uniform %.4f", f32, tr.Step(), uniform)
	}
	greedy := func(m *Model) []int32 {
		var out []int32
		prompt := make([]int32, 32)
		for i, v := range d.Val[:32] {
			prompt[i] = int32(v)
		}
		if err := m.NewSampler().Generate(prompt, 200, 0, 0, nil, func(tok int32) error { out = append(out, tok); return nil }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	want := greedy(m)
	for _, f := range []Weights{WeightsBF16, WeightsInt8} {
		low, err := m.WithWeights(f)
		if err != nil {
			t.Fatal(err)
		}
		loss, err := low.EvalSequential(d.Val, b, T, batches)
		if err != nil {
			t.Fatal(err)
		}
		rel := (loss - f32) / f32
		got := greedy(low)
		agree, prefix := 0, len(got)
		for i := range got {
			if got[i] == want[i] {
				agree++
			} else if prefix == len(got) {
				prefix = i
			}
		}
		t.Logf("%v: validation loss %.6f against float32's %.6f (%+.4f%%, %d tokens); greedy: %d of %d tokens agree, the first %d", f, loss, f32, 100*rel, batches*b*T, agree, len(got), prefix)
		if math.Abs(rel) > opticksWeightsBound[f] {
			t.Errorf("%v: validation loss %.6f, float32 %.6f: relative change %.3g above %g", f, loss, f32, rel, opticksWeightsBound[f])
		}
	}
}
