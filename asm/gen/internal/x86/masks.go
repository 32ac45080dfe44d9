package x86

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
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

// Tail is the mask of the last, partial vector of a row: an opmask on
// AVX-512, a VMASKMOVPS lane mask on AVX2.
type Tail struct {
	K reg.OpmaskVirtual
	Y reg.VecVirtual
}

// MaskForm chooses among the instruction sequences that load a Tail; they
// select the same lanes.
type MaskForm struct {
	// IndexFirst computes the AVX2 table index 8-rem before the table's
	// address (otherwise after it).
	IndexFirst bool
	// ViaGP32 moves the AVX-512 opmask word through a 32-bit register
	// (MOVWLZX, KMOVW) instead of KMOVW from memory.
	ViaGP32 bool
	// MovUPS loads the AVX2 lane mask with VMOVUPS instead of VMOVDQU.
	MovUPS bool
}

// Masks are the two mask tables of one generated file and the form of
// their loads.
type Masks struct {
	Lanes   Mem // LanesAVX2
	Opmasks Mem // OpmasksAVX512
	Form    MaskForm
}

// NewMasks emits the tables LanesAVX2(lanes) and OpmasksAVX512(opmasks).
func NewMasks(lanes, opmasks string, form MaskForm) *Masks {
	return &Masks{Lanes: LanesAVX2(lanes), Opmasks: OpmasksAVX512(opmasks), Form: form}
}

// Tail loads the mask enabling the first rem lanes, 0 <= rem <= lanes.
func (m *Masks) Tail(s *ISA, rem reg.GPVirtual) *Tail {
	base := GP64()
	if s.Is512() {
		LEAQ(m.Opmasks, base)
		word := Mem{Base: base, Index: rem, Scale: 2}
		if m.Form.ViaGP32 {
			w := GP32()
			MOVWLZX(word, w)
			k := K()
			KMOVW(w, k)
			return &Tail{K: k}
		}
		k := K()
		KMOVW(word, k)
		return &Tail{K: k}
	}
	if !m.Form.IndexFirst {
		LEAQ(m.Lanes, base)
	}
	off := GP64()
	MOVQ(U32(8), off)
	SUBQ(rem, off)
	if m.Form.IndexFirst {
		LEAQ(m.Lanes, base)
	}
	y := YMM()
	if m.Form.MovUPS {
		VMOVUPS(Mem{Base: base, Index: off, Scale: 4}, y)
	} else {
		VMOVDQU(Mem{Base: base, Index: off, Scale: 4}, y)
	}
	return &Tail{Y: y}
}

// Load reads a whole vector (t nil) or the lanes of t, the others zeroed,
// into a new register.
func (s *ISA) Load(src Mem, t *Tail) reg.VecVirtual {
	v := s.Vec()
	s.LoadTo(src, t, v)
	return v
}

// LoadTo is Load into v.
func (s *ISA) LoadTo(src Mem, t *Tail, v reg.VecVirtual) {
	switch {
	case t == nil:
		VMOVUPS(src, v)
	case s.Is512():
		VMOVUPS_Z(src, t.K, v)
	default:
		VMASKMOVPS(src, t.Y, v)
	}
}

// Store writes a whole vector (t nil) or only the lanes of t; memory
// outside them is not touched.
func (s *ISA) Store(v reg.VecVirtual, dst Mem, t *Tail) {
	switch {
	case t == nil:
		VMOVUPS(v, dst)
	case s.Is512():
		VMOVUPS(v, t.K, dst)
	default:
		VMASKMOVPS(v, t.Y, dst)
	}
}
