package attention

import (
	"fmt"
	"testing"
	"time"

	"github.com/simdgpt/simdgpt/kernels"
)

// forwardFlops and backwardFlops are the FLOP counts the benchmarks
// report GFLOP/s with; see ForwardFlops.
var forwardFlops, backwardFlops = ForwardFlops, BackwardFlops

// benchShapes are the two training shapes the layer's speed target is
// set on (PERF.md, "Attention").
var benchShapes = []struct{ b, t, c, h int }{
	{12, 64, 128, 4},
	{8, 256, 384, 6},
}

// cpuClock measures the CPU time of a benchmark besides its wall time.
// On this project's shared 2-vCPU machine other tenants take the cores
// for long spells; wall-clock rates then measure them, while the rate per
// CPU-second our process was actually given (GFLOP/cpu-s) measures the
// code. With GOMAXPROCS=n it is the rate per busy core, so n·GFLOP/cpu-s
// is what n otherwise idle cores would reach.
type cpuClock struct {
	start int64
	ok    bool
}

// cpuNow returns the process's CPU time in nanoseconds (0 if unknown).
func cpuNow() int64 {
	ns, _ := cpuNanos()
	return ns
}

func startCPU() cpuClock {
	ns, ok := cpuNanos()
	return cpuClock{ns, ok}
}

// since returns the CPU nanoseconds since c started (0 if unknown).
func (c cpuClock) since() float64 {
	ns, ok := cpuNanos()
	if !ok || !c.ok {
		return 0
	}
	return float64(ns - c.start)
}

// reportGFLOPS reports the wall-clock rate of b.N calls of flops each
// and, if cpu is known, the rate per CPU-second.
func reportGFLOPS(b *testing.B, flops float64, cpu cpuClock) {
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	if ns := cpu.since(); ns > 0 {
		b.ReportMetric(flops*float64(b.N)/ns, "GFLOP/cpu-s")
	}
}

// BenchmarkAttention runs, in one benchmark so that -count interleaves
// them, the heads' forward, backward and forward+backward on the
// training shapes (benchShapes), the fused forward at long contexts, and
// the reference GEMMs: for each training shape the GEMM of a caller's qkv
// projection (B·T × C times C × 3C) and a square 512 GEMM, all with
// every goroutine GOMAXPROCS allows, as the layer runs.
func BenchmarkAttention(b *testing.B) {
	for _, s := range benchShapes {
		name := fmt.Sprintf("B=%d,T=%d,C=%d,H=%d", s.b, s.t, s.c, s.h)
		pr := newProblem(refShape{s.b, s.t, s.c, s.h}, 20)
		l := newLayer(b, kernels.Default(), s.c, s.h)
		n := s.b * s.t * s.c
		y, dqkv := make([]float32, n), make([]float32, 3*n)
		dy := uniform(newRand(21), n, 0.01)
		// Warm up: the first calls grow the workspace (page faults), which
		// must not land in a timed run.
		l.Forward(y, pr.qkv, s.b, s.t)
		l.Backward(dqkv, dy, pr.qkv)
		fwd, bwd := forwardFlops(s.b, s.t, s.c), backwardFlops(s.b, s.t, s.c)
		for _, bf := range []bool{false, true} {
			benchLayer(b, l, bf, name+bf16Suffix(bf), y, dqkv, dy, pr.qkv, s.b, s.t, fwd, bwd)
		}
		m, k, nn := s.b*s.t, s.c, 3*s.c
		benchGemm(b, fmt.Sprintf("gemm/%dx%dx%d", m, k, nn), m, k, nn)
	}
	benchGemm(b, "gemm/sq512", 512, 512, 512)
	for _, t := range []int{1024, 2048, 4096} {
		const c, h = 384, 6
		pr := newProblem(refShape{1, t, c, h}, 22)
		f := newLayer(b, kernels.Default(), c, h).NewFused()
		out := make([]float32, t*c)
		f.Forward(out, pr.qkv, 1, t) // warm up
		b.Run(fmt.Sprintf("fused/B=1,T=%d,C=%d,H=%d", t, c, h), func(b *testing.B) {
			cpu := startCPU()
			for i := 0; i < b.N; i++ {
				f.Forward(out, pr.qkv, 1, t)
			}
			reportGFLOPS(b, forwardFlops(1, t, c), cpu)
		})
	}
}

// bf16Suffix is the ending of a benchmark's name that computes the
// per-head products in bfloat16: ",bf16", or "" for float32.
func bf16Suffix(bf bool) string {
	if bf {
		return ",bf16"
	}
	return ""
}

