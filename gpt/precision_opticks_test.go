package gpt

import (
	"math"
	"testing"

	"github.com/simdgpt/simdgpt/gpt/data"
	"github.com/simdgpt/simdgpt/kernels"
)

// TestPrecisionOpticks holds bf16 compute to what a user would check on
// real text (Opticks, characters; the model of TestWeightsOpticks):
//
//   - training: the same run (initial weights, batches, schedule) in bf16
//     ends within 1% of float32's validation loss;
//   - evaluation: the float32-trained model evaluated with bf16 products
//     (float32 and bfloat16 weights) within 0.5% of its float32 loss;
//   - prompt processing: after a bf16 prefill of a 64-character prompt,
//     the first 32 greedy tokens equal float32's.
func TestPrecisionOpticks(t *testing.T) {
	if testing.Short() {
		t.Skip("trains twice for several seconds; skipped with -short")
	}
	if kernels.Default().Name() == "generic" {
		t.Skip("the generic kernels are too slow for a training run")
	}
	d, err := data.Load(opticksPath(t), 64)
	if err != nil {
		t.Fatal(err)
	}
	const b, T = 8, 64
	batches := SequentialBatches(len(d.Val), b, T)
	train := func(p Precision) *Model {
		m, err := New(Config{Vocab: d.VocabSize, BlockSize: T, Layers: 4, Heads: 4, Width: 128}, 1)
		if err != nil {
			t.Fatal(err)
		}
		tc := DefaultTrainConfig(16, 300, 3e-3, 1)
		tc.Precision = p
		tr, err := NewTrainer(m, d, tc)
		if err != nil {
			t.Fatal(err)
		}
		for tr.Step() < tc.MaxIters {
			tr.TrainStep()
		}
		return m
	}
	eval := func(m *Model, p Precision) float64 {
		m.SetPrecision(p)
		loss, err := m.EvalSequential(d.Val, b, T, batches)
		if err != nil {
			t.Fatal(err)
		}
		return loss
	}
	f32 := train(PrecisionF32)
	bf := train(PrecisionBF16)
	lf, lb := eval(f32, PrecisionF32), eval(bf, PrecisionF32)
	t.Logf("trained in f32: validation loss %.6f; in bf16: %.6f (%+.3f%%)", lf, lb, 100*(lb-lf)/lf)
	if math.Abs(lb-lf) > 0.01*lf {
		t.Errorf("trained in bf16: validation loss %.5f, float32's %.5f: more than 1%% apart", lb, lf)
	}

	le := eval(f32, PrecisionBF16)
	t.Logf("float32 weights evaluated in bf16: %.6f (%+.4f%%)", le, 100*(le-lf)/lf)
	if math.Abs(le-lf) > 0.005*lf {
		t.Errorf("evaluated in bf16: loss %.5f, float32's %.5f: more than 0.5%% apart", le, lf)
	}
	low, err := f32.WithWeights(WeightsBF16)
	if err != nil {
		t.Fatal(err)
	}
	ll, lw := eval(low, PrecisionF32), eval(low, PrecisionBF16)
	t.Logf("bfloat16 weights: %.6f with float32 products, %.6f with bf16 (%+.4f%% of float32's)", ll, lw, 100*(lw-lf)/lf)
	if math.Abs(lw-lf) > 0.005*lf {
		t.Errorf("bfloat16 weights evaluated in bf16: loss %.5f, float32's %.5f: more than 0.5%% apart", lw, lf)
	}

	greedy := func(p Precision) []int32 {
		f32.SetPrecision(p)
		defer f32.SetPrecision(PrecisionF32)
		prompt := make([]int32, T)
		for i, v := range d.Val[:T] {
			prompt[i] = int32(v)
		}
		var out []int32
		if err := f32.NewSampler().Generate(prompt, 32, 0, 0, nil, func(tok int32) error { out = append(out, tok); return nil }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	want, got := greedy(PrecisionF32), greedy(PrecisionBF16)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("after a bf16 prefill, greedy token %d is %d, float32's %d (the first %d agree)", i, got[i], want[i], i)
			break
		}
	}
}
