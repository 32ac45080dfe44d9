//go:build arm64 && !purego

package arm64

import (
	"golang.org/x/sys/cpu"

	"github.com/simdgpt/simdgpt/kernels/internal/kernelset"
	"github.com/simdgpt/simdgpt/kernels/internal/layernorm"
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

		LayerNorm:         layernorm.LayerNorm(layerNormRowNEON),
		LayerNormBackward: layernorm.LayerNormBackward(layerNormBackwardRowNEON),

		AdamW:               adamwSetNEON,
		SumSquares:          sumSquaresNEON,
		SoftmaxCrossEntropy: xentNEON,

		GELU:         geluNEON,
		GELUBackward: geluBackwardNEON,
		BiasGELU:     biasGeluNEON,
		GemmBiasGELU: gemmBiasGeluNEON,
		GemmBias:     gemmBiasNEON,

		GemmBF16: lowbitNEON.GemmBF16,
		GemmInt8: lowbitNEON.GemmInt8,

		Instruments: kernelset.Instruments{
			FMALoop:  fmaPeakNEON,
			FMAFlops: 24 * 4 * 2, // 24 independent FMAs of 4 lanes
		},
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
