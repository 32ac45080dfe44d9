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
	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/gotypes"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
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

// Func starts the assembly function name and its Go stub declaration with
// signature sig, marked noescape, with the doc comment lines doc.
func Func(name, sig string, doc ...string) {
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	Doc(doc...)
}

// Header starts the function op+s.Name (see Func) and returns its name.
// The doc comment is the name, then doc, then "Requires <features>.
// Arguments are not checked."
func (s *ISA) Header(op, sig string, doc ...string) string {
	name := op + s.Name
	lines := append([]string{name + " " + doc[0]}, doc[1:]...)
	Func(name, sig, append(lines, "Requires "+s.Req+". Arguments are not checked.")...)
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
