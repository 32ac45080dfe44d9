// Package masks emits the constant tables of lane masks with which the
// generated kernels handle the last, partial vector of a row.
package masks

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
)

// LanesAVX2 emits, as the read-only symbol name, eight all-ones dwords
// followed by eight zero dwords. The eight dwords starting at index 8-w
// are the VMASKMOVPS mask that enables the first w lanes of a YMM
// register (0 <= w <= 8); with w in a register, load them from
// Mem{Base: table, Index: -w, Scale: 4, Disp: 32}.
func LanesAVX2(name string) Mem {
	m := GLOBL(name, RODATA|NOPTR)
	for i := 0; i < 16; i++ {
		v := uint32(0)
		if i < 8 {
			v = 0xffffffff
		}
		DATA(4*i, U32(v))
	}
	return m
}

// OpmasksAVX512 emits, as the read-only symbol name, the 17 words
// (1<<w)-1 for w = 0..16: the opmask (KMOVW) enabling the first w lanes of
// a ZMM register is the word at index w.
func OpmasksAVX512(name string) Mem {
	m := GLOBL(name, RODATA|NOPTR)
	for w := 0; w <= 16; w++ {
		DATA(2*w, U16(uint16(1<<w-1)))
	}
	return m
}
