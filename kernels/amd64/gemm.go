//go:build amd64 && !purego

package amd64

import (
	"github.com/simdgpt/simdgpt/kernels/internal/blocked"
	"github.com/simdgpt/simdgpt/kernels/internal/cpuinfo"
	"github.com/simdgpt/simdgpt/kernels/internal/rowloop"
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

// The sets' fused GEMMs: the driver's GEMM with an epilogue made of the
// set's own row kernels (BiasGELU; Add for GemmBias, through package
// rowloop).
var (
	biasRowsAVX2   = rowloop.Bias(addAVX2)
	biasRowsAVX512 = rowloop.Bias(addAVX512)
)

func gemmBiasGeluAVX2(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, pre []float32, ldpre int, out []float32, ldout int) {
	gemmAVX2.GemmEpilogue(transA, transB, m, n, k, a, lda, b, ldb, pre, ldpre, biasGeluAVX2, bias, out, ldout)
}

func gemmBiasGeluAVX512(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, pre []float32, ldpre int, out []float32, ldout int) {
	gemmAVX512.GemmEpilogue(transA, transB, m, n, k, a, lda, b, ldb, pre, ldpre, biasGeluAVX512, bias, out, ldout)
}

func gemmBiasAVX2(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, c []float32, ldc int) {
	gemmAVX2.GemmEpilogue(transA, transB, m, n, k, a, lda, b, ldb, c, ldc, biasRowsAVX2, bias, nil, 0)
}

func gemmBiasAVX512(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, c []float32, ldc int) {
	gemmAVX512.GemmEpilogue(transA, transB, m, n, k, a, lda, b, ldb, c, ldc, biasRowsAVX512, bias, nil, 0)
}
