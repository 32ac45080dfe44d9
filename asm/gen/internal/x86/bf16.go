package x86

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/ir"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// Go's assembler (and avo) know none of the AVX512_BF16 instructions, so
// the generators emit them as bytes, on physical ZMM registers only (no
// memory operand, no mask): avo sees bytes, so the registers they use
// must not be virtual ones it allocates.

// VDPBF16PS emits VDPBF16PS src2, src1, dst (AT&T order): for each of
// the 16 float32 lanes i, dst[i] += src1.bf16[2i]·src2.bf16[2i] +
// src1.bf16[2i+1]·src2.bf16[2i+1], with denormals counted as 0 and
// flushed to 0 whatever MXCSR says. EVEX.512.F3.0F38.W0 52 /r.
func VDPBF16PS(src2, src1, dst reg.VecPhysical) {
	evex0F38(0x52, 0b10, "VDPBF16PS", src2, src1, dst)
}

// VCVTNE2PS2BF16 emits VCVTNE2PS2BF16 src2, src1, dst (AT&T order): the
// 32 bfloat16 of dst are src2's 16 float32 (elements 0..15) and src1's
// (elements 16..31), each rounded to nearest even, denormal inputs
// counted as 0, NaN kept a (quiet) NaN. EVEX.512.F2.0F38.W0 72 /r.
func VCVTNE2PS2BF16(src2, src1, dst reg.VecPhysical) {
	evex0F38(0x72, 0b11, "VCVTNE2PS2BF16", src2, src1, dst)
}

// evex0F38 emits the EVEX.512.pp.0F38.W0 instruction op with ModRM
// mod 11: reg = dst, vvvv = src1, rm = src2.
func evex0F38(op, pp int, name string, src2, src1, dst reg.VecPhysical) {
	d, v, b := int(dst.PhysicalIndex()), int(src1.PhysicalIndex()), int(src2.PhysicalIndex())
	inv := func(v, bit int) int { return (^v >> bit) & 1 }
	p0 := inv(d, 3)<<7 | inv(b, 4)<<6 | inv(b, 3)<<5 | inv(d, 4)<<4 | 0b10
	p1 := (^v&0xf)<<3 | 1<<2 | pp
	p2 := 0b10<<5 | inv(v, 4)<<3
	enc := []int{0x62, p0, p1, p2, op, 0xc0 | (d&7)<<3 | b&7}
	Comment(fmt.Sprintf("%s %s, %s, %s", name, src2.Asm(), src1.Asm(), dst.Asm()))
	for _, e := range enc {
		Instruction(&ir.Instruction{Opcode: "BYTE", Operands: []Op{U8(e)}, ISA: []string{"AVX512_BF16"}})
	}
}
