package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/ir"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/simdgpt/simdgpt/asm/gen/internal/x86"
)

// The one-row BF16 product on AVX512_BF16 (wdotsBF16Pair1AVX512) and the
// split of x it reads (wdotsSplitBF16AVX512).
//
// x is held as two bfloat16 vectors, hi = bf16(x) and lo = bf16(x - hi)
// (each rounded to nearest even; x - hi is exact), in the interleaved order
// of W's groups, and every 64-byte group of a row of W is multiplied by
// both with one VDPBF16PS each (16 lanes, each adding the products of a
// word's two bfloat16, exact in float32, to a float32 accumulator). Per
// 64 bytes of W that is two instructions whose operand is W in memory,
// where converting W to float32 takes five on ZMM (load, shift, mask, two
// FMAs) and ten on YMM: decoding streams W from memory, and the fewer
// instructions wait on a line of W, the more lines the core keeps in
// flight.
//
// Go's assembler does not know VDPBF16PS, so the kernel encodes it as
// bytes (vdpbf16ps below) and uses physical registers throughout.

// pairRows is the number of rows of W the pair kernel takes at once.
const pairRows = 8

// pairKernel generates wdotsBF16Pair1AVX512.
func pairKernel() {
	name := "wdotsBF16Pair1AVX512"
	x86.Func(name, "func(rows, groups int, w *byte, ldw int, x *uint16, ldx int, c *float32, alpha, beta float32) (done int)",
		name+" sets c[j] = alpha*Σ_p (hi[p]+lo[p])*w_j[p] + beta*c[j] for j < rows (rows >= 1),",
		"W's row j ldw bytes after row j-1 (row 0 at w) holding groups whole BF16 groups, hi = x[0:]",
		"and lo = x[ldx:] (uint16 elements) as many groups of bfloat16 in the same interleaved order,",
		"not reading c when beta is ±0. Rows go 8 at a time, then one at a time; a block whose",
		"dot products hold a NaN is not stored, and the kernel returns the rows stored before it",
		"(rows when every block was stored). VDPBF16PS treats subnormal inputs as zero and",
		"flushes subnormal sums to zero. Requires AVX-512F, AVX512VL, AVX512DQ and AVX512_BF16.",
		"Arguments are not checked.")

	rows, groups := reg.RDI, reg.R10
	wb, ldw, ldw3 := reg.RSI, reg.RCX, reg.RDX
	r0, r4 := reg.RAX, reg.RBX // rows 0-3 and 4-7 of a block
	xp, ldx := reg.R8, reg.R9
	cp, done, bits := reg.R11, reg.R12, reg.R13
	alpha, beta := reg.Z28, reg.Z29
	xhi, xlo := reg.Z16, reg.Z17
	accHi := []reg.VecPhysical{reg.Z0, reg.Z1, reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7}
	accLo := []reg.VecPhysical{reg.Z8, reg.Z9, reg.Z10, reg.Z11, reg.Z12, reg.Z13, reg.Z14, reg.Z15}

	Load(Param("rows"), rows)
	Load(Param("w"), wb)
	Load(Param("ldw"), ldw)
	LEAQ(Mem{Base: ldw, Index: ldw, Scale: 2}, ldw3)
	Load(Param("ldx"), ldx)
	SHLQ(U8(1), ldx)
	Load(Param("c"), cp)
	XORQ(done, done)
	VBROADCASTSS(x86.Addr(Param("alpha")), alpha)
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
	// groupLoop multiplies every group of n rows by hi and lo.
	groupLoop := func(label string, n int) {
		for j := 0; j < n; j++ {
			VPXORD(accHi[j], accHi[j], accHi[j])
			VPXORD(accLo[j], accLo[j], accLo[j])
		}
		MOVQ(wb, r0)
		if n > 4 {
			LEAQ(Mem{Base: wb, Index: ldw, Scale: 4}, r4)
		}
		Load(Param("x"), xp)
		Load(Param("groups"), groups)
		Label(label)
		TESTQ(groups, groups)
		JZ(LabelRef(label + "_end"))
		VMOVDQU64(Mem{Base: xp}, xhi)
		VMOVDQU64(Mem{Base: xp, Index: ldx, Scale: 1}, xlo)
		for j := 0; j < n; j++ {
			vdpbf16ps(rowAt(j), xhi, accHi[j])
			vdpbf16ps(rowAt(j), xlo, accLo[j])
		}
		ADDQ(U32(64), r0)
		if n > 4 {
			ADDQ(U32(64), r4)
		}
		ADDQ(U32(64), xp)
		DECQ(groups)
		JMP(LabelRef(label))
		Label(label + "_end")
		for j := 0; j < n; j++ {
			VADDPS(accLo[j], accHi[j], accHi[j])
		}
	}

	// store sets c = alpha*v + beta*c (c read only when beta is not ±0)
	// with the instructions of v's width.
	store := func(label string, v reg.Register, mul, fma, mov func(...Op)) {
		a, b := alpha.AsY(), beta.AsY()
		if v.Size() == 16 {
			a, b = alpha.AsX(), beta.AsX()
		}
		mul(a, v, v)
		TESTL(bits.As32(), bits.As32())
		JZ(LabelRef(label))
		fma(Mem{Base: cp}, b, v)
		Label(label)
		mov(v, Mem{Base: cp})
	}

	// Blocks of 8 rows.
	Label(name + "_rows8")
	CMPQ(rows, U32(pairRows))
	JB(LabelRef(name + "_rows1"))
	groupLoop(name+"_g8", pairRows)
	sums := reduce8(accHi)
	VCMPPS(U8(3), sums, sums, reg.K1) // unordered: NaN
	KORTESTB(reg.K1, reg.K1)
	JNZ(LabelRef(name + "_nan"))
	store(name+"_store8", sums, VMULPS, VFMADD231PS, VMOVUPS)
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
	groupLoop(name+"_g1", 1)
	s := reduce1(accHi[0], reg.Z18)
	VUCOMISS(s, s)
	JPS(LabelRef(name + "_nan"))
	store(name+"_store1", s, VMULSS, VFMADD231SS, VMOVSS)
	ADDQ(U32(4), cp)
	ADDQ(ldw, wb)
	INCQ(done)
	DECQ(rows)
	JMP(LabelRef(name + "_rows1"))

	Label(name + "_nan")
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
	pairGather = GLOBL("wdotsPairGather", RODATA|NOPTR)
	for i, v := range []uint32{0, 4, 8, 12, 2, 6, 10, 14, 0, 0, 0, 0, 0, 0, 0, 0} {
		DATA(4*i, U32(v))
	}
}

