package gpt

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/simdgpt/simdgpt/gpt/data"
	"github.com/simdgpt/simdgpt/kernels"
)

// The two configurations of the training-speed comparisons (PERF.md):
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

// stepFlops counts the floating-point operations of one training step's
// matrix products: forward 24·N·C² per layer (QKV, projection, MLP), the
// causal attention 2·B·T(T+1)·C per layer (scores and P·V over the visible
// keys only), the LM head 2·N·C·V; backward twice the forward.
func stepFlops(c Config, batch int) float64 {
	n, C, T := float64(batch*c.BlockSize), float64(c.Width), float64(c.BlockSize)
	fwd := float64(c.Layers)*(24*n*C*C+2*float64(batch)*T*(T+1)*C) + 2*n*C*float64(c.Vocab)
	return 3 * fwd
}

// BenchmarkTrainStep measures one optimizer step (batch, forward, backward,
// AdamW) and reports tokens per second and the model's GFLOP/s (stepFlops).
// Run with -cpu 1,2 for 1 and 2 threads. Because the machine's speed drifts
// (a shared VM), every step is followed by the kernels' FMA peak loop for
// 1/16 of the step's operations, split over GOMAXPROCS goroutines and timed
// separately: peak-GFLOP/s is the rate those threads could reach at that
// moment, and %peak relates the model's rate to it.
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
			benchSteps(b, tr, c.cfg, c.batch)
		})
	}
}

// benchSteps times b.N steps of tr (after one warm-up step: workspaces
// and replicas for this GOMAXPROCS), each followed by the FMA peak loop for
// 1/16 of the step's operations, and reports ms/step, tokens/s, GFLOP/s,
// peak-GFLOP/s and %peak (see BenchmarkTrainStep).
func benchSteps(b *testing.B, tr *Trainer, cfg Config, batch int) {
	tr.TrainStep()
	impl := tr.Model.Impl()
	flops := stepFlops(cfg, batch)
	peakIters := 1
	if f := impl.FMAPeakLoop(1); f > 0 {
		peakIters = max(1, int(flops/16)/f)
	}
	var stepTime, peakTime time.Duration
	var peakFlops float64
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		tr.TrainStep()
		t1 := time.Now()
		peakFlops += parallelPeak(impl, peakIters)
		stepTime += t1.Sub(t0)
		peakTime += time.Since(t1)
	}
	b.StopTimer()
	sec := stepTime.Seconds()
	b.ReportMetric(1000*sec/float64(b.N), "ms/step")
	b.ReportMetric(float64(b.N*batch*cfg.BlockSize)/sec, "tokens/s")
	b.ReportMetric(flops*float64(b.N)/sec/1e9, "GFLOP/s")
	if peakFlops > 0 {
		peak := peakFlops / peakTime.Seconds() / 1e9
		b.ReportMetric(peak, "peak-GFLOP/s")
		b.ReportMetric(100*flops*float64(b.N)/sec/1e9/peak, "%peak")
	}
}

// parallelPeak runs iters iterations of the FMA peak loop spread over
// GOMAXPROCS goroutines and returns the operations done.
func parallelPeak(impl *kernels.Impl, iters int) float64 {
	p := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	flops := make([]int, p)
	for i := range p {
		wg.Add(1)
		go func() {
			defer wg.Done()
			flops[i] = impl.FMAPeakLoop(max(1, iters/p))
		}()
	}
	wg.Wait()
	var s float64
	for _, f := range flops {
		s += float64(f)
	}
	return s
}

func ExampleConfig() {
	cfg := Config{Vocab: 65, BlockSize: 64, Layers: 4, Heads: 4, Width: 128}
	fmt.Println(cfg.NumParams(), len(cfg.Tensors()))
	// Output: 818241 54
}
