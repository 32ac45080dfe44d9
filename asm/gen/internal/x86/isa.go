// Package x86 holds what the AVX2 and AVX-512 generators (asm/gen/gelu,
// gemm, layernorm, optim, softmax, vecops) share: the description of each
// vector width, function headers and argument loads, the lane-mask tables
// and the masked loads and stores of a row's last, partial vector, the
// loop over a row (blocks, single vectors, one masked tail), tables of
// broadcast constants, and the horizontal reductions.
//
// Where the generators emit different instruction sequences for the same
// purpose (the tail masks' loads, for one), the variants are named here and
// each generator states the one it uses.
package x86

import (
	"strings"

	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/gotypes"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/simdgpt/simdgpt/asm/gen/internal/entry"
)

// ISA describes one vector width.
type ISA struct {
	Name  string // suffix of the function names: "AVX2" or "AVX512"
	Req   string // the CPU features, for the doc comments
	Lanes int    // float32 lanes per vector
}

// The two vector widths: YMM registers with FMA, and ZMM registers with
// opmasks.
var (
	AVX2   = &ISA{Name: "AVX2", Req: "AVX2 and FMA", Lanes: 8}
	AVX512 = &ISA{Name: "AVX512", Req: "AVX-512F, DQ and BW", Lanes: 16}
)

// Both lists the two widths, AVX2 first.
var Both = []*ISA{AVX2, AVX512}

// Is512 reports whether s is AVX-512 (ZMM registers, opmask tails).
func (s *ISA) Is512() bool { return s.Lanes == 16 }

// Bytes is the size of one vector in bytes.
func (s *ISA) Bytes() int { return 4 * s.Lanes }

// Vec allocates a vector register of the width.
func (s *ISA) Vec() reg.VecVirtual {
	if s.Is512() {
		return ZMM()
	}
	return YMM()
}

// At returns the address of vector j of the block starting at p.
func (s *ISA) At(p reg.GPVirtual, j int) Mem { return Mem{Base: p, Disp: j * s.Bytes()} }

// Zeros returns n zeroed vector registers (VPXORD on ZMM, where VXORPS
// would need AVX512DQ; VXORPS on YMM).
func (s *ISA) Zeros(n int) []reg.VecVirtual {
	v := make([]reg.VecVirtual, n)
	for i := range v {
		v[i] = s.Vec()
		if s.Is512() {
			VPXORD(v[i], v[i], v[i])
		} else {
			VXORPS(v[i], v[i], v[i])
		}
	}
	return v
}

// Func starts the assembly function name of the given kind and its Go
// stub declaration, with the kind's signature in the list of assembly
// functions (asm/gen/internal/entry), marked noescape, with the doc
// comment lines doc and the line naming the kind's executable reference.
func Func(name, kind string, doc ...string) {
	if !strings.HasPrefix(name, kind) {
		panic("x86.Func: " + name + " is not of kind " + kind)
	}
	TEXT(name, NOSPLIT, entry.Sig(kind))
	Pragma("noescape")
	if r := entry.RefDoc(kind); r != "" {
		doc = append(doc, r)
	}
	Doc(doc...)
}

// Header starts the function op+s.Name, of kind op (see Func), and
// returns its name. The doc comment is the name, then doc, then "Requires
// <features>. Arguments are not checked."
func (s *ISA) Header(op string, doc ...string) string {
	name := op + s.Name
	lines := append([]string{name + " " + doc[0]}, doc[1:]...)
	Func(name, op, append(lines, "Requires "+s.Req+". Arguments are not checked.")...)
	return name
}

// LoadGP loads an integer or pointer argument (or a slice's base or
// length) into a new general-purpose register.
func LoadGP(c gotypes.Component) reg.GPVirtual {
	r := GP64()
	Load(c, r)
	return r
}

// Arg is LoadGP of the parameter name.
func Arg(name string) reg.GPVirtual { return LoadGP(Param(name)) }

// Addr returns the stack address of a scalar parameter or result.
func Addr(c gotypes.Component) Mem {
	b, err := c.Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

// Ret returns the stack address of result i.
func Ret(i int) Mem { return Addr(ReturnIndex(i)) }

// Broadcast loads the float32 parameter name into every lane of a new
// register.
func (s *ISA) Broadcast(name string) reg.VecVirtual {
	v := s.Vec()
	VBROADCASTSS(Addr(Param(name)), v)
	return v
}

// Rows addresses the rows of a block of R rows ld bytes apart, ld and
// 3·ld in registers: row j is at Bases[j/4] + (j%4)·ld, so that a block
// of any height needs one base register per four rows.
type Rows struct {
	Bases   []reg.GPVirtual
	ld, ld3 reg.GPVirtual
}

// NewRows returns the Rows of a block of R rows from p0 (the first base,
// not copied) ld bytes apart; ld3 (3·ld) is needed when R > 2.
func NewRows(p0, ld, ld3 reg.GPVirtual, R int) *Rows {
	rs := &Rows{Bases: []reg.GPVirtual{p0}, ld: ld, ld3: ld3}
	for q := 4; q < R; q += 4 {
		b := GP64()
		LEAQ(Mem{Base: rs.Bases[len(rs.Bases)-1], Index: ld, Scale: 4}, b)
		rs.Bases = append(rs.Bases, b)
	}
	return rs
}

// At returns the address disp bytes into row j.
func (rs *Rows) At(j, disp int) Mem { return RowAt(rs.Bases[j/4], rs.ld, rs.ld3, j%4, disp) }

// RowAt returns the address disp bytes into row j (0 to 3) of four rows
// ld bytes apart from base, ld3 = 3·ld: the addressing of Rows, for
// kernels that hold their bases in registers of their own (physical
// ones, say).
func RowAt(base, ld, ld3 reg.Register, j, disp int) Mem {
	switch j {
	case 0:
		return Mem{Base: base, Disp: disp}
	case 1:
		return Mem{Base: base, Index: ld, Scale: 1, Disp: disp}
	case 2:
		return Mem{Base: base, Index: ld, Scale: 2, Disp: disp}
	}
	return Mem{Base: base, Index: ld3, Scale: 1, Disp: disp}
}

// Advance moves every row on by n bytes.
func (rs *Rows) Advance(n int) {
	for _, b := range rs.Bases {
		ADDQ(U32(n), b)
	}
}

// NextBlock returns the Rows of the block R rows after rs's (for
// prefetching it while rs's is read).
func (rs *Rows) NextBlock(R int) *Rows {
	pf := GP64()
	IMUL3Q(U32(R), rs.ld, pf)
	ADDQ(rs.Bases[0], pf)
	return NewRows(pf, rs.ld, rs.ld3, R)
}
