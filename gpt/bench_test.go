package gpt

import (
	"fmt"
	"testing"

	"github.com/simdgpt/simdgpt/gpt/data"
)

// The two configurations of the speed comparison with llm.c (issue 5):
// (a) 4 layers, 4 heads, width 128, block 64, batch 12, vocabulary 65;
// (b) 6 layers, 6 heads, width 384, block 256, batch 8 (vocabulary 65).
var benchConfigs = []struct {
	name  string
	cfg   Config
	batch int
}{
	{"a_4L4H128_T64_B12", Config{Vocab: 65, BlockSize: 64, Layers: 4, Heads: 4, Width: 128}, 12},
	{"b_6L6H384_T256_B8", Config{Vocab: 65, BlockSize: 256, Layers: 6, Heads: 6, Width: 384}, 8},
}

// BenchmarkTrainStep measures one optimizer step (batch, forward, backward,
// AdamW) and reports tokens per second. Run with -cpu 1,2 for 1 and 2
// threads.
func BenchmarkTrainStep(b *testing.B) {
	for _, c := range benchConfigs {
		b.Run(c.name, func(b *testing.B) {
			toks := make([]uint16, 200000)
			for i := range toks {
				toks[i] = uint16(i * 7919 % c.cfg.Vocab)
			}
			d := &data.Dataset{VocabSize: c.cfg.Vocab, Train: toks[:180000], Val: toks[180000:]}
			m, err := New(c.cfg, 1)
			if err != nil {
				b.Fatal(err)
			}
			tr, err := NewTrainer(m, d, DefaultTrainConfig(c.batch, 1000, 1e-3, 1))
			if err != nil {
				b.Fatal(err)
			}
			tr.TrainStep() // warm-up: workspaces
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				tr.TrainStep()
			}
			tokens := float64(b.N * c.batch * c.cfg.BlockSize)
			b.ReportMetric(tokens/b.Elapsed().Seconds(), "tokens/s")
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/step")
		})
	}
}

func ExampleConfig() {
	cfg := Config{Vocab: 65, BlockSize: 64, Layers: 4, Heads: 4, Width: 128}
	fmt.Println(cfg.NumParams(), len(cfg.Tensors()))
	// Output: 818241 54
}
