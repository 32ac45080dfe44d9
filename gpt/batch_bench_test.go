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
// n = 1 and 8, with float32 and int8 weights (weights=int8), and the same
// in the process's CPU time (cpu-tokens/s, cpu-ms/step; the prefills
// left out), which on a loaded machine with one thread (-cpu 1) varies
// less than the wall clock. The ratio of n=8's tokens/s to n=1's is what
// decoding several sequences together gains.
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
				var cpu int64
				c0, cpuOK := cpuNanos()
				b.ReportAllocs()
				b.ResetTimer()
				b.StartTimer()
				for i := 0; i < b.N; i++ {
					if bs.lanes[0].caches[0].Len() == ctx {
						b.StopTimer()
						c1, _ := cpuNanos()
						cpu += c1 - c0
						prefill()
						c0, _ = cpuNanos()
						b.StartTimer()
					}
					bs.advance()
					for _, s := range bs.lanes {
						s.history = append(s.history, s.draw(0, 0, 0, r))
					}
				}
				b.StopTimer()
				c1, _ := cpuNanos()
				sec := b.Elapsed().Seconds()
				b.ReportMetric(float64(n*b.N)/sec, "tokens/s")
				b.ReportMetric(1000*sec/float64(b.N), "ms/step")
				if cpuOK {
					cs := float64(cpu+c1-c0) / 1e9
					b.ReportMetric(float64(n*b.N)/cs, "cpu-tokens/s")
					b.ReportMetric(1000*cs/float64(b.N), "cpu-ms/step")
				}
			})
		}
	}
}
