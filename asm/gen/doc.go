// Command-line generators for simdgpt's amd64 assembly, written with avo
// (github.com/mmcloughlin/avo). This is its own module so that avo never
// becomes a dependency of github.com/simdgpt/simdgpt.
//
// Each subdirectory but amd64, neon and internal is one program that
// writes one kernels/amd64/*_amd64.s file and its unexported Go stubs
// (gemm also the driver's kernel tables, gemm_kernels_amd64.go); amd64
// finds and runs all of them; neon writes every
// kernels/arm64/*_arm64.s, its unexported Go stubs, and the Go constants
// and tables they need.
// kernels/amd64/gen.go (through amd64) and kernels/arm64/gen.go run them
// through go generate, one line each. Never edit the generated files by hand.
//
// Every assembly function's Go signature is written once, for both
// architectures, in the list internal/entry (generated from the module
// above's kernels/internal/apigen/kernels.go), which the avo generators
// and neon read. The amd64 generators share internal/x86 (the two vector widths, function
// headers, argument loads, tail masks, row loops, constant tables and
// reductions) and internal/vexp (the vectorised exponential); the
// exponential's constants, internal/expf, are shared with neon.
package gen
