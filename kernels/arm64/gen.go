package arm64

// The generator lives in its own module (asm/gen); go -C runs it from there.

//go:generate go -C ../../asm/gen run ./neon -dir ../../kernels/arm64
