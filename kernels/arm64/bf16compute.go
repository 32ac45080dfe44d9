//go:build arm64 && !purego

package arm64

import (
	"slices"

	"github.com/simdgpt/simdgpt/kernels/internal/bf16compute"
	"github.com/simdgpt/simdgpt/kernels/internal/cpuinfo"
	"github.com/simdgpt/simdgpt/kernels/internal/gemm"
)

// The bfloat16 products of the neon set. Where the CPU has FEAT_BF16
// (ARMv8.6-A's BFDOT; Linux reports it as HWCAP2_BF16, which cpuinfo
// reads as the feature "BF16") they run on the generated BFDOT
// micro-kernel (bf16compute_arm64.s, an 8×8 tile; its table
// bf16KernelsNEON in families_gen.go) under the shared
// driver, with its Go packers (the panels are 8 columns wide); elsewhere
// they round the operands and run the set's float32 GEMM
// (bf16compute.Rounded). Both are within the products' error contract.

// cpuBF16 is what the bfloat16 products know of the CPU: its features
// and the caches the driver is blocked for.
var cpuBF16 = cpuinfo.Read()

// hasBF16 reports FEAT_BF16.
var hasBF16 = hasNEON && slices.Contains(cpuBF16.Features, "BF16")

// bf16DriverNEON is the BFDOT driver, nil without FEAT_BF16.
var bf16DriverNEON = func() *bf16compute.Driver {
	if !hasBF16 {
		return nil
	}
	return bf16compute.New(bf16KernelsNEON, gemm.CachesOf(cpuBF16))
}()

// bf16FamilyNEON returns the neon set's bfloat16 products on its GEMM
// family g: on the BFDOT driver where the CPU has FEAT_BF16, else the
// operands rounded to bfloat16 and multiplied on g's float32 GEMM
// (bf16compute.Rounded).
func bf16FamilyNEON(g *gemm.Family) *bf16compute.Family {
	return &bf16compute.Family{
		Packed:   bf16DriverNEON,
		Rounded:  &bf16compute.Rounded{Gemm: g.Gemm, Epilogue: g.GemmEpilogue},
		BiasRows: g.Bias,
		BiasGELU: g.BiasGELU,
	}
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
