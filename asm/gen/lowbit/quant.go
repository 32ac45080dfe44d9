package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/simdgpt/simdgpt/asm/gen/internal/x86"
)

func init() {
	x86.Register("lowbitQuantInt16", func() {
		for _, s := range x86.Both {
			quantKernel(s)
		}
	})
}

// quantKernel emits lowbitQuantInt16<ISA>: q[p] = float64(x[p])·inv
// rounded to float64, then to the nearest integer with ties to even, and
// clamped to ±32767, for p < 16·blocks (lowbit.QuantizeInt16Scaled's
// arithmetic, see lowbit.QuantFunc). Each float32 is widened exactly
// (VCVTPS2PD), multiplied (VMULPD, one rounding) and converted under
// MXCSR's default rounding, to nearest even (VCVTPD2DQ); the int32 lanes
// are clamped (VPMINSD, VPMAXSD) and narrowed (VPMOVDW on AVX-512;
// VPACKSSDW, whose saturation the clamp leaves idle, then VPERMQ to undo
// its lane order, on AVX2). A block of 16 is one iteration.
func quantKernel(s *x86.ISA) {
	name := "lowbitQuantInt16" + s.Name
	x86.Func(name, "lowbitQuantInt16",
		fmt.Sprintf("%s sets q[p] = float64(x[p])*inv rounded to the nearest integer (ties to even),", name),
		"clamped to ±32767, for p < 16*blocks (see lowbit.QuantFunc).",
		fmt.Sprintf("Requires %s. Arguments are not checked.", s.Req))
	blocks := x86.Arg("blocks")
	x := x86.Arg("x")
	q := x86.Arg("q")
	inv := s.Vec()
	VBROADCASTSD(x86.Addr(Param("inv")), inv)
	hi, lo := broadcastInt32(s, 32767), broadcastInt32(s, 0xffff8001) // ±32767
	if s.Is512() {
		Label(name + "_loop")
		TESTQ(blocks, blocks)
		JZ(LabelRef(name + "_done"))
		d0, d1 := ZMM(), ZMM()
		VCVTPS2PD(Mem{Base: x}, d0)
		VCVTPS2PD(Mem{Base: x, Disp: 32}, d1)
		VMULPD(inv, d0, d0)
		VMULPD(inv, d1, d1)
		i0, i1, v := YMM(), YMM(), ZMM()
		VCVTPD2DQ(d0, i0)
		VCVTPD2DQ(d1, i1)
		VINSERTI64X4(Imm(1), i1, i0.AsZ(), v)
		VPMINSD(hi, v, v)
		VPMAXSD(lo, v, v)
		VPMOVDW(v, Mem{Base: q})
	} else {
		Label(name + "_loop")
		TESTQ(blocks, blocks)
		JZ(LabelRef(name + "_done"))
		var halves [2]reg.VecVirtual
		for h := range halves {
			d0, d1 := YMM(), YMM()
			VCVTPS2PD(Mem{Base: x, Disp: 32 * h}, d0)
			VCVTPS2PD(Mem{Base: x, Disp: 32*h + 16}, d1)
			VMULPD(inv, d0, d0)
			VMULPD(inv, d1, d1)
			i0, i1, v := XMM(), XMM(), YMM()
			VCVTPD2DQY(d0, i0)
			VCVTPD2DQY(d1, i1)
			VINSERTI128(Imm(1), i1, i0.AsY(), v)
			VPMINSD(hi, v, v)
			VPMAXSD(lo, v, v)
			halves[h] = v
		}
		p := YMM()
		VPACKSSDW(halves[1], halves[0], p)
		VPERMQ(Imm(0xd8), p, p)
		VMOVDQU(p, Mem{Base: q})
	}
	ADDQ(U32(64), x)
	ADDQ(U32(32), q)
	DECQ(blocks)
	JMP(LabelRef(name + "_loop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// broadcastInt32 returns a new vector with v in every 32-bit lane
// (AVX-512 broadcasts from a general-purpose register, AVX2 through an
// XMM register).
func broadcastInt32(s *x86.ISA, v uint32) reg.VecVirtual {
	c, d := GP32(), s.Vec()
	MOVL(U32(v), c)
	if s.Is512() {
		VPBROADCASTD(c, d)
		return d
	}
	t := XMM()
	VMOVD(c, t)
	VPBROADCASTD(t, d)
	return d
}
