package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/simdgpt/simdgpt/asm/gen/internal/x86"
)

func init() {
	x86.Register("roundBF16", func() {
		consts := x86.NewTable("roundBF16Consts", []uint32{1, 0x7fff, 0x7fffffff, 0x7f800000, 0x400000, 0xffff0000})
		for _, s := range x86.Both {
			roundBF16(s, consts.For(s))
		}
	})
}

// The constants of roundBF16, by index in its table.
const (
	rbOne   = iota // the lowest bit of the kept half
	rbHalf         // 0x7fff: half a unit of the kept half, less one
	rbAbs          // the bits but the sign
	rbInf          // the bits of +Inf: a larger magnitude is a NaN
	rbQuiet        // the quiet bit of a NaN's kept half
	rbHigh         // the kept half
)

// roundBF16 emits roundBF16<ISA>: each float32 rounded to the nearest
// bfloat16 (ties to even, subnormals kept; a NaN made quiet, its sign and
// top payload bits kept), as lowbit.FromBF16(lowbit.ToBF16(x)), on the
// integer bits: b + 0x7fff + (b>>16 & 1) with the low half cleared, or
// for a NaN b | 0x400000 with the low half cleared.
func roundBF16(s *x86.ISA, c *x86.Consts) {
	name := s.Header("roundBF16",
		"sets dst[i] to x[i] rounded to the nearest bfloat16 (ties to even, subnormals kept,",
		"a NaN made quiet), as lowbit.FromBF16(lowbit.ToBF16(x[i])). len(x) must be at least len(dst);",
		"dst may be x but must not otherwise overlap it.")
	d := x86.LoadGP(Param("dst").Base())
	x := x86.LoadGP(Param("x").Base())
	n := x86.LoadGP(Param("dst").Len())
	c.Keep(rbOne, rbHalf, rbAbs, rbInf, rbQuiet, rbHigh)
	round := func(v reg.VecVirtual) {
		r, t := s.Vec(), s.Vec()
		VPSRLD(U8(16), v, r)
		if s.Is512() {
			VPANDD(c.Reg(rbOne), r, r)
			VPADDD(v, r, r)
			VPADDD(c.Reg(rbHalf), r, r)
			VPANDD(c.Reg(rbAbs), v, t)
			k := K()
			VPCMPUD(U8(6), c.Reg(rbInf), t, k) // |b| > Inf bits: a NaN
			VPORD(c.Reg(rbQuiet), v, k, r)     // merge: r = b | quiet there
			VPANDD(c.Reg(rbHigh), r, v)
			return
		}
		VPAND(c.Reg(rbOne), r, r)
		VPADDD(v, r, r)
		VPADDD(c.Reg(rbHalf), r, r)
		VPAND(c.Reg(rbAbs), v, t)
		VPCMPGTD(c.Reg(rbInf), t, t) // signed, but t >= 0
		q := s.Vec()
		VPOR(c.Reg(rbQuiet), v, q)
		VPBLENDVB(t, q, r, r)
		VPAND(c.Reg(rbHigh), r, v)
	}
	s.Loops(name, n, []reg.GPVirtual{d, x}, unroll, masks, x86.Split(func(k int) {
		vs := make([]reg.VecVirtual, k)
		for j := range vs {
			vs[j] = s.Vec()
			VMOVUPS(s.At(x, j), vs[j])
		}
		for j := range vs {
			round(vs[j])
		}
		for j := range vs {
			VMOVUPS(vs[j], s.At(d, j))
		}
	}, func(tl *x86.Tail) {
		v := s.Load(s.At(x, 0), tl)
		round(v)
		s.Store(v, s.At(d, 0), tl)
	}))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

func init() {
	x86.Register("widenBF16", func() {
		high := x86.NewTable("widenBF16High", []uint32{0xffff0000})
		for _, s := range x86.Both {
			widenBF16(s, high.For(s))
		}
	})
}

// widenBF16 emits widenBF16<ISA>: the float32 values of whole groups of
// 32 bfloat16 stored as lowbit.BF16 stores a group (element 2d holds
// w[d], element 2d+1 holds w[16+d]): each 32-bit word shifted left by 16
// gives w[d], with its low half cleared w[16+d]. A group is one ZMM, or
// two YMM, of words in and two ZMM, or four YMM, out.
func widenBF16(s *x86.ISA, c *x86.Consts) {
	name := "widenBF16" + s.Name
	x86.Func(name, "widenBF16",
		name+" sets dst[32g+d] = w[2d] and dst[32g+16+d] = w[2d+1] as float32, for d < 16, g < len(dst)/32",
		"and w = src[32g:] the bfloat16 of a group stored as lowbit.BF16 stores it (exact); dst[32*(len(dst)/32):]",
		"is not written. len(src) must be at least 32*(len(dst)/32).",
		"Requires "+s.Req+".")
	d := x86.LoadGP(Param("dst").Base())
	src := x86.LoadGP(Param("src").Base())
	n := x86.LoadGP(Param("dst").Len())
	SHRQ(U8(5), n)
	JZ(LabelRef(name + "_done"))
	c.Keep(0)
	per := 16 / s.Lanes // vectors of words a group
	Label(name + "_loop")
	for v := 0; v < per; v++ {
		w, lo := s.Vec(), s.Vec()
		VMOVUPS(Mem{Base: src, Disp: v * s.Bytes()}, w)
		VPSLLD(U8(16), w, lo)
		VMOVUPS(lo, Mem{Base: d, Disp: v * s.Bytes()})
		if s.Is512() {
			VPANDD(c.Reg(0), w, w)
		} else {
			VPAND(c.Reg(0), w, w)
		}
		VMOVUPS(w, Mem{Base: d, Disp: 64 + v*s.Bytes()})
	}
	ADDQ(U8(64), src)
	ADDQ(U32(128), d)
	DECQ(n)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}
