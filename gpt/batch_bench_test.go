package gpt

import (
	"fmt"
	"testing"

	"github.com/simdgpt/simdgpt/gpt/rng"
)

// BenchmarkGPT2DecodeBatch measures decoding n sequences together
// (BatchSampler) on GPT-2 small at context 64, as BenchmarkGPT2Decode
// measures one: each sequence's prompt of 64-8 random tokens (its own) is
// prefilled untimed, then steps are timed, each a BatchSampler step of
// the n last tokens and a greedy draw for each sequence, until the caches
// hold 64 positions, when the prompts are prefilled again, untimed. It
// reports tokens/s over all the sequences (n per step) and ms/step, for
// n = 1 and 8, with float32 and int8 weights (weights=int8). On one
// thread (-cpu 1) the ratio of n=8's tokens/s to n=1's is what decoding
// several sequences together gains.
func BenchmarkGPT2DecodeBatch(b *testing.B) {
	skipGPT2(b)
	m := sharedGPT2(b)
	for _, f := range []Weights{WeightsF32, WeightsInt8} {
		mf := m
		if f != WeightsF32 {
			var err error
			if mf, err = m.WithWeights(f); err != nil {
				b.Fatal(err)
			}
		}
		for _, n := range []int{1, 8} {
			b.Run(fmt.Sprintf("weights=%v/n=%d", f, n), func(b *testing.B) {
				const ctx = 64
				bs := mf.NewBatchSampler(n)
				prompts := make([][]int32, n)
				for i := range prompts {
					prompts[i] = randomTokens(ctx-decodeWindow(ctx), mf.Config.Vocab, uint64(i+1))
				}
				r := rng.New(1)
				prefill := func() {
					for i, s := range bs.lanes {
						s.history = append(s.history[:0], prompts[i]...)
						s.Logits(prompts[i])
						s.history = append(s.history, s.draw(0, 0, 0, r))
					}
				}
				b.StopTimer()
				prefill()
				b.ReportAllocs()
				b.ResetTimer()
				b.StartTimer()
				for i := 0; i < b.N; i++ {
					if bs.lanes[0].caches[0].Len() == ctx {
						b.StopTimer()
						prefill()
						b.StartTimer()
					}
					bs.advance()
					for _, s := range bs.lanes {
						s.history = append(s.history, s.draw(0, 0, 0, r))
					}
				}
				b.StopTimer()
				sec := b.Elapsed().Seconds()
				b.ReportMetric(float64(n*b.N)/sec, "tokens/s")
				b.ReportMetric(1000*sec/float64(b.N), "ms/step")
			})
		}
	}
}
