package gpt

import (
	"fmt"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/simdgpt/simdgpt/attention"
	"github.com/simdgpt/simdgpt/gpt/data"
	"github.com/simdgpt/simdgpt/gpt/rng"
)

// Speed of a GPT-2 124M-shaped model: random weights, the shape
// of GPT-2 small. These benchmarks need about 1.1 GB (Decode, Head) and
// 3 GB (Step) and seconds per iteration, so they skip under -short; a
// plain `go test` runs no benchmark.

// gpt2Small is GPT-2 small's shape: 124M parameters, the LM head tied to
// the token embedding.
var gpt2Small = Config{Vocab: 50257, BlockSize: 1024, Layers: 12, Heads: 12, Width: 768, TieEmbeddings: true}

// gpt2Models holds the GPT-2 small models the benchmarks share, at most
// one at a time: shared, the one model of the decode and head benchmarks
// (1 GB with its gradients), or step, BenchmarkGPT2Step's model and
// trainer (about 2.5 GB with the optimizer's moments), kept across its
// calls (one per -cpu value). Asking for one drops the other and returns
// its memory to the system, so a run of all three needs no more than the
// step alone.
var gpt2Models struct {
	sync.Mutex
	shared *Model
	step   *Trainer
}

// skipGPT2 skips b under -short, giving the reason.
func skipGPT2(b *testing.B) {
	if testing.Short() {
		b.Skip("GPT-2 124M benchmarks need 1-3 GB and seconds per iteration; skipped under -short")
	}
}

// sharedGPT2 returns the shared random-weight GPT-2 small model, building
// it if needed; it skips b when the memory is not there.
func sharedGPT2(b *testing.B) *Model {
	gpt2Models.Lock()
	defer gpt2Models.Unlock()
	if gpt2Models.shared == nil {
		if gpt2Models.step != nil {
			gpt2Models.step = nil
			debug.FreeOSMemory()
		}
		m, err := New(gpt2Small, 1)
		if err != nil {
			b.Skipf("GPT-2 small: %v", err)
		}
		gpt2Models.shared = m
	}
	return gpt2Models.shared
}

// stepGPT2 returns the trainer of BenchmarkGPT2Step: a random-weight model
// of config cfg and its optimizer, on random tokens over the whole
// vocabulary, batches of batch sequences; it builds them if needed and
// skips b when the memory is not there.
func stepGPT2(b *testing.B, cfg Config, batch int) *Trainer {
	gpt2Models.Lock()
	defer gpt2Models.Unlock()
	if gpt2Models.step == nil {
		if gpt2Models.shared != nil {
			gpt2Models.shared = nil
			debug.FreeOSMemory()
		}
		if err := CheckMemory("the GPT-2 small training step", TrainBytes(cfg, batch, 2)); err != nil {
			b.Skip(err)
		}
		m, err := New(cfg, 1)
		if err != nil {
			b.Skipf("GPT-2 small: %v", err)
		}
		toks := make([]uint16, 1<<16)
		r := rng.New(2)
		for i := range toks {
			toks[i] = uint16(r.Intn(cfg.Vocab))
		}
		split := len(toks) - len(toks)/10
		d := &data.Dataset{VocabSize: cfg.Vocab, Train: toks[:split], Val: toks[split:]}
		tr, err := NewTrainer(m, d, DefaultTrainConfig(batch, 1000, 3e-4, 1))
		if err != nil {
			b.Fatal(err)
		}
		gpt2Models.step = tr
	}
	return gpt2Models.step
}

// randomTokens returns n token ids below vocab drawn from seed.
func randomTokens(n, vocab int, seed uint64) []int32 {
	r := rng.New(seed)
	toks := make([]int32, n)
	for i := range toks {
		toks[i] = int32(r.Intn(vocab))
	}
	return toks
}

// decodeWindow is the number of tokens timed per prefill at context ctx:
// the timed tokens are decoded at contexts ctx-decodeWindow(ctx)+1 … ctx.
func decodeWindow(ctx int) int { return max(1, ctx/8) }

// decodeLoop is the state of a decoding benchmark at context ctx: its
// sampler, the prompt of ctx-decodeWindow(ctx) random tokens it prefills
// whenever the cache is full, the token fed next and the seeded draws.
type decodeLoop struct {
	s      *Sampler
	prompt []int32
	one    []int32
	r      *rng.RNG
}

// newDecodeLoop returns the decoding state of s at context ctx.
func newDecodeLoop(s *Sampler, ctx int) *decodeLoop {
	return &decodeLoop{
		s:      s,
		prompt: randomTokens(ctx-decodeWindow(ctx), s.m.Config.Vocab, uint64(ctx)),
		one:    make([]int32, 1),
		r:      rng.New(uint64(ctx)),
	}
}

