//go:build arm64 && !purego

package arm64

// fmaPeakNEON runs n iterations of 24 independent vector FMAs (192 float32
// flops per iteration), for measuring the peak FMA rate. Requires ASIMD.
//
//go:noescape
func fmaPeakNEON(n int)
