package amd64

// The generators live in their own module (asm/gen) so that avo is never a
// dependency of this one; go -C runs each from there. Each writes a .s
// file and its unexported stubs (*_stubs_amd64.go); the gemm generator
// also writes the driver's kernel tables (gemm_kernels_amd64.go).

//go:generate go -C ../../asm/gen run ./peak -out ../../kernels/amd64/peak_amd64.s -stubs ../../kernels/amd64/peak_stubs_amd64.go -pkg amd64
//go:generate go -C ../../asm/gen run ./gemm -table ../../kernels/amd64/gemm_kernels_amd64.go -out ../../kernels/amd64/gemm_amd64.s -stubs ../../kernels/amd64/gemm_stubs_amd64.go -pkg amd64
//go:generate go -C ../../asm/gen run ./vecops -out ../../kernels/amd64/vecops_amd64.s -stubs ../../kernels/amd64/vecops_stubs_amd64.go -pkg amd64
//go:generate go -C ../../asm/gen run ./layernorm -out ../../kernels/amd64/layernorm_amd64.s -stubs ../../kernels/amd64/layernorm_stubs_amd64.go -pkg amd64
//go:generate go -C ../../asm/gen run ./softmax -out ../../kernels/amd64/softmax_amd64.s -stubs ../../kernels/amd64/softmax_stubs_amd64.go -pkg amd64
//go:generate go -C ../../asm/gen run ./optim -out ../../kernels/amd64/optim_amd64.s -stubs ../../kernels/amd64/optim_stubs_amd64.go -pkg amd64
//go:generate go -C ../../asm/gen run ./gelu -out ../../kernels/amd64/gelu_amd64.s -stubs ../../kernels/amd64/gelu_stubs_amd64.go -pkg amd64
//go:generate go -C ../../asm/gen run ./skinny -out ../../kernels/amd64/skinny_amd64.s -stubs ../../kernels/amd64/skinny_stubs_amd64.go -pkg amd64
//go:generate go -C ../../asm/gen run ./gemmbf16 -out ../../kernels/amd64/gemmbf16_amd64.s -stubs ../../kernels/amd64/gemmbf16_stubs_amd64.go -pkg amd64
