package gpt

import (
	"fmt"
	"testing"
)

// BenchmarkGPT2Eval measures evaluation of GPT-2 small (random weights)
// at its 1024 positions: the mean cross-entropy of batches of b
// sequences, by the inference forward EvalSequential runs
// (path=inference) and by the training forward Model.Forward it ran
// before (path=forward), on the same tokens, after one untimed call. It
// reports tokens/s and tokens per CPU-second of the process (on a shared
// machine, the rate per CPU time the process was given). Each path grows its own memory on its first call, so
// a process that runs one path alone (-test.bench
// 'GPT2Eval/b=4/path=inference$' under /usr/bin/time -v) shows that
// path's peak memory.
func BenchmarkGPT2Eval(b *testing.B) {
	skipGPT2(b)
	m := sharedGPT2(b)
	const T = 1024
	for _, batch := range []int{2, 4} {
		toks := randomTokens(batch*T+1, gpt2Small.Vocab, 3)
		x, y := toks[:batch*T], toks[1:]
		for _, path := range []struct {
			name string
			loss func() float64
		}{
			{"inference", func() float64 { return m.inferLoss(x, y, batch, T) }},
			{"forward", func() float64 { return m.Forward(x, y, batch, T) }},
		} {
			b.Run(fmt.Sprintf("b=%d/path=%s", batch, path.name), func(b *testing.B) {
				// Warm up: the first call grows the path's memory (page
				// faults), which must not land in the timed calls.
				loss := path.loss()
				c0, ok0 := cpuNanos()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					loss = path.loss()
				}
				b.StopTimer()
				c1, ok1 := cpuNanos()
				tokens := float64(b.N * batch * T)
				b.ReportMetric(tokens/b.Elapsed().Seconds(), "tokens/s")
				if ok0 && ok1 && c1 > c0 {
					b.ReportMetric(tokens/(float64(c1-c0)/1e9), "tokens/cpu-s")
				}
				b.ReportMetric(loss, "loss")
			})
		}
	}
}
