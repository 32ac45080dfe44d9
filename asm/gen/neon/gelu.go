package main

import "github.com/simdgpt/simdgpt/asm/gen/internal/expf"

// GELU kernels (tanh form), the NEON version of asm/gen/gelu (read its
// package comment for the formula, the clamps and the special values):
//
//	geluRowNEON(dst, x)             dst[j] = gelu(x[j])
//	geluBackwardRowNEON(dx, dy, x)  dx[j] = dy[j]·gelu'(x[j])
//	biasGeluRowNEON(y, x, bias)     x[j] += bias[j]; y[j] = gelu(x[j])
//
// for j < len(x), which must be a multiple of 4: the Go side
// (kernels/arm64/gelu.go) passes the last 1-3 elements through a padded
// 4-element buffer, so every element takes the same arithmetic. Per
// vector of 4:
//
//	xs = fmax(x, -20); xc = fmin(xs, 20)        (FMAX/FMIN keep NaN)
//	t  = |xc|·(-2c - 2ca·xc²)
//	e  = exp(t) in the lanes with t >= expMin, else 0 (expSteps, far)
//	s  = 1/(1+e) (FDIV); es = e·s
//	σ  = xc >= 0 ? s : es (BSL)
//	gelu = xs·σ; gelu' = σ + (xc·es·s)·(2c + 6ca·xc²)
//
// Registers: constants in V12-V31 (below), the vector's values in V0-V11.
const (
	gNegK1 = 12 // -2c
	gNegK2 = 13 // -2ca
	gK1    = 14 // 2c
	gK3    = 15 // 6ca
	// V16-V25: log2e, shifter, ln2Hi, ln2Lo, poly[0..5] (vLog2e...).
	gExpMin   = 26
	gOne      = 27
	gNegClamp = 28
	gClamp    = 29
	gAbs      = 30
	gZero     = 31
)

// GELU's constants (asm/gen/gelu).
const (
	geluC     = 0.7978845608028654 // √(2/π)
	geluA     = 0.044715
	geluClamp = 20
)

func gelu() *file {
	f := newFile("gelu_arm64.s")
	f.geluKernel("geluRowNEON", "func geluRowNEON(dst, x []float32)", 48, "forward")
	f.geluKernel("geluBackwardRowNEON", "func geluBackwardRowNEON(dx, dy, x []float32)", 72, "backward")
	f.geluKernel("biasGeluRowNEON", "func biasGeluRowNEON(y, x, bias []float32)", 72, "bias")
	return f
}

// geluKernel emits one kernel; mode is "forward", "backward" or "bias".
func (f *file) geluKernel(name, sig string, argSize int, mode string) {
	f.text(name, argSize, sig, "len(x) must be a multiple of 4; see asm/gen/neon/gelu.go.")
	// R0: x, R1: output, R3: dy or bias, R2: count.
	switch mode {
	case "forward":
		f.op("MOVD dst_base+0(FP), R1")
		f.op("MOVD x_base+24(FP), R0")
		f.op("MOVD x_len+32(FP), R2")
	case "backward":
		f.op("MOVD dx_base+0(FP), R1")
		f.op("MOVD dy_base+24(FP), R3")
		f.op("MOVD x_base+48(FP), R0")
		f.op("MOVD x_len+56(FP), R2")
	case "bias":
		f.op("MOVD y_base+0(FP), R1")
		f.op("MOVD x_base+24(FP), R0")
		f.op("MOVD x_len+32(FP), R2")
		f.op("MOVD bias_base+48(FP), R3")
	}
	f.dupConst(gNegK1, -2*geluC)
	f.dupConst(gNegK2, -2*geluC*geluA)
	if mode == "backward" {
		f.dupConst(gK1, 2*geluC)
		f.dupConst(gK3, 6*geluC*geluA)
	}
	f.dupConst(vLog2e, log2e)
	f.dupConst(vShifter, shifter)
	f.dupConst(vLn2Hi, ln2Hi)
	f.dupConst(vLn2Lo, ln2Lo)
	for i, c := range poly {
		f.dupConst(vPoly+i, c)
	}
	f.dupConst(gExpMin, expf.ExpMin)
	f.dupConst(gOne, 1)
	f.dupConst(gNegClamp, -geluClamp)
	f.dupConst(gClamp, geluClamp)
	f.op("MOVW $0x7fffffff, R7")
	f.op("VDUP R7, V%d.S4", gAbs)
	f.zero(gZero, 1)

	g := expRegs{x: 5, z: 7, e: 10, kf: 8, r: 9, keep: 6, zInit: vShifter,
		log2e: vLog2e, shifter: vShifter, ln2Hi: vLn2Hi, ln2Lo: vLn2Lo, poly: vPoly}
	f.counted("gelu_loop", "R2", 4, func() {
		if mode == "bias" {
			f.op("VLD1 (R0), [V0.S4]")
			f.op("VLD1.P 16(R3), [V1.S4]")
			f.w(fadd4s(0, 0, 1))
			f.op("VST1.P [V0.S4], 16(R0)")
		} else {
			f.op("VLD1.P 16(R0), [V0.S4]")
		}
		f.w(fmax4s(1, 0, gNegClamp)) // xs
		f.w(fmin4s(2, 1, gClamp))    // xc
		f.w(fmul4s(3, 2, 2))         // xc²
		f.op("VMOV V%d.B16, V4.B16", gNegK1)
		f.op("VFMLA V3.S4, V%d.S4, V4.S4", gNegK2) // -2c - 2ca·xc²
		f.op("VAND V%d.B16, V2.B16, V5.B16", gAbs)
		f.w(fmul4s(5, 5, 4))        // t
		f.w(fcmge4s(6, 5, gExpMin)) // keep
		for _, s := range f.expSteps(g, true) {
			s(0)
		}
		f.w(fadd4s(4, 10, gOne)) // 1 + e
		f.w(fdiv4s(5, gOne, 4))  // s
		f.w(fmul4s(10, 10, 5))   // es
		if mode == "backward" {
			f.w(fmul4s(11, 10, 5)) // q = es·s
		}
		f.w(fcmge4s(6, 2, gZero))            // xc >= 0
		f.op("VBSL V10.B16, V5.B16, V6.B16") // σ
		if mode != "backward" {
			f.w(fmul4s(6, 1, 6))
			f.op("VST1.P [V6.S4], 16(R1)")
			return
		}
		f.op("VMOV V%d.B16, V4.B16", gK1)
		f.op("VFMLA V3.S4, V%d.S4, V4.S4", gK3) // h = 2c + 6ca·xc²
		f.w(fmul4s(11, 2, 11))                  // xc·q
		f.op("VFMLA V11.S4, V4.S4, V6.S4")      // σ + xc·q·h
		f.op("VLD1.P 16(R3), [V7.S4]")
		f.w(fmul4s(6, 6, 7))
		f.op("VST1.P [V6.S4], 16(R1)")
	})
	f.op("RET")
}