// prefill feeds the prompt to a fresh context and draws the next token
// to feed with o.
func (d *decodeLoop) prefill(o SampleOptions) {
	d.s.Logits(d.prompt)
	d.one[0] = d.s.draw(o.Temperature, o.TopK, o.TopP, d.r)
}

// BenchmarkGPT2Decode measures decoding with the key/value cache on
// GPT-2 small at contexts 64 and 512: a prompt of ctx-w random tokens is
// prefilled with the timer stopped (w = ctx/8), then tokens are decoded
// one at a time (Sampler.feed of the last token, then Sampler.draw:
// GenerateWith's loop body) until the cache holds ctx positions, when the
// prompt is prefilled again, untimed. Each timed token is thus decoded at
// a context between ctx-w+1 and ctx. The draw is greedy (ctx=N),
// temperature 0.8 with top-k 40 (sample=top_k40/ctx=N) or temperature 0.8
// with top-p 0.95 (sample=top_p0.95/ctx=N), seeded. It reports tokens/s, ms/token,
// the process's CPU time a token (cpu-ms/token, the prefills left out: on
// a loaded machine with -cpu 1 steadier than the wall clock), the share
// of the time spent drawing the token as draw-ms/token, and
// weight-GB/s: the weights one token reads (weight-MB/token,
// TokenWeightBytes) per token time, to set against a measured copy
// bandwidth (kernelbench -kernels copy). The sub-benchmarks weights=bf16
// and weights=int8 decode with the model's matrices converted
// (Model.WithWeights), their weight bytes those of the converted matrices;
// those under kv=bf16 decode each format on bfloat16 key/value caches
// (Model.SetKVCache).
func BenchmarkGPT2Decode(b *testing.B) {
	skipGPT2(b)
	m := sharedGPT2(b)
	benchDecode(b, m)
	for _, f := range []Weights{WeightsBF16, WeightsInt8} {
		b.Run("weights="+f.String(), func(b *testing.B) {
			low, err := m.WithWeights(f)
			if err != nil {
				b.Fatal(err)
			}
			benchDecode(b, low)
		})
	}
	for _, f := range []Weights{WeightsF32, WeightsBF16, WeightsInt8} {
		b.Run("kv=bf16/weights="+f.String(), func(b *testing.B) {
			mf, err := m.WithWeights(f)
			if err != nil {
				b.Fatal(err)
			}
			if err := mf.SetKVCache(attention.KVBF16); err != nil {
				b.Fatal(err)
			}
			defer mf.SetKVCache(attention.KVFloat32) // mf is m for f32
			benchDecode(b, mf)
		})
	}
}

// benchDecode runs BenchmarkGPT2Decode's sub-benchmarks on m.
func benchDecode(b *testing.B, m *Model) {
	wbytes := float64(TokenWeightBytes(m.Config, m.Weights()))
	s := m.NewSampler()
	for _, o := range []struct {
		name string
		SampleOptions
	}{
		{"greedy", SampleOptions{}},
		{"top_k40", SampleOptions{Temperature: 0.8, TopK: 40}},
		{"top_p0.95", SampleOptions{Temperature: 0.8, TopP: 0.95}},
	} {
		for _, ctx := range []int{64, 512} {
			name := fmt.Sprintf("ctx=%d", ctx)
			if o.name != "greedy" {
				name = "sample=" + o.name + "/" + name
			}
			b.Run(name, func(b *testing.B) {
				d := newDecodeLoop(s, ctx)
				one, r := d.one, d.r
				prefill := func() { d.prefill(o.SampleOptions) }
				b.StopTimer()
				prefill()
				var feedTime, drawTime time.Duration
				var cpu int64
				c0, cpuOK := cpuNanos()
				b.ReportAllocs()
				b.ResetTimer()
				b.StartTimer()
				for i := 0; i < b.N; i++ {
					if s.caches[0].Len() == ctx {
						b.StopTimer()
						c1, _ := cpuNanos()
						cpu += c1 - c0
						prefill()
						c0, _ = cpuNanos()
						b.StartTimer()
					}
					t0 := time.Now()
					s.feed(one)
					t1 := time.Now()
					one[0] = s.draw(o.Temperature, o.TopK, o.TopP, r)
					t2 := time.Now()
					feedTime += t1.Sub(t0)
					drawTime += t2.Sub(t1)
				}
				b.StopTimer()
				if c1, _ := cpuNanos(); cpuOK {
					b.ReportMetric(float64(cpu+c1-c0)/1e6/float64(b.N), "cpu-ms/token")
				}
				sec := (feedTime + drawTime).Seconds()
				b.ReportMetric(float64(b.N)/sec, "tokens/s")
				b.ReportMetric(1000*sec/float64(b.N), "ms/token")
				b.ReportMetric(1000*drawTime.Seconds()/float64(b.N), "draw-ms/token")
				b.ReportMetric(wbytes/1e6, "weight-MB/token")
				b.ReportMetric(wbytes*float64(b.N)/sec/1e9, "weight-GB/s")
			})
		}
	}
}

