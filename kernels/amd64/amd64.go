//go:build amd64 && !purego

package amd64

import (
	"golang.org/x/sys/cpu"

	"github.com/simdgpt/simdgpt/kernels/internal/kernelset"
	"github.com/simdgpt/simdgpt/kernels/internal/rowloop"
)

// hasAVX2 reports AVX2 and FMA with OS support for the YMM state.
var hasAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// hasAVX512 reports AVX-512F, AVX-512DQ (the generated kernels zero ZMM
// registers with VXORPS, a DQ instruction) and AVX-512BW (the products
// over int8 weights widen and multiply 16-bit integers) with OS support
// for the ZMM and opmask state. Every CPU with DQ so far has BW too. TestRequires checks that the generated kernels need
// nothing more. cpu.X86.HasAVX512F is cleared by GODEBUG=cpu.avx512f=off
// (cpu.avx512=off also works; Go 1.26 warns that it does not know the
// name).
var hasAVX512 = hasAVX2 && cpu.X86.HasAVX512 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512BW

func init() {
	kernelset.Register(setAVX2(tileFor("avx2", thisCPU)))
	kernelset.Register(setAVX512(tileFor("avx512", thisCPU)))
}

// withTile returns set's WithTile: the set made by mk on another of its
// tiles, nil for a tile set does not have.
func withTile(set string, mk func(tile string) *kernelset.Set) func(string) *kernelset.Set {
	return func(tile string) *kernelset.Set {
		if gemmDriver(set, tile) == nil {
			return nil
		}
		return mk(tile)
	}
}

// setAVX2 returns the avx2 set with its GEMM family on the named tile.
func setAVX2(tile string) *kernelset.Set {
	g := familyAVX2(tile)
	bf := bf16Family(g, nil)
	return &kernelset.Set{
		Name:            "avx2",
		Requires:        "AVX2, FMA",
		Available:       hasAVX2,
		Gemm:            g.d.Gemm,
		Gemv:            g.d.Gemv,
		MaskedScores:    g.d.MaskedScores,
		Softmax:         softmaxAVX2,
		SoftmaxBackward: softmaxBackwardAVX2,
		Dot:             dotAVX2,
		Axpy:            axpyAVX2,
		Scale:           scaleAVX2,
		Add:             addAVX2,
		Sum:             sumAVX2,
		Max:             maxAVX2,

		LayerNorm:         rowloop.LayerNorm(layerNormRowAVX2),
		LayerNormBackward: rowloop.LayerNormBackward(layerNormBackwardRowAVX2),

		FMALoop:  fmaPeakAVX2,
		FMAFlops: 12 * 8 * 2, // 12 independent FMAs of 8 lanes

		ReadLoop:  readAheadAVX2,
		ReadBlock: 256, // 1 KiB a step

		AdamW:               adamwSetAVX2,
		SumSquares:          sumSquaresAVX2,
		SoftmaxCrossEntropy: xentAVX2,

		GELU:         geluRowAVX2,
		GELUBackward: geluBackwardRowAVX2,
		BiasGELU:     biasGeluAVX2,
		GemmBiasGELU: g.gemmBiasGELU,
		GemmBias:     g.gemmBias,

		GemmBF16: wdotsAVX2.GemmBF16,
		GemmInt8: wdotsAVX2.GemmInt8,

		GemmBF16Compute:         bf.GemmBF16Compute,
		GemmBiasBF16Compute:     bf.GemmBiasBF16Compute,
		GemmBiasGELUBF16Compute: bf.GemmBiasGELUBF16Compute,
		GemmBF16ComputeWeights:  bf.GemmBF16ComputeWeights,

		Tile:     tile,
		Tiles:    tileNames("avx2"),
		WithTile: withTile("avx2", setAVX2),
	}
}

// setAVX512 returns the avx512 set with its GEMM family on the named tile.
func setAVX512(tile string) *kernelset.Set {
	g := familyAVX512(tile)
	bf := bf16Family(g, bf16DriverAVX512)
	bf16Loop, bf16Flops := bf16Peak()
	return &kernelset.Set{
		Name:            "avx512",
		Requires:        "AVX-512F, AVX-512DQ, AVX-512BW",
		Available:       hasAVX512,
		BF16Pair:        hasAVX512BF16,
		Gemm:            g.d.Gemm,
		Gemv:            g.d.Gemv,
		MaskedScores:    g.d.MaskedScores,
		Softmax:         softmaxAVX512,
		SoftmaxBackward: softmaxBackwardAVX512,
		Dot:             dotAVX512,
		Axpy:            axpyAVX512,
		Scale:           scaleAVX512,
		Add:             addAVX512,
		Sum:             sumAVX512,
		Max:             maxAVX512,

		LayerNorm:         rowloop.LayerNorm(layerNormRowAVX512),
		LayerNormBackward: rowloop.LayerNormBackward(layerNormBackwardRowAVX512),

		FMALoop:  fmaPeakAVX512,
		FMAFlops: 12 * 16 * 2, // 12 independent FMAs of 16 lanes

		ReadLoop:  readAheadAVX512,
		ReadBlock: 256, // 1 KiB a step

		AdamW:               adamwSetAVX512,
		SumSquares:          sumSquaresAVX512,
		SoftmaxCrossEntropy: xentAVX512,

		GELU:         geluRowAVX512,
		GELUBackward: geluBackwardRowAVX512,
		BiasGELU:     biasGeluAVX512,
		GemmBiasGELU: g.gemmBiasGELU,
		GemmBias:     g.gemmBias,

		GemmBF16: wdotsAVX512.GemmBF16,
		GemmInt8: wdotsAVX512.GemmInt8,

		GemmBF16Compute:         bf.GemmBF16Compute,
		GemmBiasBF16Compute:     bf.GemmBiasBF16Compute,
		GemmBiasGELUBF16Compute: bf.GemmBiasGELUBF16Compute,
		GemmBF16ComputeWeights:  bf.GemmBF16ComputeWeights,

		BF16Loop:  bf16Loop,
		BF16Flops: bf16Flops,

		Tile:     tile,
		Tiles:    tileNames("avx512"),
		WithTile: withTile("avx512", setAVX512),
	}
}
