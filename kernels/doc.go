// Package kernels is the public face of simdgpt's float32 compute kernels:
// matrix multiplication (Gemm, MatMul), row-wise softmax and its backward,
// causally masked attention scores (MaskedScores) and the vector
// operations a trainer needs (Dot, Axpy, Scale, Add, Sum, Max).
//
// Matrices are row-major float32 slices described BLAS-style by their
// sizes and a leading dimension (the distance, in elements, between the
// starts of consecutive rows). Every argument is checked in Go before any
// implementation runs; a slice that is too short, a negative size or a
// leading dimension smaller than its row panics with a message naming the
// function, the argument and the numbers.
//
// # Implementations
//
// Each kernel exists in several implementations: "generic" (pure Go, on
// every platform), "avx2" (AVX2+FMA) and "avx512" (AVX-512F) on amd64, and
// "neon" on arm64. The best one this CPU and OS can run is chosen once, at
// start-up, from golang.org/x/sys/cpu (so GODEBUG=cpu.avx512=off is
// honoured). The environment variable SIMDGPT_ISA=generic|avx2|avx512|neon
// forces one for the whole program. Implementations lists every
// implementation this CPU can run; each is an *Impl whose methods are the
// same kernels, which is how tests and benchmarks compare them. Building
// with -tags purego compiles no assembly at all.
//
// The package-level functions are safe for concurrent use. Kernels do not
// allocate per call once warm (Gemm keeps its packing buffers for reuse).
package kernels