// vdpbf16ps emits VDPBF16PS m, src1, dst (AT&T order: dst.fp32[i] +=
// src1.bf16[2i]·m.bf16[2i] + src1.bf16[2i+1]·m.bf16[2i+1], 512 bits) as
// bytes: EVEX.512.F3.0F38.W0 52 /r with a memory operand of a base and an
// optional index, no displacement.
func vdpbf16ps(m Mem, src1, dst reg.VecPhysical) {
	idx := func(r reg.Register) int {
		p, ok := r.(reg.Physical)
		if !ok {
			panic("vdpbf16ps: virtual register")
		}
		return int(p.PhysicalIndex())
	}
	d, v := idx(dst), idx(src1)
	b := idx(m.Base)
	if m.Disp != 0 || b&7 == 4 || b&7 == 5 {
		panic("vdpbf16ps: unsupported address")
	}
	x := 0
	if m.Index != nil {
		x = idx(m.Index)
	}
	inv := func(v, bit int) int { return (^v >> bit) & 1 }
	p0 := inv(d, 3)<<7 | inv(x, 3)<<6 | inv(b, 3)<<5 | inv(d, 4)<<4 | 0b10 // map 0F38
	p1 := (^v&0xf)<<3 | 1<<2 | 0b10                                        // W0, vvvv, pp F3
	p2 := 0b10<<5 | inv(v, 4)<<3                                           // L'L = 512, V'
	enc := []int{0x62, p0, p1, p2, 0x52}
	if m.Index == nil {
		enc = append(enc, (d&7)<<3|b&7)
	} else {
		scale := map[uint8]int{1: 0, 2: 1, 4: 2, 8: 3}[m.Scale]
		enc = append(enc, (d&7)<<3|4, scale<<6|(x&7)<<3|b&7)
	}
	Comment(fmt.Sprintf("VDPBF16PS %s, %s, %s", m.Asm(), src1.Asm(), dst.Asm()))
	for _, e := range enc {
		Instruction(&ir.Instruction{Opcode: "BYTE", Operands: []Op{U8(e)}, ISA: []string{"AVX512_BF16"}})
	}
}

var splitConsts Mem

// splitConstsTable holds the split's constants, 4 bytes each: the
// rounding bias 0x7fff, the bit 1, the mask of a float32's upper 16 bits
// and the mask of its magnitude.
func splitConstsTable() {
	splitConsts = GLOBL("wdotsSplitConsts", RODATA|NOPTR)
	for i, v := range []uint32{0x7fff, 1, 0xffff0000, 0x7fffffff} {
		DATA(4*i, U32(v))
	}
}

