package gpt_test

import (
	"fmt"

	"github.com/simdgpt/simdgpt/gpt"
	"github.com/simdgpt/simdgpt/gpt/data"
	"github.com/simdgpt/simdgpt/gpt/rng"
)

// Train a small model on the built-in task for a few steps, then sample
// from it with the key/value cache.
func ExampleTrainer() {
	d, err := data.FromText(data.Synthetic(20000, 1), 16)
	if err != nil {
		panic(err)
	}
	m, err := gpt.New(gpt.Config{Vocab: d.VocabSize, BlockSize: 16, Layers: 1, Heads: 2, Width: 32}, 1)
	if err != nil {
		panic(err)
	}
	tr, err := gpt.NewTrainer(m, d, gpt.DefaultTrainConfig(8, 100, 3e-3, 1))
	if err != nil {
		panic(err)
	}
	before := tr.Eval(d.Val, 4)
	for tr.Step() < 100 {
		tr.TrainStep()
	}
	after := tr.Eval(d.Val, 4)
	fmt.Println("validation loss fell:", after < before-0.5)

	prompt, _ := d.Vocab.Encode("abc")
	ids := make([]int32, len(prompt))
	for i, t := range prompt {
		ids[i] = int32(t)
	}
	var out []uint16
	m.NewSampler().Generate(ids, 10, 1.0, 0, rng.New(1), func(tok int32) error {
		out = append(out, uint16(tok))
		return nil
	})
	fmt.Println(len([]rune(d.Vocab.Decode(out))), "characters sampled")
	// Output:
	// validation loss fell: true
	// 10 characters sampled
}

// The weights one decoded token of GPT-2 small reads in each format: the
// rate at which decoding reads weights is this over the time of a token.
func ExampleTokenWeightBytes() {
	gpt2 := gpt.Config{Vocab: 50257, BlockSize: 1024, Layers: 12, Heads: 12, Width: 768, TieEmbeddings: true}
	for _, f := range []gpt.Weights{gpt.WeightsF32, gpt.WeightsBF16, gpt.WeightsInt8} {
		fmt.Printf("%s: %.1f MB\n", f, float64(gpt.TokenWeightBytes(gpt2, f))/1e6)
	}
	// Output:
	// f32: 494.6 MB
	// bf16: 247.6 MB
	// int8: 139.5 MB
}
