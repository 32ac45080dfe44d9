package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/simdgpt/simdgpt/asm/gen/internal/x86"
)

func init() {
	x86.Register("lowbitDequantInt8", func() {
		for _, s := range x86.Both {
			dequantKernel(s)
		}
	})
}

// dequantKernel emits lowbitDequantInt8<ISA>: dst[32g+p] =
// s_g·float32(q_g[p]) for g < groups, p < 32, over the groups consecutive
// Int8 blocks at w (36 bytes: the float32 scale s_g, then the int8 q_g).
// Each weight is sign-extended to int32 (VPMOVSXBD), converted to float32
// (exact) and multiplied by the broadcast scale: one rounding, as Go's
// s*float32(q) (generic.DequantizeInt8). A group is one iteration: two
// ZMM or four YMM of weights.
func dequantKernel(s *x86.ISA) {
	name := "lowbitDequantInt8" + s.Name
	x86.Func(name, "lowbitDequantInt8",
		fmt.Sprintf("%s sets dst[32g+p] = s_g*float32(q_g[p]) for g < groups, p < 32,", name),
		"over the groups consecutive Int8 blocks at w (see lowbit.DequantFunc).",
		fmt.Sprintf("Requires %s. Arguments are not checked.", s.Req))
	groups := x86.Arg("groups")
	w := x86.Arg("w")
	dst := x86.Arg("dst")
	per := group / s.Lanes // vectors a group
	scale := s.Vec()
	vs := make([]reg.VecVirtual, per)
	for i := range vs {
		vs[i] = s.Vec()
	}
	Label(name + "_loop")
	TESTQ(groups, groups)
	JZ(LabelRef(name + "_done"))
	VBROADCASTSS(Mem{Base: w}, scale)
	for i, x := range vs {
		VPMOVSXBD(Mem{Base: w, Disp: 4 + i*s.Lanes}, x)
	}
	for i, x := range vs {
		VCVTDQ2PS(x, x)
		VMULPS(scale, x, x)
		VMOVUPS(x, s.At(dst, i))
	}
	ADDQ(U32(36), w)
	ADDQ(U32(4*group), dst)
	DECQ(groups)
	JMP(LabelRef(name + "_loop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}
