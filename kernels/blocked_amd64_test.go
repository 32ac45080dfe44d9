//go:build amd64 && !purego

package kernels

// blockedGemms maps implementation names to their GEMM drivers.
var blockedGemms = map[string]*blockedGemm{"avx2": gemmAVX2, "avx512": gemmAVX512}
