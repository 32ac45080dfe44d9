//go:build amd64 && !purego

package amd64

import (
	"github.com/simdgpt/simdgpt/kernels/internal/blocked"
	"github.com/simdgpt/simdgpt/kernels/internal/cpuinfo"
)

// The GEMM (and masked scores) of each set: the shared blocked driver over
// the generated kernel tables (gemm_kernels_amd64.go), blocked for this
// CPU's caches by blocked.Model (on Zen 4, 32 KiB 8-way L1d, 1 MiB 8-way
// L2: kc 128, nc 1536 for the 14×32 AVX-512 kernels, kc 256, nc 768 for
// the 6×16 AVX2 ones), or as SIMDGPT_BLOCKING says.
var (
	caches     = blocked.CachesOf(cpuinfo.Read())
	gemmAVX512 = blocked.New("avx512", kernelsAVX512, caches).WithSkinny(skinnyAVX512)
	gemmAVX2   = blocked.New("avx2", kernelsAVX2, caches).WithSkinny(skinnyAVX2)
)

// gemmBiasGeluAVX2 and gemmBiasGeluAVX512 are the sets' GemmBiasGELU: the
// driver's GEMM with the set's BiasGELU as its epilogue.
func gemmBiasGeluAVX2(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, pre []float32, ldpre int, out []float32, ldout int) {
	gemmAVX2.GemmBiasGELU(transA, transB, m, n, k, a, lda, b, ldb, bias, pre, ldpre, out, ldout, biasGeluAVX2)
}

func gemmBiasGeluAVX512(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, pre []float32, ldpre int, out []float32, ldout int) {
	gemmAVX512.GemmBiasGELU(transA, transB, m, n, k, a, lda, b, ldb, bias, pre, ldpre, out, ldout, biasGeluAVX512)
}
