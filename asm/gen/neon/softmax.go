package main

import (
	"fmt"
	"math"

	"github.com/simdgpt/simdgpt/asm/gen/internal/expf"
)

// Softmax kernels.
//
// expRowNEON(dst, src, c, b, thr) is pass 2 of a softmax row with the
// "near" argument reduction of asm/gen/softmax (read its package comment
// for the derivation and the error bounds; the constants and polynomial
// are the same). For each x = src[j]:
//
//	z  = x*log2e + b            b = 1.5*2^23 - j, j = round(m*log2e)
//	kf = z - 1.5*2^23           k as a float
//	w  = c + kf*ln2Hi           exact: c is a multiple of 2^-9
//	r  = (x - w) - kf*ln2Lo     |r| <= 0.3495
//	e  = p(r) * 2^k             p: degree-5 polynomial, Horner with FMA;
//	                            2^k by adding z<<23 to the bits of p(r)
//	dst[j] = e if x >= thr (thr = c + expMin) else +0
//
// and it returns the sum of the e, accumulated in float64 (each vector
// widened with FCVTL/FCVTL2 into two 2×float64 accumulators), so the sum's
// rounding error does not grow with the row. The caller (package kernels)
// computes the row maximum m, handles rows with a NaN or ±Inf maximum
// itself, and passes a length that is a multiple of 4.
//
// expRowFarNEON(dst, src, c, b, thr) is the "far" reduction, for rows with
// |m| >= 4096: the caller passes c = m, b = 1.5*2^23 and thr = expMin, and
// each x is first replaced by t = x - m, which is exact for every t >=
// expMin (x and m are then within a factor 2 of each other); then
// k = round(t*log2e) as above and r = (t - kf*ln2Hi) - kf*ln2Lo.
//
// softmaxBackwardRowNEON(dx, y, dy) computes s = sum y*dy (four FMLA
// accumulators, as dotNEON) and then dx[j] = y[j]*(dy[j] - s).

// Constants of the exponential, shared with asm/gen/softmax.
const (
	log2e   = expf.Log2E
	ln2Hi   = expf.Ln2Hi
	ln2Lo   = expf.Ln2Lo
	shifter = expf.Shifter
)

func init() { goFiles["softmax_consts_arm64.go"] = softmaxConsts }

// softmaxConsts is the Go source of the reduction constants the row
// driver (kernels/arm64/softmax.go) needs (written to
// kernels/arm64/softmax_consts_arm64.go).
func softmaxConsts() string {
	return fmt.Sprintf(`package arm64

// Constants of the softmax's argument reduction (asm/gen/internal/expf),
// shared with the kernels of softmax_arm64.s.
const (
	expShifter = %v // 1.5*2^23: b = expShifter - j
	expMin     = %v // exp is flushed to 0 below this
	expNearMax = %v // rows with |max| below this take the near reduction
)
`, shifter, expf.ExpMin, expf.NearMax)
}

// poly holds c0..c5 of exp(r) (see package expf).
var poly = expf.Poly

// Constant registers of expRowNEON.
const (
	vLog2e   = 16
	vShifter = 17
	vLn2Hi   = 18
	vLn2Lo   = 19
	vPoly    = 20 // V20..V25 hold poly[0..5]
	vC       = 26
	vB       = 27
	vThr     = 28
	vSum0    = 29 // float64 sums
	vSum1    = 30
)

// dupConst emits V(v) = x in every lane.
func (f *file) dupConst(v int, x float32) {
	f.op("MOVW $0x%08x, R7", math.Float32bits(x))
	f.op("VDUP R7, V%d.S4", v)
}

func init() { emitters = append(emitters, softmax) }

func softmax() *file {
	f := newFile("softmax_arm64.s")
	f.expRow("expRowNEON", false)
	f.expRow("expRowFarNEON", true)

	f.fn("softmaxBackwardRowNEON", "softmaxBackwardRow",
		"softmaxBackwardRowNEON sets dx[j] = y[j]*(dy[j] - s) for j < len(y), where s = sum_k y[k]*dy[k]. dx and dy must be at least as long as y (not checked); dx may be dy itself. Requires ASIMD.")
	f.op("MOVD y_base+24(FP), R0")
	f.op("MOVD dy_base+48(FP), R1")
	f.op("MOVD y_len+32(FP), R2")
	f.dot("dot", "R0", "R1", "R2")
	f.op("MOVD dx_base+0(FP), R3")
	f.op("MOVD y_base+24(FP), R0")
	f.op("MOVD dy_base+48(FP), R1")
	f.op("MOVD y_len+32(FP), R2")
	f.op("VDUP V16.S[0], V31.S4")
	f.counted("bwd_block", "R2", 16, func() {
		f.op("VLD1.P 64(R0), %s", vlist(0, 4))
		f.op("VLD1.P 64(R1), %s", vlist(4, 4))
		for i := 0; i < 4; i++ {
			f.w(fsub4s(4+i, 4+i, 31))
		}
		for i := 0; i < 4; i++ {
			f.w(fmul4s(4+i, i, 4+i))
		}
		f.op("VST1.P %s, 64(R3)", vlist(4, 4))
	})
	f.counted("bwd_single", "R2", 4, func() {
		f.op("VLD1.P 16(R0), %s", vlist(0, 1))
		f.op("VLD1.P 16(R1), %s", vlist(4, 1))
		f.w(fsub4s(4, 4, 31))
		f.w(fmul4s(4, 0, 4))
		f.op("VST1.P %s, 16(R3)", vlist(4, 1))
	})
	f.tail("bwd_tail", "R2", func() {
		f.op("FMOVS.P 4(R0), F0")
		f.op("FMOVS.P 4(R1), F1")
		f.op("FSUBS F16, F1, F1") // F1 = dy - s
		f.op("FMULS F0, F1, F1")
		f.op("FMOVS.P F1, 4(R3)")
	})
	f.op("RET")
	return f
}

