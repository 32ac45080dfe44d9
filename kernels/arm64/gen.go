package arm64

// The generator lives in its own module (asm/gen); go -C runs it from
// there. It writes the .s files, their stubs (*_stubs_arm64.go),
// gemm_kernels_arm64.go and softmax_consts_arm64.go. The set's literal
// (sets_gen.go) comes from the list of kernels, with the rest of the
// kernels' Go, through kernels/gen.go.

//go:generate go -C ../../asm/gen run ./neon -dir ../../kernels/arm64
