package kernels

// The kernels' signatures are listed once, in internal/apigen/kernels.go;
// the package-level functions (api_gen.go), genericSet (generic_gen.go),
// kernelset.Set, bench.KernelFuncs, the SIMD sets' literals and README's
// kernel table are generated from that list.
//go:generate go run ./internal/apigen
