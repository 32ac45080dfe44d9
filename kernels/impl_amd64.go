//go:build amd64 && !purego

package kernels

import (
	"golang.org/x/sys/cpu"

	"github.com/simdgpt/simdgpt/kernels/amd64"
)

// hasAVX2 reports AVX2 and FMA with OS support for the YMM state.
var hasAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// hasAVX512 reports AVX-512F with OS support for the ZMM and opmask state.
// cpu.X86.HasAVX512 is cleared by GODEBUG=cpu.avx512=off.
var hasAVX512 = hasAVX2 && cpu.X86.HasAVX512 && cpu.X86.HasAVX512F

func archImpls() []*Impl {
	avx2 := &Impl{name: "avx2", requires: "AVX2, FMA", available: hasAVX2, ops: genericImpl.ops}
	avx512 := &Impl{name: "avx512", requires: "AVX-512F", available: hasAVX512, ops: genericImpl.ops}

	// FMA peak loops (12 independent FMAs per iteration)
	avx2.ops.fmaLoop, avx2.ops.fmaFlops = amd64.FMAPeakAVX2, 12*8*2
	avx512.ops.fmaLoop, avx512.ops.fmaFlops = amd64.FMAPeakAVX512, 12*16*2

	// gemm, blocked for this CPU's caches
	info := CPU()
	gemmAVX2.setBlocking(info)
	gemmAVX512.setBlocking(info)
	avx2.ops.gemm = gemmAVX2.gemm
	avx512.ops.gemm = gemmAVX512.gemm
	avx2.ops.maskedScores = gemmAVX2.maskedScores
	avx512.ops.maskedScores = gemmAVX512.maskedScores

	// vector ops
	avx2.ops.dot = amd64.DotAVX2
	avx2.ops.axpy = amd64.AxpyAVX2
	avx2.ops.scale = amd64.ScaleAVX2
	avx2.ops.add = amd64.AddAVX2
	avx2.ops.sum = amd64.SumAVX2
	avx2.ops.max = amd64.MaxAVX2
	avx512.ops.dot = amd64.DotAVX512
	avx512.ops.axpy = amd64.AxpyAVX512
	avx512.ops.scale = amd64.ScaleAVX512
	avx512.ops.add = amd64.AddAVX512
	avx512.ops.sum = amd64.SumAVX512
	avx512.ops.max = amd64.MaxAVX512

	// softmax
	avx2.ops.softmax = softmaxAVX2
	avx2.ops.softmaxBackward = softmaxBackwardAVX2
	avx512.ops.softmax = softmaxAVX512
	avx512.ops.softmaxBackward = softmaxBackwardAVX512

	return []*Impl{avx2, avx512}
}

// GEMM blocking. kc: an MR×kc panel of A stays in L1 beside the streaming
// B panels; nc: a kc×nc block of B fits in half of L2; mc: how many rows
// of A are packed at once. kc and nc are set from the cache sizes cpuid
// reports when archImpls runs (see blockSizes); the values here are those
// of a 48 KiB L1 and 1 MiB L2. The wide and narrow kernels of one
// implementation share MR.
var (
	gemmAVX512 = &blockedGemm{
		wide: microKernel{14, 32, amd64.GemmKernel14x32AVX512, amd64.GemmKernel14x32PackedAVX512, edgeKernels(
			amd64.GemmKernel2x32Packed14RowsAVX512, amd64.GemmKernel4x32Packed14RowsAVX512, amd64.GemmKernel6x32Packed14RowsAVX512,
			amd64.GemmKernel8x32Packed14RowsAVX512, amd64.GemmKernel10x32Packed14RowsAVX512, amd64.GemmKernel12x32Packed14RowsAVX512)},
		narrow: microKernel{14, 16, amd64.GemmKernel14x16AVX512, amd64.GemmKernel14x16PackedAVX512, edgeKernels(
			amd64.GemmKernel2x16Packed14RowsAVX512, amd64.GemmKernel4x16Packed14RowsAVX512, amd64.GemmKernel6x16Packed14RowsAVX512,
			amd64.GemmKernel8x16Packed14RowsAVX512, amd64.GemmKernel10x16Packed14RowsAVX512, amd64.GemmKernel12x16Packed14RowsAVX512)},
		kc: 256, mc: 14 * 32, nc: 512,
		packT: amd64.PackBTransAVX2, packN: amd64.PackBAVX2,
		dot: amd64.GemmDotKernel14AVX512, cols: amd64.GemmColsKernel14AVX512, packPanels: amd64.PackPanels14AVX2,
	}
	gemmAVX2 = &blockedGemm{
		wide: microKernel{6, 16, amd64.GemmKernel6x16AVX2, amd64.GemmKernel6x16PackedAVX2, edgeKernels(
			amd64.GemmKernel2x16Packed6RowsAVX2, amd64.GemmKernel4x16Packed6RowsAVX2)},
		narrow: microKernel{6, 8, amd64.GemmKernel6x8AVX2, amd64.GemmKernel6x8PackedAVX2, edgeKernels(
			amd64.GemmKernel2x8Packed6RowsAVX2, amd64.GemmKernel4x8Packed6RowsAVX2)},
		kc: 256, mc: 6 * 64, nc: 512,
		packT: amd64.PackBTransAVX2, packN: amd64.PackBAVX2,
		dot: amd64.GemmDotKernel6AVX2, cols: amd64.GemmColsKernel6AVX2, packPanels: amd64.PackPanels6AVX2,
	}
)

// edgeKernels returns the edge table of a microKernel from kernels for 2,
// 4, 6, ... rows: rows r and r-1 both take the kernel for r rows (even r).
func edgeKernels(byTwo ...kernelFunc) []kernelFunc {
	edge := make([]kernelFunc, 2*len(byTwo)+1)
	for i, f := range byTwo {
		edge[2*i+1], edge[2*i+2] = f, f
	}
	return edge
}
