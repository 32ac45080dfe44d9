package kernels_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/simdgpt/simdgpt/bench"
	"github.com/simdgpt/simdgpt/kernels"
)

// The kernels' benchmarks run the cases of package bench, the same ones
// cmd/kernelbench runs, as sub-benchmarks named SHAPE/IMPL.

// benchKernel returns bench's kernel of the given name.
func benchKernel(b *testing.B, name string) *bench.Kernel {
	for _, k := range bench.Kernels() {
		if k.Name == name {
			return k
		}
	}
	b.Fatalf("package bench has no kernel %q", name)
	return nil
}

// benchAll runs every shape of the named kernel on every implementation
// that supports it, on GOMAXPROCS goroutines (0: unchanged).
func benchAll(b *testing.B, kernel string, procs int) {
	k := benchKernel(b, kernel)
	for _, s := range k.Shapes {
		for _, im := range bench.OursAll() {
			if !k.Supports(s, im) {
				continue // generic on the largest problems: seconds per call
			}
			b.Run(s.Name+"/"+im.Name, func(b *testing.B) {
				if procs > 0 {
					// Inside the sub-benchmark: the testing package resets
					// GOMAXPROCS between runs.
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				}
				bench.Benchmark(b, bench.Case{Kernel: k, Shape: s}, im)
			})
		}
	}
}

// BenchmarkFMAPeak measures each implementation's peak float32 FMA rate
// with a generated loop of independent FMAs; GEMM results are read as a
// fraction of it.
func BenchmarkFMAPeak(b *testing.B) {
	for _, p := range kernels.Implementations() {
		if p.FMAPeakLoop(1) == 0 {
			continue // generic has no peak loop
		}
		b.Run(p.Name(), func(b *testing.B) {
			const iters = 1 << 16
			flops := 0
			for b.Loop() {
				flops += p.FMAPeakLoop(iters)
			}
			b.ReportMetric(float64(flops)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkGemmBF16ComputeCases runs package bench's gemmbf16compute shapes (the
// squares and TinyGPT's training shapes with their transposed forms) on
// every implementation on one goroutine, reporting GFLOP/s and the
// percent of the bfloat16 peak (BF16PeakLoop) measured in the same
// iterations, where the implementation has one.
func BenchmarkGemmBF16ComputeCases(b *testing.B) { benchAll(b, "gemmbf16compute", 1) }

// BenchmarkGemm runs every GEMM shape (squares 64 to 2048, TinyGPT's
// training shapes and their transposed backward forms) on every
// implementation on one goroutine, reporting GFLOP/s and the percent of
// the FMA peak measured in the same iterations.
func BenchmarkGemm(b *testing.B) { benchAll(b, "gemm", 1) }

// BenchmarkGemmParallel runs large and small problems on one goroutine
// and on GOMAXPROCS goroutines side by side: the large ones must scale,
// the small ones (which stay on one goroutine below the threshold) must
// not get slower.
func BenchmarkGemmParallel(b *testing.B) {
	k := benchKernel(b, "gemm")
	all := runtime.GOMAXPROCS(0)
	for _, name := range []string{"sq1024", "sq512", "768x128x384", "768x128x128", "768x128x65", "256x64x256_NT", "300x100x300", "sq64"} {
		s, ok := k.Shape(name)
		if !ok {
			b.Fatalf("no gemm shape %q", name)
		}
		for _, p := range kernels.Implementations() {
			if p.FMAPeakLoop(1) == 0 {
				continue // generic runs on one goroutine
			}
			for _, procs := range []int{1, all} {
				b.Run(fmt.Sprintf("%s/%s/procs=%d", s.Name, p.Name(), procs), func(b *testing.B) {
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
					bench.Benchmark(b, bench.Case{Kernel: k, Shape: s}, bench.Ours(p))
				})
			}
		}
	}
}

// BenchmarkMaskedScores compares MaskedScores ("masked") with Gemm
// followed by masking ("gemm+mask", the same result computed without
// skipping masked tiles) for one causal head, on each implementation,
// both on one goroutine.
func BenchmarkMaskedScores(b *testing.B) {
	k := benchKernel(b, "maskedscores")
	for _, s := range k.Shapes {
		for _, p := range kernels.Implementations() {
			for _, v := range []struct {
				name string
				im   *bench.Impl
			}{{"masked", bench.Ours(p)}, {"gemm+mask", bench.GemmThenMask(p)}} {
				if !k.Supports(s, v.im) {
					continue
				}
				b.Run(s.Name+"/"+p.Name()+"/"+v.name, func(b *testing.B) {
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
					bench.Benchmark(b, bench.Case{Kernel: k, Shape: s}, v.im)
				})
			}
		}
	}
}

// BenchmarkSoftmax times Softmax on matrices of 2^16 elements (rows of 64
// to 65536), which stay in L2 across calls, out of place and in place, and
// on a 2^22-element matrix that streams from memory ("n=4096,stream");
// it reports MB/s and ns per element.
func BenchmarkSoftmax(b *testing.B) { benchAll(b, "softmax", 0) }

// BenchmarkSoftmaxBackward times SoftmaxBackward on L2-resident matrices.
func BenchmarkSoftmaxBackward(b *testing.B) { benchAll(b, "softmaxbackward", 0) }

// The vector operations on lengths from L1-resident (256) to
// memory-sized (2^24, 64 MiB a vector); MB/s is the bandwidth achieved.

func BenchmarkDot(b *testing.B)   { benchAll(b, "dot", 0) }
func BenchmarkAxpy(b *testing.B)  { benchAll(b, "axpy", 0) }
func BenchmarkScale(b *testing.B) { benchAll(b, "scale", 0) }
func BenchmarkAdd(b *testing.B)   { benchAll(b, "add", 0) }
func BenchmarkSum(b *testing.B)   { benchAll(b, "sum", 0) }
func BenchmarkMax(b *testing.B)   { benchAll(b, "max", 0) }

// BenchmarkSoftmaxCrossEntropy times SoftmaxCrossEntropy on the softmax's
// shapes (losses and gradients of rows of 64 to 65536 logits).
func BenchmarkSoftmaxCrossEntropy(b *testing.B) { benchAll(b, "crossentropy", 0) }

// BenchmarkAdamW times one AdamW step over vectors from L1-resident to
// memory-sized; MB/s counts the four arrays read and three written.
func BenchmarkAdamW(b *testing.B) { benchAll(b, "adamw", 0) }

// BenchmarkSumSquares times the float64 sum of squares (the squared
// gradient norm).
func BenchmarkSumSquares(b *testing.B) { benchAll(b, "sumsquares", 0) }

// The GELU kernels: GELU and GELUBackward on the vector lengths above,
// BiasGELU on M×N matrices of MLP width (see bench/cases.go).

func BenchmarkGELU(b *testing.B)         { benchAll(b, "gelu", 0) }
func BenchmarkGELUBackward(b *testing.B) { benchAll(b, "gelubackward", 0) }
func BenchmarkBiasGELU(b *testing.B)     { benchAll(b, "biasgelu", 0) }

// BenchmarkGemmBiasGELU times the GEMM with its bias and GELU epilogue on
// the MLP shapes of bench/cases.go, on one goroutine as BenchmarkGemm.
func BenchmarkGemmBiasGELU(b *testing.B) { benchAll(b, "gemmbiasgelu", 1) }

// BenchmarkGemmBias times the GEMM with its bias epilogue on the
// projection shapes of bench/cases.go, on one goroutine as BenchmarkGemm.
func BenchmarkGemmBias(b *testing.B) { benchAll(b, "gemmbias", 1) }
