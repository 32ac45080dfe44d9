package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/simdgpt/simdgpt/asm/gen/internal/x86"
)

// The one-row BF16 product on AVX512_BF16 (lowbitBF16Pair1AVX512) and the
// split of x it reads (lowbitSplitBF16AVX512).
//
// x is scaled by a power of two that puts max|x| in [2⁶³, 2⁶⁴) and held as
// two bfloat16 vectors, hi = bf16(v) and lo = bf16(v - hi) for v = scale·x
// (each rounded to nearest even; v - hi is exact), in the interleaved
// order of W's groups, and every 64-byte group of a row of W is loaded
// once and multiplied by both with one VDPBF16PS each (16 lanes, each
// adding the products of a word's two bfloat16, exact in float32, to a
// float32 accumulator). Per 64 bytes of W that is one load and two
// instructions, where converting W to float32 takes five on ZMM (load,
// shift, mask, two FMAs) and ten on YMM: decoding streams W from memory,
// and the fewer instructions wait on a line of W, the more lines the core
// keeps in flight.
//
// VDPBF16PS counts subnormal inputs as 0 and flushes subnormal results to
// 0, whatever MXCSR says. The split refuses an x with a part it would
// drop; the scale keeps the products of hi and lo with normal weights far
// from both ends of float32's range (a product overflows only for weights
// near 2⁶⁴/K and beyond, and then the sum is not finite); the kernel tests
// each line of W for subnormal weights and leaves a row that has one, or
// whose sum is not finite, to the float32 kernel. Its sum divided by the
// scale (exactly, in float64, with alpha) is the product's.
//
// Go's assembler does not know VDPBF16PS, so the kernel encodes it as
// bytes (vdpbf16ps below) and uses physical registers throughout.

// pairRows is the number of rows of W the pair kernel takes at once.
const pairRows = 8

// pairLeave is the VFPCLASS class set of the sums whose row the pair
// kernel leaves to the float32 kernel: QNaN, +Inf, -Inf and SNaN.
const pairLeave = 0x99

