package amd64

// The generators live in their own module (asm/gen) so that avo is never a
// dependency of this one; go -C runs them from there. asm/gen/amd64 runs
// every avo generator of that module (asm/gen/FAMILY): each writes
// FAMILY_amd64.s and its unexported stubs (FAMILY_stubs_amd64.go); the
// gemm generator also writes the driver's kernel tables
// (gemm_kernels_amd64.go). A new family's generator is found without
// editing this file. The sets' literals (sets_gen.go) come from the list
// of kernels, with the rest of the kernels' Go, through kernels/gen.go.

//go:generate go -C ../../asm/gen run ./amd64 -dir ../../kernels/amd64