// benchLayer runs BenchmarkAttention's fwd, bwd and fwdbwd of layer l on
// one shape, its per-head products in bfloat16 if bf; the layer is left
// in float32.
func benchLayer(b *testing.B, l *Layer, bf bool, name string, y, dqkv, dy, qkv []float32, bb, t int, fwd, bwd float64) {
	l.SetBF16Compute(bf)
	defer l.SetBF16Compute(false)
	b.Run("fwd/"+name, func(b *testing.B) {
		cpu := startCPU()
		for i := 0; i < b.N; i++ {
			l.Forward(y, qkv, bb, t)
		}
		reportGFLOPS(b, fwd, cpu)
	})
	b.Run("bwd/"+name, func(b *testing.B) {
		l.Forward(y, qkv, bb, t)
		b.ResetTimer()
		cpu := startCPU()
		for i := 0; i < b.N; i++ {
			l.Backward(dqkv, dy, qkv)
		}
		reportGFLOPS(b, bwd, cpu)
	})
	b.Run("fwdbwd/"+name, func(b *testing.B) {
		cpu := startCPU()
		for i := 0; i < b.N; i++ {
			l.Forward(y, qkv, bb, t)
			l.Backward(dqkv, dy, qkv)
		}
		reportGFLOPS(b, fwd+bwd, cpu)
	})
}

// benchGemm benchmarks C (m×n) = A (m×k) · B (k×n) on the default
// implementation, the layers' own.
func benchGemm(b *testing.B, name string, m, k, n int) {
	impl := kernels.Default()
	rng := newRand(23)
	x, w, c := uniform(rng, m*k, 1), uniform(rng, k*n, 1), make([]float32, m*n)
	impl.Gemm(false, false, m, n, k, 1, x, k, w, n, 0, c, n) // warm up
	b.Run(name, func(b *testing.B) {
		cpu := startCPU()
		for i := 0; i < b.N; i++ {
			impl.Gemm(false, false, m, n, k, 1, x, k, w, n, 0, c, n)
		}
		reportGFLOPS(b, 2*float64(m)*float64(n)*float64(k), cpu)
	})
}

// BenchmarkVsGemm measures the ratio the layer's speed target is set on,
// forward plus backward GFLOP/s over Gemm's GFLOP/s, on a machine whose
// speed drifts: every iteration times one Forward+Backward and right
// after it Gemm calls of about the same number of operations, so the two
// rates share the machine's conditions. The reference GEMMs are a square
// 512 product and a caller's qkv projection (B·T × C times C × 3C).
// Metrics:
// attn-GFLOP/s, gemm-GFLOP/s and their ratio (x-gemm, to be >= 0.5),
// and the same ratio of rates per CPU-second (x-gemm-cpu; see cpuClock).
func BenchmarkVsGemm(b *testing.B) {
	impl := kernels.Default()
	for _, s := range benchShapes {
		pr := newProblem(refShape{s.b, s.t, s.c, s.h}, 20)
		l := newLayer(b, impl, s.c, s.h)
		n := s.b * s.t * s.c
		y, dqkv := make([]float32, n), make([]float32, 3*n)
		dy := uniform(newRand(21), n, 0.01)
		// Warm up: the first calls grow the workspace (page faults), which
		// must not land in a timed run.
		l.Forward(y, pr.qkv, s.b, s.t)
		l.Backward(dqkv, dy, pr.qkv)
		flops := forwardFlops(s.b, s.t, s.c) + backwardFlops(s.b, s.t, s.c)
		for _, ref := range []struct {
			name    string
			m, k, n int
		}{
			{"sq512", 512, 512, 512},
			{fmt.Sprintf("%dx%dx%d", s.b*s.t, s.c, 3*s.c), s.b * s.t, s.c, 3 * s.c},
		} {
			rng := newRand(23)
			x, w, c := uniform(rng, ref.m*ref.k, 1), uniform(rng, ref.k*ref.n, 1), make([]float32, ref.m*ref.n)
			gflops := 2 * float64(ref.m) * float64(ref.n) * float64(ref.k)
			reps := max(1, int(flops/gflops+0.5))
			name := fmt.Sprintf("B=%d,T=%d,C=%d,H=%d/gemm=%s", s.b, s.t, s.c, s.h, ref.name)
			b.Run(name, func(b *testing.B) {
				var ta, tg time.Duration
				var ca, cg int64
				for i := 0; i < b.N; i++ {
					t0, c0 := time.Now(), cpuNow()
					l.Forward(y, pr.qkv, s.b, s.t)
					l.Backward(dqkv, dy, pr.qkv)
					t1, c1 := time.Now(), cpuNow()
					for r := 0; r < reps; r++ {
						impl.Gemm(false, false, ref.m, ref.n, ref.k, 1, x, ref.k, w, ref.n, 0, c, ref.n)
					}
					t2, c2 := time.Now(), cpuNow()
					ta += t1.Sub(t0)
					tg += t2.Sub(t1)
					ca += c1 - c0
					cg += c2 - c1
				}
				ar := flops * float64(b.N) / ta.Seconds() / 1e9
				gr := gflops * float64(reps*b.N) / tg.Seconds() / 1e9
				b.ReportMetric(ar, "attn-GFLOP/s")
				b.ReportMetric(gr, "gemm-GFLOP/s")
				b.ReportMetric(ar/gr, "x-gemm")
				if ca > 0 && cg > 0 {
					b.ReportMetric(flops*float64(b.N)/float64(ca), "attn-GFLOP/cpu-s")
					b.ReportMetric(gflops*float64(reps*b.N)/float64(cg), "gemm-GFLOP/cpu-s")
					// The same ratio in CPU time: the rate of each per
					// CPU-second the process was given.
					b.ReportMetric((flops*float64(b.N)/float64(ca))/(gflops*float64(reps*b.N)/float64(cg)), "x-gemm-cpu")
				}
			})
		}
	}
}

