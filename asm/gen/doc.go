// Command-line generators for simdgpt's amd64 assembly, written with avo
// (github.com/mmcloughlin/avo). This is its own module so that avo never
// becomes a dependency of github.com/simdgpt/simdgpt.
//
// Each subdirectory is one program that writes one kernels/amd64/*_amd64.s
// file and its Go stub file; kernels/amd64/gen.go runs them all through
// go generate. Never edit the generated files by hand.
package gen