// BenchmarkGPT2DecodeSampled compares sampled decoding with greedy
// decoding in one process, token by token, on GPT-2 small at context 64
// with each weight format: tokens are decoded as in BenchmarkGPT2Decode
// (feed, then draw; the prompt prefilled again, untimed, when the cache is
// full), the draws alternating between greedy and sampled (temperature 0.8
// with top-k 40, or with top-p 0.95), so that both kinds of token see the
// same weights, pages and machine state; which kind a token is alternates
// from one prefill to the next, so both kinds take every position after
// it. It reports the process's CPU time of a greedy token and of a
// sampled token (greedy-ms/token, sampled-ms/token, feed and draw each;
// on a loaded machine with -cpu 1 steadier than the wall clock, which
// stands in where CPU time cannot be read) and sampled:greedy, the
// sampled tokens' rate over the greedy ones' (1 when sampling costs
// nothing).
func BenchmarkGPT2DecodeSampled(b *testing.B) {
	skipGPT2(b)
	base := sharedGPT2(b)
	const ctx = 64
	for _, f := range []Weights{WeightsF32, WeightsBF16, WeightsInt8} {
		m := base
		for _, o := range []struct {
			name string
			SampleOptions
		}{
			{"top_k40", SampleOptions{Temperature: 0.8, TopK: 40}},
			{"top_p0.95", SampleOptions{Temperature: 0.8, TopP: 0.95}},
		} {
			b.Run(fmt.Sprintf("weights=%v/sample=%s", f, o.name), func(b *testing.B) {
				if f != WeightsF32 && m == base {
					var err error
					if m, err = base.WithWeights(f); err != nil {
						b.Fatal(err)
					}
				}
				s := m.NewSampler()
				d := newDecodeLoop(s, ctx)
				one, r := d.one, d.r
				var took [2]time.Duration // greedy, sampled
				b.StopTimer()
				d.prefill(SampleOptions{})
				b.ReportAllocs()
				b.ResetTimer()
				b.StartTimer()
				for i := 0; i < b.N; i++ {
					if s.caches[0].Len() == ctx {
						b.StopTimer()
						d.prefill(SampleOptions{})
						b.StartTimer()
					}
					sampled := (i + i/decodeWindow(ctx)) % 2
					t0 := time.Now()
					c0, cpuOK := cpuNanos()
					s.feed(one)
					if sampled == 1 {
						one[0] = s.draw(o.Temperature, o.TopK, o.TopP, r)
					} else {
						one[0] = s.draw(0, 0, 0, r)
					}
					if c1, _ := cpuNanos(); cpuOK {
						took[sampled] += time.Duration(c1 - c0)
					} else {
						took[sampled] += time.Since(t0)
					}
				}
				b.StopTimer()
				var n [2]float64
				for i := 0; i < b.N; i++ {
					n[(i+i/decodeWindow(ctx))%2]++
				}
				ng, ns := n[0], n[1]
				if ns == 0 || ng == 0 {
					return
				}
				g, sm := took[0].Seconds()/ng, took[1].Seconds()/ns
				b.ReportMetric(1000*g, "greedy-ms/token")
				b.ReportMetric(1000*sm, "sampled-ms/token")
				b.ReportMetric(g/sm, "sampled:greedy")
			})
		}
	}
}