// BenchmarkDecode decodes whole sequences one token at a time with a KV
// cache, as sampling does. The work of a sequence is that of a forward
// pass over it (token p costs 4·C·(p+1)), so the FLOP count is
// forwardFlops(1, T, C); tokens/s is the sampling rate of one layer's
// heads. The names ending in ",kv=bf16" decode on a bf16 cache.
func BenchmarkDecode(b *testing.B) {
	for _, s := range []struct {
		t, c, h int
		kv      KVCache
	}{{256, 384, 6, KVFloat32}, {256, 384, 6, KVBF16}, {1024, 384, 6, KVFloat32}, {1024, 384, 6, KVBF16}, {512, 768, 12, KVFloat32}, {512, 768, 12, KVBF16}} {
		pr := newProblem(refShape{1, s.t, s.c, s.h}, 24)
		l := newLayer(b, kernels.Default(), s.c, s.h)
		d := l.NewDecoderKV(s.t, s.kv)
		out := make([]float32, s.c)
		for p := 0; p < s.t; p++ { // warm up
			d.Decode(out, pr.qkv[p*3*s.c:(p+1)*3*s.c], 1)
		}
		suffix := ""
		if s.kv != KVFloat32 {
			suffix = ",kv=" + s.kv.String()
		}
		b.Run(fmt.Sprintf("T=%d,C=%d,H=%d%s", s.t, s.c, s.h, suffix), func(b *testing.B) {
			cpu := startCPU()
			for i := 0; i < b.N; i++ {
				d.Reset()
				for p := 0; p < s.t; p++ {
					d.Decode(out, pr.qkv[p*3*s.c:(p+1)*3*s.c], 1)
				}
			}
			reportGFLOPS(b, forwardFlops(1, s.t, s.c), cpu)
			b.ReportMetric(float64(s.t*b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// BenchmarkPrefill feeds a whole prompt to an empty KV cache in one
// Decode call, as a sampler does with its prompt: the rows go through
// the heads as blocks of rows (rowBlock), not one at a time; the names
// ending in ",bf16" compute the per-head products in bfloat16
// (SetBF16Compute).
func BenchmarkPrefill(b *testing.B) {
	for _, s := range []struct{ t, c, h int }{{64, 768, 12}, {512, 768, 12}} {
		pr := newProblem(refShape{1, s.t, s.c, s.h}, 24)
		l := newLayer(b, kernels.Default(), s.c, s.h)
		out := make([]float32, s.t*s.c)
		for _, bf := range []bool{false, true} {
			d := l.NewDecoder(s.t)
			d.SetBF16Compute(bf)
			b.Run(fmt.Sprintf("T=%d,C=%d,H=%d%s", s.t, s.c, s.h, bf16Suffix(bf)), func(b *testing.B) {
				cpu := startCPU()
				for i := 0; i < b.N; i++ {
					d.Reset()
					d.Decode(out, pr.qkv, s.t)
				}
				reportGFLOPS(b, forwardFlops(1, s.t, s.c), cpu)
				b.ReportMetric(float64(s.t*b.N)/b.Elapsed().Seconds(), "tokens/s")
			})
		}
	}
}