// expRow emits expRowNEON (near) or expRowFarNEON (far).
func (f *file) expRow(name string, far bool) {
	doc := "expRowNEON sets dst[j] = exp(src[j] - c') for j < len(src), where c' is within 0.35 of c, and returns the sum of the results accumulated in float64. It is pass 2 of a softmax row whose maximum m has |m| < 4096: the caller passes c (j*ln2 rounded to a multiple of 2^-9, j = round(m*log2(e))), b = 1.5*2^23 - j and thr = c + expMin; entries below thr, -Inf included, give +0. src must not hold NaN or +Inf and no entry may exceed m. len(src) must be a multiple of 4 and dst at least as long; dst may be src. See asm/gen/neon/softmax.go. Requires ASIMD."
	if far {
		doc = "expRowFarNEON is expRowNEON for a row whose maximum m has |m| >= 4096: the caller passes c = m, b = 1.5*2^23 and thr = expMin, and it sets dst[j] = exp(src[j] - m) (x - m is exact wherever the result is kept), or +0 below thr. The same conditions on src and the length hold. Requires ASIMD."
	}
	kind := "expRow"
	if far {
		kind = "expRowFar"
	}
	f.fn(name, kind, doc)
	f.op("MOVD dst_base+0(FP), R1")
	f.op("MOVD src_base+24(FP), R0")
	f.op("MOVD src_len+32(FP), R2")
	f.dupConst(vLog2e, log2e)
	f.dupConst(vShifter, shifter)
	f.dupConst(vLn2Hi, ln2Hi)
	f.dupConst(vLn2Lo, ln2Lo)
	for i, c := range poly {
		f.dupConst(vPoly+i, c)
	}
	f.op("FMOVS c+48(FP), F%d", vC)
	f.op("VDUP V%d.S[0], V%d.S4", vC, vC)
	f.op("FMOVS b+52(FP), F%d", vB)
	f.op("VDUP V%d.S[0], V%d.S4", vB, vB)
	f.op("FMOVS thr+56(FP), F%d", vThr)
	f.op("VDUP V%d.S[0], V%d.S4", vThr, vThr)
	f.zero(vSum0, 2)
	f.counted("exp_pair", "R2", 8, func() {
		f.op("VLD1.P 32(R0), %s", vlist(0, 2))
		f.expVecs(2, far)
		f.op("VST1.P %s, 32(R1)", vlist(4, 2))
	})
	f.counted("exp_single", "R2", 4, func() {
		f.op("VLD1.P 16(R0), %s", vlist(0, 1))
		f.expVecs(1, far)
		f.op("VST1.P %s, 16(R1)", vlist(4, 1))
	})
	f.w(fadd2d(vSum0, vSum0, vSum1))
	f.w(faddpD(vSum0, vSum0))
	f.op("FMOVD F%d, ret+64(FP)", vSum0)
	f.op("RET")
}

// expVecs emits the exponential of nv (1 or 2) vectors of x in V0.. into
// V4.., adding them to the float64 sums. Registers of vector i: x V(i),
// z V(2+i), e V(4+i), kf V(6+i), r V(8+i), keep V(10+i); V12-V15 hold the
// widened values. The steps of the vectors are interleaved.
func (f *file) expVecs(nv int, far bool) {
	g := expRegs{x: 0, z: 2, e: 4, kf: 6, r: 8, keep: 10, zInit: vB, c: vC,
		log2e: vLog2e, shifter: vShifter, ln2Hi: vLn2Hi, ln2Lo: vLn2Lo, poly: vPoly}
	var steps []step
	if far {
		// t = x - m, exact wherever exp(t) is kept (Sterbenz), replaces x.
		steps = append(steps, f.wi(func(i int) inst { return fsub4s(g.x+i, g.x+i, vC) }))
	}
	steps = append(steps, f.wi(func(i int) inst { return fcmge4s(g.keep+i, g.x+i, vThr) }))
	steps = append(steps, f.expSteps(g, far)...)
	steps = append(steps,
		f.wi(func(i int) inst { return fcvtl(12+2*i, g.e+i) }),
		f.wi(func(i int) inst { return fcvtl2(13+2*i, g.e+i) }),
		f.wi(func(i int) inst { return fadd2d(vSum0, vSum0, 12+2*i) }),
		f.wi(func(i int) inst { return fadd2d(vSum1, vSum1, 13+2*i) }),
	)
	for _, s := range steps {
		for i := 0; i < nv; i++ {
			s(i)
		}
	}
}

