//go:build arm64 && !purego

package arm64

import (
	"golang.org/x/sys/cpu"

	"github.com/simdgpt/simdgpt/kernels/internal/kernelset"
	"github.com/simdgpt/simdgpt/kernels/internal/rowloop"
)

// hasNEON reports Advanced SIMD (ASIMD), which every arm64 Linux and
// macOS machine has; x/sys/cpu reads it from the OS.
var hasNEON = cpu.ARM64.HasASIMD

func init() {
	kernelset.Register(&kernelset.Set{
		Name:            "neon",
		Requires:        "ASIMD",
		Available:       hasNEON,
		Gemm:            gemmNEON.Gemm,
		Gemv:            gemmNEON.Gemv,
		MaskedScores:    gemmNEON.MaskedScores,
		Softmax:         softmaxNEON,
		SoftmaxBackward: softmaxBackwardNEON,
		Dot:             dotNEON,
		Axpy:            axpyNEON,
		Scale:           scaleNEON,
		Add:             addNEON,
		Sum:             sumNEON,
		Max:             maxFirstNaNNEON,

		LayerNorm:         rowloop.LayerNorm(layerNormRowNEON),
		LayerNormBackward: rowloop.LayerNormBackward(layerNormBackwardRowNEON),

		FMALoop:  fmaPeakNEON,
		FMAFlops: 24 * 4 * 2, // 24 independent FMAs of 4 lanes

		AdamW:               adamwSetNEON,
		SumSquares:          sumSquaresNEON,
		SoftmaxCrossEntropy: xentNEON,

		GELU:         geluNEON,
		GELUBackward: geluBackwardNEON,
		BiasGELU:     biasGeluNEON,
		GemmBiasGELU: gemmBiasGeluNEON,
		GemmBias:     gemmBiasNEON,

		GemmBF16: wdotsNEONKernels.GemmBF16,
		GemmInt8: wdotsNEONKernels.GemmInt8,

		GemmBF16Compute:         bf16NEON.GemmBF16Compute,
		GemmBiasBF16Compute:     bf16NEON.GemmBiasBF16Compute,
		GemmBiasGELUBF16Compute: bf16NEON.GemmBiasGELUBF16Compute,
		GemmBF16ComputeWeights:  bf16NEON.GemmBF16ComputeWeights,
	})
}

// maxFirstNaNNEON is maxNEON returning, like the other implementations,
// the first NaN element of x when there is one (FMAX returns some NaN).
func maxFirstNaNNEON(x []float32) float32 {
	m := maxNEON(x)
	if m != m {
		for _, v := range x {
			if v != v {
				return v
			}
		}
	}
	return m
}
