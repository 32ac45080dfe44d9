//go:build arm64 && !purego

package arm64

import (
	"slices"

	"golang.org/x/sys/cpu"

	"github.com/simdgpt/simdgpt/kernels/internal/kernelset"
)

// hasNEON reports Advanced SIMD (ASIMD), which every arm64 Linux and
// macOS machine has; x/sys/cpu reads it from the OS.
var hasNEON = cpu.ARM64.HasASIMD

// hasBF16 reports FEAT_BF16 (ARMv8.6-A's BFDOT); Linux reports it as
// HWCAP2_BF16, which cpuinfo reads as the feature "BF16".
var hasBF16 = hasNEON && slices.Contains(thisCPU.Features, "BF16")

func init() {
	kernelset.Register(setNEON(""))
}

// instrumentsNEON returns the set's Instruments (its literal, setNEON, is
// generated in sets_gen.go): the FMA loop, and the BFDOT loop where the
// CPU has FEAT_BF16; no read loop, and one GEMM tile, so no tile to
// choose.
func instrumentsNEON(string) kernelset.Instruments {
	bf16Loop, bf16Flops := bf16PeakNEONLoop()
	return kernelset.Instruments{
		FMALoop:   fmaPeakNEON,
		FMAFlops:  24 * 4 * 2, // 24 independent FMAs of 4 lanes
		BF16Loop:  bf16Loop,
		BF16Flops: bf16Flops,
		BF16Dot:   hasBF16,
	}
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

// bf16PeakNEONLoop returns the set's BF16Loop and BF16Flops: 24
// independent BFDOTs of 4 lanes, each lane two products and their sum
// with the accumulator; none without FEAT_BF16.
func bf16PeakNEONLoop() (func(int), int) {
	if !hasBF16 {
		return nil, 0
	}
	return bf16PeakNEON, 24 * 4 * 4
}