// pairKernel generates lowbitBF16Pair1AVX512.
func pairKernel() {
	name := "lowbitBF16Pair1AVX512"
	x86.Func(name, "lowbitBF16Pair",
		name+" sets c[j] = float32(alpha*Σ_p (hi[p]+lo[p])*w_j[p]) + beta*c[j] for j < rows (rows >= 1),",
		"W's row j ldw bytes after row j-1 (row 0 at w) holding groups (>= 1) whole BF16 groups,",
		"hi = x[0:] and lo = x[ldx:] (uint16 elements) as many groups of bfloat16 in the same",
		"interleaved order, not reading c when beta is ±0. The sum is float32 (VDPBF16PS), its",
		"product with alpha exact in float64 and rounded once. Rows go 8 at a time, then one at a",
		"time; a block with a row whose sum is not finite or whose weights hold a subnormal is",
		"not stored, and the kernel returns the rows stored before it (rows when every block was",
		"stored). The 8-row blocks may also leave a block for a zero weight. Requires AVX-512F,",
		"AVX512VL, AVX512DQ, AVX512BW and AVX512_BF16. Arguments are not checked.")

	rows, groups := reg.RDI, reg.R10
	wb, ldw, ldw3 := reg.RSI, reg.RCX, reg.RDX
	r0, r4 := reg.RAX, reg.RBX // rows 0-3 and 4-7 of a block
	xp, ldx := reg.R8, reg.R9
	cp, done, bits := reg.R11, reg.R12, reg.R13
	alpha, beta := reg.Z28, reg.Z29
	expo, mant := reg.Z30, reg.Z31 // a bfloat16's exponent and mantissa bits
	xhi, xlo := reg.Z16, reg.Z17
	accHi := []reg.VecPhysical{reg.Z0, reg.Z1, reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7}
	accLo := []reg.VecPhysical{reg.Z8, reg.Z9, reg.Z10, reg.Z11, reg.Z12, reg.Z13, reg.Z14, reg.Z15}
	// kBad accumulates the words that held a subnormal (exact test), kOK
	// the word lanes whose exponent was never zero (cheap test), kT is a
	// temporary.
	kBad, kT := reg.K2, reg.K3
	kOK := []reg.OpmaskPhysical{reg.K1, reg.K4, reg.K5, reg.K6, reg.K7}

	Load(Param("rows"), rows)
	Load(Param("w"), wb)
	Load(Param("ldw"), ldw)
	LEAQ(Mem{Base: ldw, Index: ldw, Scale: 2}, ldw3)
	Load(Param("ldx"), ldx)
	SHLQ(U8(1), ldx)
	Load(Param("c"), cp)
	MOVL(U32(0x7f807f80), done.As32())
	VPBROADCASTD(done.As32(), expo)
	MOVL(U32(0x007f007f), done.As32())
	VPBROADCASTD(done.As32(), mant)
	XORQ(done, done)
	VBROADCASTSD(x86.Addr(Param("alpha")), alpha)
	VBROADCASTSS(x86.Addr(Param("beta")), beta)
	// bits: beta's magnitude bits, 0 when beta is ±0 (c is then not read).
	MOVL(x86.Addr(Param("beta")), bits.As32())
	ANDL(U32(0x7fffffff), bits.As32())

	rowAt := func(j int) Mem {
		if j >= 4 {
			return x86.RowAt(r4, ldw, ldw3, j-4, 0)
		}
		return x86.RowAt(r0, ldw, ldw3, j, 0)
	}
	lines := []reg.VecPhysical{reg.Z18, reg.Z19, reg.Z20, reg.Z21}
	// exact adds the words of line l that hold a subnormal to kBad.
	exact := func(j int, l reg.VecPhysical) {
		VPTESTNMW(l, expo, kT)
		VPTESTMW(l, mant, kT, kT)
		KORD(kT, kBad, kBad)
	}
	// cheap clears in kOK the word lanes of line l (of row j) whose
	// exponent is 0: a subnormal, or a zero. One instruction a line keeps
	// the loop as fast as without a test where W comes from memory; the
	// zeros it also finds send a block to the one-row loop, whose test is
	// exact.
	cheap := func(j int, l reg.VecPhysical) {
		k := kOK[j%len(kOK)]
		VPTESTMW(l, expo, k, k)
	}
	// body multiplies one group of n rows by hi and lo and tests the
	// weights with test.
	body := func(n int, test func(int, reg.VecPhysical)) {
		VMOVDQU64(Mem{Base: xp}, xhi)
		VMOVDQU64(Mem{Base: xp, Index: ldx, Scale: 1}, xlo)
		for j := 0; j < n; j++ {
			l := lines[j%len(lines)]
			VMOVDQU64(rowAt(j), l)
			x86.VDPBF16PS(l, xhi, accHi[j])
			x86.VDPBF16PS(l, xlo, accLo[j])
			test(j, l)
		}
	}
	// groupLoop multiplies every group of n rows by hi and lo, leaving
	// in kBad the words that held a subnormal weight in the groups tested
	// exactly and, with the cheap test (the last group always exact), in
	// kOK[0] the word lanes whose exponent was never 0 in the others.
	groupLoop := func(label string, n int, fast bool) {
		for j := 0; j < n; j++ {
			VPXORD(accHi[j], accHi[j], accHi[j])
			VPXORD(accLo[j], accLo[j], accLo[j])
		}
		KXORD(kBad, kBad, kBad)
		MOVQ(wb, r0)
		if n > 4 {
			LEAQ(Mem{Base: wb, Index: ldw, Scale: 4}, r4)
		}
		Load(Param("x"), xp)
		Load(Param("groups"), groups)
		test := exact
		if fast {
			for _, k := range kOK {
				KXNORD(k, k, k)
			}
			DECQ(groups)
			test = cheap
		}
		Label(label)
		TESTQ(groups, groups)
		JZ(LabelRef(label + "_end"))
		body(n, test)
		ADDQ(U32(64), r0)
		if n > 4 {
			ADDQ(U32(64), r4)
		}
		ADDQ(U32(64), xp)
		DECQ(groups)
		JMP(LabelRef(label))
		Label(label + "_end")
		if fast {
			// The last group, which may end in zeros (K's padding).
			body(n, exact)
			for _, k := range kOK[1:] {
				KANDD(k, kOK[0], kOK[0])
			}
		}
		for j := 0; j < n; j++ {
			VADDPS(accLo[j], accHi[j], accHi[j])
		}
	}

	// Blocks of 8 rows.
	Label(name + "_rows8")
	CMPQ(rows, U32(pairRows))
	JB(LabelRef(name + "_rows1"))
	groupLoop(name+"_g8", pairRows, true)
	sums := reduce8(accHi)
	VFPCLASSPSY(U8(pairLeave), sums, kT)
	KORTESTB(kT, kT)
	JNZ(LabelRef(name + "_leave"))
	KORTESTD(kBad, kBad)
	JNZ(LabelRef(name + "_leave"))
	KORTESTD(kOK[0], kOK[0]) // CF: all ones
	JCC(LabelRef(name + "_leave"))
	// c = float32(alpha*v) + beta*c, c read only when beta is not ±0.
	wide := reg.Z21
	VCVTPS2PD(sums, wide)
	VMULPD(alpha, wide, wide)
	VCVTPD2PS(wide, sums)
	TESTL(bits.As32(), bits.As32())
	JZ(LabelRef(name + "_store8"))
	VFMADD231PS(Mem{Base: cp}, beta.AsY(), sums)
	Label(name + "_store8")
	VMOVUPS(sums, Mem{Base: cp})
	ADDQ(U32(4*pairRows), cp)
	LEAQ(Mem{Base: wb, Index: ldw, Scale: 8}, wb)
	ADDQ(U32(pairRows), done)
	SUBQ(U32(pairRows), rows)
	JMP(LabelRef(name + "_rows8"))

	// The remaining rows, one at a time, reduced in the same order as a
	// block's (reduce8), so that a row's result does not depend on its
	// block.
	Label(name + "_rows1")
	TESTQ(rows, rows)
	JZ(LabelRef(name + "_done"))
	groupLoop(name+"_g1", 1, false)
	s := reduce1(accHi[0], reg.Z18)
	VFPCLASSSS(U8(pairLeave), s, kT)
	KORTESTB(kT, kT)
	JNZ(LabelRef(name + "_leave"))
	KORTESTD(kBad, kBad)
	JNZ(LabelRef(name + "_leave"))
	VCVTSS2SD(s, s, s)
	VMULSD(alpha.AsX(), s, s)
	VCVTSD2SS(s, s, s)
	TESTL(bits.As32(), bits.As32())
	JZ(LabelRef(name + "_store1"))
	VFMADD231SS(Mem{Base: cp}, beta.AsX(), s)
	Label(name + "_store1")
	VMOVSS(s, Mem{Base: cp})
	ADDQ(U32(4), cp)
	ADDQ(ldw, wb)
	INCQ(done)
	DECQ(rows)
	JMP(LabelRef(name + "_rows1"))

	Label(name + "_leave")
	Label(name + "_done")
	Store(done, ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// reduce8 adds the 16 lanes of each of the 8 accumulators and returns the
// 8 sums in one YMM register, acc[j]'s in lane j. Each sum is
// ((l0+l2)+(l1+l3)) over the 128-bit lanes l, then (e0+e1)+(e2+e3) within
// one, as reduce1 adds one accumulator. It overwrites Z18-Z27.
func reduce8(acc []reg.VecPhysical) reg.Register {
	t := []reg.VecPhysical{reg.Z18, reg.Z19, reg.Z20, reg.Z21, reg.Z22, reg.Z23, reg.Z24, reg.Z25}
	// Pairs of rows: [a.l0+a.l2, a.l1+a.l3, b.l0+b.l2, b.l1+b.l3].
	for q := 0; q < 4; q++ {
		a, b := acc[2*q], acc[2*q+1]
		VSHUFF32X4(U8(0x44), b, a, t[2*q])   // a.l0 a.l1 b.l0 b.l1
		VSHUFF32X4(U8(0xee), b, a, t[2*q+1]) // a.l2 a.l3 b.l2 b.l3
		VADDPS(t[2*q+1], t[2*q], acc[q])
	}
	// Quads of rows: [r0, r1, r2, r3] (128-bit lanes, each a row's
	// (l0+l2)+(l1+l3)) in acc[0] and rows 4-7 in acc[2].
	for q := 0; q < 2; q++ {
		a, b := acc[2*q], acc[2*q+1]
		VSHUFF32X4(U8(0x88), b, a, t[0]) // lanes 0 and 2 of a, then of b
		VSHUFF32X4(U8(0xdd), b, a, t[1]) // lanes 1 and 3
		VADDPS(t[1], t[0], acc[2*q])
	}
	// Within each 128-bit lane: [e0+e1, e2+e3] of rows 0-3 and 4-7, then
	// their sum in elements 0 and 2 (rows 0-3 in 0, rows 4-7 in 2).
	lo, hi := acc[0], acc[2]
	VSHUFPS(U8(0x88), hi, lo, t[0]) // lo.e0 lo.e2 hi.e0 hi.e2
	VSHUFPS(U8(0xdd), hi, lo, t[1]) // lo.e1 lo.e3 hi.e1 hi.e3
	VADDPS(t[1], t[0], t[0])        // lo.e0+e1, lo.e2+e3, hi.e0+e1, hi.e2+e3
	VPERMILPS(U8(0xb1), t[0], t[1]) // the pairs swapped
	VADDPS(t[1], t[0], t[0])
	// Lane l element 0 is row l, element 2 row 4+l.
	VMOVDQU32(pairGather, t[1])
	VPERMPS(t[0], t[1], t[2])
	return t[2].AsY()
}

// reduce1 adds the 16 lanes of acc as reduce8 does one of its
// accumulators and returns the sum in lane 0 of an XMM register; t is
// overwritten.
func reduce1(acc, t reg.VecPhysical) reg.Register {
	VEXTRACTF32X8(U8(1), acc, t.AsY())
	VADDPS(t.AsY(), acc.AsY(), acc.AsY()) // l0+l2, l1+l3
	VEXTRACTF32X4(U8(1), acc.AsY(), t.AsX())
	VADDPS(t.AsX(), acc.AsX(), acc.AsX()) // (l0+l2)+(l1+l3)
	VMOVSHDUP(acc.AsX(), t.AsX())
	VADDPS(t.AsX(), acc.AsX(), acc.AsX()) // e0+e1, ., e2+e3, .
	VMOVHLPS(acc.AsX(), t.AsX(), t.AsX())
	VADDSS(t.AsX(), acc.AsX(), acc.AsX())
	return acc.AsX()
}

var pairGather Mem

// pairGatherTable is the VPERMPS index of reduce8's last step: row l < 4
// in element 4l, row 4+l in element 4l+2.
func pairGatherTable() {
	pairGather = GLOBL("lowbitPairGather", RODATA|NOPTR)
	for i, v := range []uint32{0, 4, 8, 12, 2, 6, 10, 14, 0, 0, 0, 0, 0, 0, 0, 0} {
		DATA(4*i, U32(v))
	}
}

var splitConsts Mem

// splitConstsTable holds the split's constants, 4 bytes each: the
// rounding bias 0x7fff, the bit 1, the mask of a float32's upper 16 bits,
// the mask of its magnitude and the mask of its exponent.
func splitConstsTable() {
	splitConsts = GLOBL("lowbitSplitConsts", RODATA|NOPTR)
	for i, v := range []uint32{0x7fff, 1, 0xffff0000, 0x7fffffff, 0x7f800000} {
		DATA(4*i, U32(v))
	}
}

// splitScaleMax is the binade [2^splitScaleMax, 2^(splitScaleMax+1)) the
// split moves max|x| into, when the scale that takes it there is a
// float32 (max|x| >= 2^(splitScaleMax-127)).
const splitScaleMax = 63

// splitKernel generates lowbitSplitBF16AVX512.
func splitKernel() {
	name := "lowbitSplitBF16AVX512"
	x86.Func(name, "lowbitSplitBF16",
		name+" writes hi = bf16(v) to out[0:] and lo = bf16(v - hi) to out[ldo:] for v = scale·x,",
		"both rounded to nearest even, for groups whole groups of 32 elements of x and, when tail",
		"is not 0, one more group of the elements of x its bits select (bit l of the group's",
		"element l, the others taken as 0), in BF16's interleaved order: element 2d of a group",
		"holds element d, element 2d+1 element 16+d. scale is the power of two that moves max|x|",
		fmt.Sprintf("into [2^%d, 2^%d), or 2^127 when max|x| is below 2^%d. It reports ok = false,", splitScaleMax, splitScaleMax+1, splitScaleMax-127),
		"without writing out, when an element of x is not finite, and when a nonzero element's v or",
		"lo has a zero exponent (VDPBF16PS would count the part as 0); out then holds the parts.",
		"Requires AVX-512F, AVX512DQ and AVX512BW. Arguments are not checked.")
	n := x86.Arg("groups")
	xp := x86.Arg("x")
	ldo := x86.Arg("ldo")
	SHLQ(U8(1), ldo)
	bias, one, upper, abs, expo := ZMM(), ZMM(), ZMM(), ZMM(), ZMM()
	VPBROADCASTD(splitConsts.Offset(12), abs)
	k1, k2 := K(), K()
	bits := GP32()
	MOVL(x86.Addr(Param("tail")), bits)
	KMOVW(bits, k1)
	SHRL(U8(16), bits)
	KMOVW(bits, k2)

	// Pass 1: max|x| and whether an element is not finite.
	maxv, bad := ZMM(), ZMM()
	VPXORD(maxv, maxv, maxv)
	VPXORD(bad, bad, bad)
	scan := func(a, b reg.VecVirtual) {
		for _, v := range []reg.VecVirtual{a, b} {
			t := ZMM()
			VSUBPS(v, v, t) // 0, or NaN when v is not finite
			VPORD(t, bad, bad)
			VPANDD(abs, v, t)
			VMAXPS(t, maxv, maxv)
		}
	}
	p, g := GP64(), GP64()
	MOVQ(xp, p)
	MOVQ(n, g)
	Label(name + "_max")
	TESTQ(g, g)
	JZ(LabelRef(name + "_maxtail"))
	a, b := ZMM(), ZMM()
	VMOVUPS(Mem{Base: p}, a)
	VMOVUPS(Mem{Base: p, Disp: 64}, b)
	scan(a, b)
	ADDQ(U32(128), p)
	DECQ(g)
	JMP(LabelRef(name + "_max"))
	Label(name + "_maxtail")
	ta, tb := ZMM(), ZMM()
	VMOVUPS_Z(Mem{Base: p}, k1, ta)
	VMOVUPS_Z(Mem{Base: p, Disp: 64}, k2, tb)
	scan(ta, tb)
	t := ZMM()
	VEXTRACTI32X8(U8(1), bad, t.AsY())
	VPOR(t.AsY(), bad.AsY(), bad.AsY())
	VEXTRACTI128(U8(1), bad.AsY(), t.AsX())
	VPOR(t.AsX(), bad.AsX(), bad.AsX())
	VPSHUFD(U8(0x4e), bad.AsX(), t.AsX())
	VPOR(t.AsX(), bad.AsX(), bad.AsX())
	VPSHUFD(U8(0xb1), bad.AsX(), t.AsX())
	VPOR(t.AsX(), bad.AsX(), bad.AsX())
	ok := GP32()
	XORL(ok, ok)
	kb := K()
	VPTESTMD(bad.AsX(), bad.AsX(), kb)
	KORTESTB(kb, kb)
	JNZ(LabelRef(name + "_ret"))
	VEXTRACTF32X8(U8(1), maxv, t.AsY())
	VMAXPS(t.AsY(), maxv.AsY(), maxv.AsY())
	VEXTRACTF32X4(U8(1), maxv.AsY(), t.AsX())
	VMAXPS(t.AsX(), maxv.AsX(), maxv.AsX())
	VMOVHLPS(maxv.AsX(), t.AsX(), t.AsX())
	VMAXPS(t.AsX(), maxv.AsX(), maxv.AsX())
	VMOVSHDUP(maxv.AsX(), t.AsX())
	VMAXSS(t.AsX(), maxv.AsX(), maxv.AsX())
	// scale's biased exponent: min(127+splitScaleMax+(127-E), 254) for
	// max|x|'s biased exponent E.
	e, sc := GP32(), GP32()
	VMOVD(maxv.AsX(), e)
	SHRL(U8(23), e)
	MOVL(U32(254+splitScaleMax), sc)
	SUBL(e, sc)
	MOVL(U32(254), e)
	CMPL(sc, e)
	CMOVLGT(e, sc)
	SHLL(U8(23), sc)
	MOVL(sc, x86.Ret(0))
	scale := ZMM()
	VPBROADCASTD(sc, scale)

	// Pass 2: the split of scale·x.
	VPBROADCASTD(splitConsts.Offset(0), bias)
	VPBROADCASTD(splitConsts.Offset(4), one)
	VPBROADCASTD(splitConsts.Offset(8), upper)
	VPBROADCASTD(splitConsts.Offset(16), expo)
	op := x86.Arg("out")
	tiny := K()
	KXORW(tiny, tiny, tiny)
	// rne returns v rounded to bfloat16 (nearest even), as a float32
	// whose low 16 bits are 0.
	rne := func(v reg.VecVirtual) reg.VecVirtual {
		t, u := ZMM(), ZMM()
		VPSRLD(U8(16), v, t)
		VPANDD(one, t, t)
		VPADDD(bias, v, u)
		VPADDD(t, u, u)
		VPANDD(upper, u, u)
		return u
	}
	// zeroExp adds to tiny the lanes of v whose exponent is 0 where nz
	// is not 0.
	zeroExp := func(v, nz reg.VecVirtual) {
		k := K()
		VPTESTNMD(expo, v, k)
		VPTESTMD(abs, nz, k, k)
		KORW(k, tiny, tiny)
	}
	// group splits the 32 elements in a and b (x[0:16] and x[16:32] of
	// the group) and stores them at out.
	group := func(a, b reg.VecVirtual) {
		va, vb := ZMM(), ZMM()
		VMULPS(scale, a, va)
		VMULPS(scale, b, vb)
		zeroExp(va, a)
		zeroExp(vb, b)
		ha, hb := rne(va), rne(vb)
		VSUBPS(ha, va, va) // exact
		VSUBPS(hb, vb, vb)
		la, lb := rne(va), rne(vb)
		zeroExp(la, la)
		zeroExp(lb, lb)
		for _, p := range []struct {
			a, b reg.VecVirtual
			at   Mem
		}{{ha, hb, Mem{Base: op}}, {la, lb, Mem{Base: op, Index: ldo, Scale: 1}}} {
			VPSRLD(U8(16), p.a, p.a)
			VPORD(p.b, p.a, p.a)
			VMOVDQU32(p.a, p.at)
		}
	}
	Label(name + "_g")
	TESTQ(n, n)
	JZ(LabelRef(name + "_tail"))
	a2, b2 := ZMM(), ZMM()
	VMOVUPS(Mem{Base: xp}, a2)
	VMOVUPS(Mem{Base: xp, Disp: 64}, b2)
	group(a2, b2)
	ADDQ(U32(128), xp)
	ADDQ(U32(64), op)
	DECQ(n)
	JMP(LabelRef(name + "_g"))

	Label(name + "_tail")
	MOVL(x86.Addr(Param("tail")), bits)
	TESTL(bits, bits)
	JZ(LabelRef(name + "_check"))
	ta2, tb2 := ZMM(), ZMM()
	VMOVUPS_Z(Mem{Base: xp}, k1, ta2)
	VMOVUPS_Z(Mem{Base: xp, Disp: 64}, k2, tb2)
	group(ta2, tb2)

	Label(name + "_check")
	KORTESTW(tiny, tiny)
	SETEQ(ok.As8())
	Label(name + "_ret")
	MOVB(ok.As8(), x86.Ret(1))
	VZEROUPPER()
	RET()
}