// step emits one instruction for vector i (its registers offset by i).
type step func(i int)

// v returns a step printing an instruction whose register numbers are
// args, each offset by i.
func (f *file) v(s string, args ...int) step {
	return func(i int) {
		var a []any
		for _, x := range args {
			a = append(a, x+i)
		}
		f.op(s, a...)
	}
}

// wi returns a step emitting the encoded instruction g(i).
func (f *file) wi(g func(i int) inst) step { return func(i int) { f.w(g(i)) } }

// expRegs are the registers of the exponential's steps (expSteps): the
// argument x, the keep mask (set by the caller), and the temporaries z,
// kf and r, e for the result, each offset by the vector's index; zInit
// holds the addend of z (1.5*2^23 - j, or 1.5*2^23 in the far reduction),
// c the near reduction's c, and the constant registers.
type expRegs struct {
	x, z, e, kf, r, keep               int
	zInit, c                           int
	log2e, shifter, ln2Hi, ln2Lo, poly int // poly: first of poly[0..5]
}

// expSteps returns the steps of e = exp(x) (near, or far: x holds t) in
// the lanes of keep, +0 elsewhere, shared by the softmax and GELU
// kernels:
//
//	z  = zInit + x*log2e; kf = z - 1.5*2^23
//	r  = t - kf*ln2Hi (far) or x - (c + kf*ln2Hi) (near); r -= kf*ln2Lo
//	e  = p(r) by Horner (in e and kf alternately); e += z<<23; e &= keep
func (f *file) expSteps(g expRegs, far bool) []step {
	poly := func(c int) int { return g.poly + c } // register of poly[c]
	steps := []step{
		func(i int) { f.op("VMOV V%d.B16, V%d.B16", g.zInit, g.z+i) },
		func(i int) { f.op("VFMLA V%d.S4, V%d.S4, V%d.S4", g.x+i, g.log2e, g.z+i) },
		f.wi(func(i int) inst { return fsub4s(g.kf+i, g.z+i, g.shifter) }),
	}
	if far {
		// r = t - kf*ln2Hi
		steps = append(steps,
			f.v("VMOV V%d.B16, V%d.B16", g.x, g.r),
			func(i int) { f.op("VFMLS V%d.S4, V%d.S4, V%d.S4", g.kf+i, g.ln2Hi, g.r+i) },
		)
	} else {
		// r = x - (c + kf*ln2Hi)
		steps = append(steps,
			func(i int) { f.op("VMOV V%d.B16, V%d.B16", g.c, g.r+i) },
			func(i int) { f.op("VFMLA V%d.S4, V%d.S4, V%d.S4", g.kf+i, g.ln2Hi, g.r+i) },
			f.wi(func(i int) inst { return fsub4s(g.r+i, g.x+i, g.r+i) }),
		)
	}
	steps = append(steps,
		func(i int) { f.op("VFMLS V%d.S4, V%d.S4, V%d.S4", g.kf+i, g.ln2Lo, g.r+i) },
		// Horner: e = c4 + c5*r; kf = c3 + e*r; e = c2 + kf*r; kf = c1 + e*r; e = 1 + kf*r.
		func(i int) { f.op("VMOV V%d.B16, V%d.B16", poly(4), g.e+i) },
		func(i int) { f.op("VFMLA V%d.S4, V%d.S4, V%d.S4", poly(5), g.r+i, g.e+i) },
		func(i int) { f.op("VMOV V%d.B16, V%d.B16", poly(3), g.kf+i) },
		func(i int) { f.op("VFMLA V%d.S4, V%d.S4, V%d.S4", g.e+i, g.r+i, g.kf+i) },
		func(i int) { f.op("VMOV V%d.B16, V%d.B16", poly(2), g.e+i) },
		func(i int) { f.op("VFMLA V%d.S4, V%d.S4, V%d.S4", g.kf+i, g.r+i, g.e+i) },
		func(i int) { f.op("VMOV V%d.B16, V%d.B16", poly(1), g.kf+i) },
		func(i int) { f.op("VFMLA V%d.S4, V%d.S4, V%d.S4", g.e+i, g.r+i, g.kf+i) },
		func(i int) { f.op("VMOV V%d.B16, V%d.B16", poly(0), g.e+i) },
		func(i int) { f.op("VFMLA V%d.S4, V%d.S4, V%d.S4", g.kf+i, g.r+i, g.e+i) },
		f.v("VSHL $23, V%d.S4, V%d.S4", g.z, g.z),
		f.v("VADD V%d.S4, V%d.S4, V%d.S4", g.z, g.e, g.e),
		f.v("VAND V%d.B16, V%d.B16, V%d.B16", g.keep, g.e, g.e),
	)
	return steps
}
