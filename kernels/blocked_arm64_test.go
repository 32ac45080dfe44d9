//go:build arm64 && !purego

package kernels

// blockedGemms maps implementation names to their GEMM drivers.
var blockedGemms = map[string]*blockedGemm{"neon": gemmNEON}
