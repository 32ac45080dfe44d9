package amd64

// The generators live in their own module (asm/gen) so that avo is never a
// dependency of this one; go -C runs each from there.

//go:generate go -C ../../asm/gen run ./peak -out ../../kernels/amd64/peak_amd64.s -stubs ../../kernels/amd64/peak_amd64.go -pkg amd64
//go:generate go -C ../../asm/gen run ./gemm -out ../../kernels/amd64/gemm_amd64.s -stubs ../../kernels/amd64/gemm_amd64.go -pkg amd64
//go:generate go -C ../../asm/gen run ./vecops -out ../../kernels/amd64/vecops_amd64.s -stubs ../../kernels/amd64/vecops_amd64.go -pkg amd64
//go:generate go -C ../../asm/gen run ./softmax -out ../../kernels/amd64/softmax_amd64.s -stubs ../../kernels/amd64/softmax_amd64.go -pkg amd64
