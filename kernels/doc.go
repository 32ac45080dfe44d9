// Package kernels is the public face of simdgpt's float32 compute kernels:
// matrix multiplication (Gemm, MatMul, and the GEMMs with an epilogue:
// GemmBiasGELU, a linear layer with its bias and GELU, and GemmBias, one
// with its bias), the matrix-vector product Gemv, row-wise
// softmax and its backward,
// causally masked attention scores (MaskedScores), the vector
// operations a trainer needs (Dot, Axpy, Scale, Add, Sum, Max),
// LayerNorm and its backward (and AddLayerNorm, a residual add fused into
// the LayerNorm that follows it), GELU
// (GELU, GELUBackward, and BiasGELU, fused with a bias addition), the
// fused softmax cross-entropy loss and gradient (SoftmaxCrossEntropy) and
// the optimizer's AdamW update and squared gradient norm (AdamW,
// SumSquares).
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
// with -tags purego compiles no assembly at all. A SIMDGPT_ISA this build
// or CPU cannot honour (spaces around the value are ignored) leaves the
// automatic choice in place, prints one line on stderr and is reported by
// EnvError; the package never ends the process.
//
// # Where each kernel lives
//
// Every kernel's signature is written once, in the list of
// kernels/internal/apigen, which generates the Set type of
// kernels/internal/kernelset (the one kernel list every implementation
// provides), the generic set's wiring, the package-level functions and
// the benchmarks' kernel fields; dispatch, Implementations, the benchmarks'
// implementation lists and the tests that every kernel is wired and has a
// parity test (set_test.go) derive from it. A kernel family FAMILY (gemm,
// gemv, lowbit, softmax, scores, vecops, optim, xent, gelu, layernorm) is
// found, one file each, at:
//
//	kernels/FAMILY.go              public API: the checked Impl methods (package functions: api_gen.go)
//	kernels/FAMILY_test.go         parity and edge tests (and FAMILY_fuzz_test.go, FAMILY_guard_test.go)
//	kernels/internal/generic/FAMILY.go the pure-Go reference
//	kernels/internal/FAMILY/       the driver every ISA shares, for the families
//	                               that split work between kernels (gemm, lowbit,
//	                               layernorm, xent)
//	asm/gen/FAMILY/                the avo generator (NEON: asm/gen/neon/FAMILY.go)
//	kernels/amd64/FAMILY_amd64.s   generated assembly (kernels/arm64/FAMILY_arm64.s)
//	kernels/amd64/FAMILY.go        Go around the assembly where a set needs it, such as a row
//	                               loop's tail (kernels/arm64/FAMILY.go: neon); the wiring
//	                               into the sets is generated (sets_gen.go, families_gen.go)
//
// The generators and the generated files exist for the families with
// assembly of their own: gemm, lowbit, softmax, vecops, optim, gelu and
// layernorm, and for skinny, the few-rows kernels of the GEMM driver (each amd64 generator writes FAMILY_amd64.s and FAMILY_stubs_amd64.go;
// what they share is asm/gen/internal/x86). Two families run the kernels
// of others and have no generator or assembly: MaskedScores (scores) runs
// on the GEMM micro-kernels, its driver kernels/internal/gemm/scores.go
// beside the GEMM driver (gemm.go); Gemv (gemv) runs on the skinny
// kernels of that driver (kernels/internal/gemm/skinny.go), which also
// take Gemm's products with few rows of op(A); SoftmaxCrossEntropy (xent) runs the
// softmax's exponential pass (softmaxExpRow on amd64, the NEON softmax's
// passes on arm64) and the Scale kernel under one row loop,
// kernels/internal/xent. Each SIMD set's literal (which function gives
// each kernel) is generated from the list of kernels, in
// kernels/amd64/sets_gen.go and kernels/arm64/sets_gen.go; each set is
// registered in kernels/amd64/amd64.go and kernels/arm64/arm64.go.
//
// The package-level functions are safe for concurrent use. Kernels do not
// allocate per call once warm (Gemm keeps its packing buffers for reuse).
package kernels