// BenchmarkGPT2Head measures GPT-2 small's LM head, the biggest matrix
// (wte, 50257×768), alone over N=256 rows (the B=4, T=64 step's) on the
// model's kernel implementation: fwd is Model.headForward (logits =
// lnf·wteᵀ), bwd is Model.headBackward (dlnf = dlogits·wte and dwte +=
// dlogitsᵀ·lnf), and bwd-dx and bwd-dwte are those two products alone,
// Impl().Gemm with headBackward's transposes. Each reports GFLOP/s
// (2·N·C·V per product) and, measured as in BenchmarkTrainStep, the FMA
// peak of GOMAXPROCS goroutines and the share of it reached (%peak): a
// memory-bound head (wte is 154 MB, far beyond any cache) would sit far
// below the peak.
func BenchmarkGPT2Head(b *testing.B) {
	skipGPT2(b)
	m := sharedGPT2(b)
	const n = 256
	C, V := m.Config.Width, m.Config.Vocab
	r := rng.New(3)
	x := make([]float32, n*C)
	for i := range x {
		x[i] = float32(r.Normal())
	}
	dlogits := make([]float32, n*V)
	for i := range dlogits {
		dlogits[i] = float32(r.Normal() * 1e-4)
	}
	logits := make([]float32, n*V)
	dx := make([]float32, n*C)
	g := &m.reps[0].g
	impl := m.Impl()
	prod := 2 * float64(n) * float64(C) * float64(V)
	cases := []struct {
		name  string
		flops float64
		run   func()
	}{
		{"fwd", prod, func() { m.headForward(logits, x, n) }},
		{"bwd", 2 * prod, func() { m.headBackward(dx, g, dlogits, x, n) }},
		{"bwd-dx", prod, func() { impl.Gemm(false, false, n, C, V, 1, dlogits, V, m.p.wte, C, 0, dx, C) }},
		{"bwd-dwte", prod, func() { impl.Gemm(true, false, V, C, n, 1, dlogits, V, x, C, 1, g.wte, C) }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			c.run() // warm-up
			b.ReportAllocs()
			runTime, peak := timedPeak(b, impl, c.run)
			sec := runTime.Seconds()
			rate := c.flops * float64(b.N) / sec
			b.ReportMetric(1000*sec/float64(b.N), "ms/op")
			b.ReportMetric(rate/1e9, "GFLOP/s")
			peak.Report(b, rate)
		})
	}
}

// BenchmarkGPT2Step measures one fine-tuning step (Trainer.TrainStep:
// batch, forward, backward, AdamW) of GPT-2 small at B=4, T=64 on random
// tokens over the whole vocabulary; run it with -cpu 1,2 for 1 and 2
// threads, and with -cpuprofile for its profile. Trainer.TrainStep trains
// at the model's BlockSize, so this model has BlockSize 64 (its position
// embedding is 64 rows instead of 1024: 0.6% fewer parameters, none of
// them in a matrix product). It reports ms/step, tokens/s and the model's
// GFLOP/s (stepFlops: the blocks, the causal attention and the tied LM
// head, 2·N·C·V forward and twice that backward), and, like
// BenchmarkTrainStep, the FMA peak of GOMAXPROCS goroutines and the share
// of it reached (peak-GFLOP/s, %peak).
func BenchmarkGPT2Step(b *testing.B) {
	skipGPT2(b)
	const batch = 4
	cfg := gpt2Small
	cfg.BlockSize = 64
	b.Run(fmt.Sprintf("B=%d,T=%d", batch, cfg.BlockSize), func(b *testing.B) {
		tr := stepGPT2(b, cfg, batch)
		benchSteps(b, tr, cfg, batch)
	})
}

// BenchmarkGPT2Prefill measures prompt processing on GPT-2 small (random
// weights): Sampler.Logits over a fresh prompt of 256 or 512 random
// tokens (one Decode call per block over the whole prompt, the LM head on
// the last row), with float32 products (f32), bfloat16 compute
// (precision=bf16, Model.SetPrecision), and the matrices converted to
// bfloat16 with bfloat16 compute (weights=bf16) or to int8
// (weights=int8). It reports prompt tokens/s and tokens per CPU-second
// of the process.
func BenchmarkGPT2Prefill(b *testing.B) {
	skipGPT2(b)
	m := sharedGPT2(b)
	for _, v := range []struct {
		name string
		w    Weights
		p    Precision
	}{
		{"f32", WeightsF32, PrecisionF32},
		{"precision=bf16", WeightsF32, PrecisionBF16},
		{"weights=bf16", WeightsBF16, PrecisionBF16},
		{"weights=int8", WeightsInt8, PrecisionF32},
	} {
		for _, n := range []int{256, 512} {
			b.Run(fmt.Sprintf("%s/prompt=%d", v.name, n), func(b *testing.B) {
				mm := m
				if v.w != WeightsF32 {
					low, err := m.WithWeights(v.w)
					if err != nil {
						b.Fatal(err)
					}
					mm = low
				}
				if err := mm.SetPrecision(v.p); err != nil {
					b.Fatal(err)
				}
				defer mm.SetPrecision(PrecisionF32)
				s := mm.NewSampler()
				prompt := randomTokens(n, m.Config.Vocab, uint64(n))
				s.Logits(prompt) // warm up: the first call faults the scratch in
				c0, ok0 := cpuNanos()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					s.Logits(prompt)
				}
				b.StopTimer()
				c1, ok1 := cpuNanos()
				tokens := float64(b.N * n)
				b.ReportMetric(tokens/b.Elapsed().Seconds(), "tokens/s")
				if ok0 && ok1 && c1 > c0 {
					b.ReportMetric(tokens/(float64(c1-c0)/1e9), "tokens/cpu-s")
				}
			})
		}
	}
}
