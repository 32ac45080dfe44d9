package gpt

import (
	"fmt"
	"testing"
)

// BenchmarkGPT2Eval measures evaluation of GPT-2 small (random weights)
// at its 1024 positions: the mean cross-entropy of batches of b
// sequences, by the inference forward EvalSequential runs
// (path=inference) and by the training forward Model.Forward it ran
// before (path=forward), on the same tokens. It reports tokens/s. Each
// path grows its own memory on its first call, so a process that runs
// one path alone (-test.bench 'GPT2Eval/b=4/path=inference$' under
// /usr/bin/time -v) shows that path's peak memory.
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
				var loss float64
				for i := 0; i < b.N; i++ {
					loss = path.loss()
				}
				b.ReportMetric(float64(b.N*batch*T)/b.Elapsed().Seconds(), "tokens/s")
				b.ReportMetric(loss, "loss")
			})
		}
	}
}
