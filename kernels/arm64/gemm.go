//go:build arm64 && !purego

package arm64

import (
	"github.com/simdgpt/simdgpt/kernels/internal/cpuinfo"
	"github.com/simdgpt/simdgpt/kernels/internal/gemm"
)

// gemmNEON is the GEMM (and masked scores) of the neon set: the shared
// blocked driver over the generated kernel table (gemm_kernels_arm64.go),
// blocked for this CPU's caches by gemm.Model (on Neoverse N1 or V1,
// 64 KiB 4-way L1d and 1 MiB 8-way L2: kc 336, nc 576 for the 8×12
// kernel), or as SIMDGPT_BLOCKING says; Gemv and the products with few
// rows of op(A) on the skinny kernels (skinny_arm64.s, their table
// skinnyNEON in families_gen.go), with the driver's small-M rule. Not
// tuned on hardware (see PERF.md).
//
// The fused GEMMs run the driver's GEMM with an epilogue made of the
// set's own row kernels (BiasGELU; Add through gemm.Bias). bfloat16
// weights are widened as the driver packs its B panels (packBF16NEON,
// lowbit_arm64.s), and the rounded bfloat16 products of CPUs without
// FEAT_BF16 round their operands as it packs them (roundBF16NEON,
// vecops_arm64.s).
var gemmNEON = &gemm.Family{
	Driver:    gemm.New("neon", kernelsNEON, caches).WithSkinny(skinnyNEON),
	BiasGELU:  biasGeluNEON,
	Bias:      gemm.Bias(addNEON),
	RoundBF16: roundBF16NEON,
	WidenBF16: widenBF16NEON,
	PackBF16:  packBF16NEON,
}

// thisCPU is what the set knows of the CPU: its features and the caches
// its drivers are blocked for (caches).
var (
	thisCPU = cpuinfo.Read()
	caches  = gemm.CachesOf(thisCPU)
)

// familyNEON returns the set's GEMM family, gemmNEON: the set has one
// tile.
func familyNEON(string) *gemm.Family { return gemmNEON }