// splitKernel generates wdotsSplitBF16AVX512.
func splitKernel() {
	name := "wdotsSplitBF16AVX512"
	x86.Func(name, "func(groups int, x *float32, out *uint16, ldo int, tail uint32) (maxAbs float32)",
		name+" writes hi = bf16(x) to out[0:] and lo = bf16(x - hi) to out[ldo:],",
		"both rounded to nearest even, for groups whole groups of 32 elements of x and, when tail",
		"is not 0, one more group of the elements of x its bits select (bit l of the group's",
		"element l, the others taken as 0), in BF16's interleaved order: element 2d of a group",
		"holds element d, element 2d+1 element 16+d. It returns max|x| over the elements read, or",
		"a NaN if one of them is not finite (then out holds rounded garbage, hi of a value near",
		"the float32 maximum may be infinite). Requires AVX-512F and AVX512DQ. Arguments are not checked.")
	n := x86.Arg("groups")
	xp := x86.Arg("x")
	op := x86.Arg("out")
	ldo := x86.Arg("ldo")
	SHLQ(U8(1), ldo)
	bias, one, upper, abs := ZMM(), ZMM(), ZMM(), ZMM()
	VPBROADCASTD(splitConsts.Offset(0), bias)
	VPBROADCASTD(splitConsts.Offset(4), one)
	VPBROADCASTD(splitConsts.Offset(8), upper)
	VPBROADCASTD(splitConsts.Offset(12), abs)
	maxv, bad := ZMM(), ZMM()
	VPXORD(maxv, maxv, maxv)
	VPXORD(bad, bad, bad)
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
	// group splits the 32 elements in a and b (x[0:16] and x[16:32] of
	// the group) and stores them at out.
	group := func(a, b reg.VecVirtual) {
		for _, v := range []reg.VecVirtual{a, b} {
			t := ZMM()
			VSUBPS(v, v, t) // 0, or NaN when v is not finite
			VPORD(t, bad, bad)
			VPANDD(abs, v, t)
			VMAXPS(t, maxv, maxv)
		}
		ha, hb := rne(a), rne(b)
		VSUBPS(ha, a, a) // exact
		VSUBPS(hb, b, b)
		la, lb := rne(a), rne(b)
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
	a, b := ZMM(), ZMM()
	VMOVUPS(Mem{Base: xp}, a)
	VMOVUPS(Mem{Base: xp, Disp: 64}, b)
	group(a, b)
	ADDQ(U32(128), xp)
	ADDQ(U32(64), op)
	DECQ(n)
	JMP(LabelRef(name + "_g"))

	Label(name + "_tail")
	bits := GP32()
	MOVL(x86.Addr(Param("tail")), bits)
	TESTL(bits, bits)
	JZ(LabelRef(name + "_reduce"))
	k1, k2 := K(), K()
	KMOVW(bits, k1)
	SHRL(U8(16), bits)
	KMOVW(bits, k2)
	ta, tb := ZMM(), ZMM()
	VMOVUPS_Z(Mem{Base: xp}, k1, ta)
	VMOVUPS_Z(Mem{Base: xp, Disp: 64}, k2, tb)
	group(ta, tb)

	Label(name + "_reduce")
	t := ZMM()
	VEXTRACTF32X8(U8(1), maxv, t.AsY())
	VMAXPS(t.AsY(), maxv.AsY(), maxv.AsY())
	VEXTRACTF32X4(U8(1), maxv.AsY(), t.AsX())
	VMAXPS(t.AsX(), maxv.AsX(), maxv.AsX())
	VMOVHLPS(maxv.AsX(), t.AsX(), t.AsX())
	VMAXPS(t.AsX(), maxv.AsX(), maxv.AsX())
	VMOVSHDUP(maxv.AsX(), t.AsX())
	VMAXSS(t.AsX(), maxv.AsX(), maxv.AsX())
	VEXTRACTI32X8(U8(1), bad, t.AsY())
	VPOR(t.AsY(), bad.AsY(), bad.AsY())
	VEXTRACTI128(U8(1), bad.AsY(), t.AsX())
	VPOR(t.AsX(), bad.AsX(), bad.AsX())
	VPSHUFD(U8(0x4e), bad.AsX(), t.AsX())
	VPOR(t.AsX(), bad.AsX(), bad.AsX())
	VPSHUFD(U8(0xb1), bad.AsX(), t.AsX())
	VPOR(t.AsX(), bad.AsX(), bad.AsX())
	VADDSS(bad.AsX(), maxv.AsX(), maxv.AsX()) // a NaN when bad is one
	VMOVSS(maxv.AsX(), x86.Ret(0))
	VZEROUPPER()
	RET()
}
