package gpt

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/simdgpt/simdgpt/bench"
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
// AdamW), with float32 products (precision=f32) and in bfloat16 compute
// (precision=bf16), and reports tokens per second and the model's GFLOP/s
// (stepFlops). Run with -cpu 1,2 for 1 and 2 threads. It also reports the share of the
// FMA peak reached (%peak) and the peak (peak-GFLOP/s), measured by
// package bench's method: the kernels' FMA peak loop on GOMAXPROCS
// goroutines is sampled before, between (a sixteenth of the steps' time,
// the benchmark's timer stopped) and after the steps, and the peak is the
// largest sample of this test process at that thread count, so that a
// sample taken in a slow moment (the machine's speed drifts: a shared VM)
// cannot lower it. A %peak above 100% is logged with bench.OverPeakNote.
func BenchmarkTrainStep(b *testing.B) {
	for _, c := range benchConfigs {
		for _, prec := range []Precision{PrecisionF32, PrecisionBF16} {
			name := c.name + "/precision=" + prec.String()
			b.Run(name, func(b *testing.B) { benchTrainStep(b, c.cfg, c.batch, prec) })
		}
	}
}

// benchTrainStep is BenchmarkTrainStep's run of config cfg at batch size
// batch with matrix products of precision prec.
func benchTrainStep(b *testing.B, cfg Config, batch int, prec Precision) {
	toks := make([]uint16, 200000)
	for i := range toks {
		toks[i] = uint16(i * 7919 % cfg.Vocab)
	}
	d := &data.Dataset{VocabSize: cfg.Vocab, Train: toks[:180000], Val: toks[180000:]}
	m, err := New(cfg, 1)
	if err != nil {
		b.Fatal(err)
	}
	tc := DefaultTrainConfig(batch, 1000, 1e-3, 1)
	tc.Precision = prec
	tr, err := NewTrainer(m, d, tc)
	if err != nil {
		b.Fatal(err)
	}
	benchSteps(b, tr, cfg, batch)
}

// benchSteps times b.N steps of tr (after one warm-up step: workspaces
// and replicas for this GOMAXPROCS) with timedPeak and reports ms/step,
// tokens/s, GFLOP/s, peak-GFLOP/s and %peak (see BenchmarkTrainStep), and
// the process's CPU time a step (cpu-ms/step: on a loaded machine with
// -cpu 1 steadier than the wall clock).
func benchSteps(b *testing.B, tr *Trainer, cfg Config, batch int) {
	tr.TrainStep()
	flops := stepFlops(cfg, batch)
	b.ReportAllocs()
	var cpu int64
	cpuOK := true
	stepTime, peak := timedPeak(b, tr.Model.Impl(), func() {
		c0, ok0 := cpuNanos()
		tr.TrainStep()
		c1, ok1 := cpuNanos()
		cpu += c1 - c0
		cpuOK = cpuOK && ok0 && ok1
	})
	if cpuOK {
		b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/step")
	}
	sec := stepTime.Seconds()
	rate := flops * float64(b.N) / sec
	b.ReportMetric(1000*sec/float64(b.N), "ms/step")
	b.ReportMetric(float64(b.N*batch*cfg.BlockSize)/sec, "tokens/s")
	b.ReportMetric(rate/1e9, "GFLOP/s")
	peak.Report(b, rate)
}

// benchPeaks holds the FMA peak samples of every benchmark of this test
// process (package bench's method: the peak of an implementation and
// thread count is the largest of its samples).
var benchPeaks bench.Peaks

// timedPeak runs b.N iterations of run, timing each, with impl's FMA peak
// loop on GOMAXPROCS goroutines sampled by a bench.PeakSampler into
// benchPeaks before the first, between them (the benchmark's timer
// stopped) and after the last. It returns the iterations' total time and
// the sampler, whose Report gives peak-GFLOP/s and %peak.
func timedPeak(b *testing.B, impl *kernels.Impl, run func()) (time.Duration, *bench.PeakSampler) {
	s := benchPeaks.Sampler(impl, runtime.GOMAXPROCS(0))
	s.Begin()
	b.ResetTimer()
	var total time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		run()
		d := time.Since(t0)
		total += d
		if s.Add(d) {
			b.StopTimer()
			s.Sample()
			b.StartTimer()
		}
	}
	b.StopTimer()
	s.End()
	return total, s
}

func ExampleConfig() {
	cfg := Config{Vocab: 65, BlockSize: 64, Layers: 4, Heads: 4, Width: 128}
	fmt.Println(cfg.NumParams(), len(cfg.Tensors()))
	// Output: 818241 54
}
