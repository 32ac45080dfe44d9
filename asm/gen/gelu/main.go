// Command gelu generates the GELU kernels (tanh form), forward, backward
// and with a fused bias, for AVX2+FMA (YMM registers, VMASKMOVPS tails)
// and AVX-512F (ZMM registers, opmask tails).
//
// # The formula
//
// GELU's tanh form is gelu(x) = 0.5·x·(1 + tanh(u)), u = c·(x + a·x³),
// c = √(2/π), a = 0.044715. Since 0.5·(1 + tanh(u)) = σ(2u) =
// 1/(1 + e^(-2u)), the kernels compute, for every element,
//
//	xs = max(x, -20), xc = min(xs, 20)    (NaN stays NaN)
//	t  = -|xc|·(2c + 2ca·xc²) = -2|u(xc)| <= 0
//	e  = exp(t)                           (0 where t < expMin = -87.3)
//	s  = 1/(1 + e), es = e·s              (σ(2|u|) and 1 - σ(2|u|))
//	σ  = s if xc >= 0, else es            (σ(2u): no cancellation)
//	gelu(x)  = xs·σ
//	gelu'(x) = σ + xc·(es·s)·(2c + 6ca·xc²)
//
// using σ(1-σ) = es·s for either sign. The exponential's argument is never
// positive, so it cannot overflow, and 1 - σ is never formed by a
// subtraction. The clamps change no result: for x <= -20 the true gelu(x)
// (below 1e-260 in magnitude) and gelu'(x) round to -0 and +0, and e is 0,
// so the kernels give xs·0 = -0 and σ = 0; for x >= 20, e = 0, σ = 1 and
// gelu(x) = x, gelu'(x) = 1 exactly, +Inf included. They keep -Inf·0 and
// Inf·0 out of the products, and make x = ±Inf give those limits. A NaN x
// gives NaN (its lanes of e are 0, but xs and xc carry the NaN).
//
// The exponential is the softmax's (asm/gen/internal/vexp: the shifter
// reduction with ln2 split in two, the degree-5 polynomial of
// asm/gen/internal/expf, relative error 5.2e-7), on the plain ("far")
// reduction: t is already exact as an input. Results below expMin are
// flushed to 0, so every e kept is a normal number: gelu outputs of
// magnitude below about 1.2e-37 (x below about -9.3) may be -0 instead.
// The errors against float64 are measured and documented in package
// kernels (gelu.go).
//
// # Kernels
//
//	geluRow<ISA>(dst, x)           dst[j] = gelu(x[j]), j < len(x)
//	geluBackwardRow<ISA>(dx, dy, x) dx[j] = dy[j]·gelu'(x[j])
//	biasGeluRow<ISA>(y, x, bias)   x[j] += bias[j]; y[j] = gelu(x[j])
//
// Each is a loop over blocks of two vectors (their steps interleaved),
// then single vectors, then one masked step for the last lanes-1 or fewer
// elements: no scalar loop, and nothing outside the slices is touched.
package main

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/simdgpt/simdgpt/asm/gen/internal/expf"
	"github.com/simdgpt/simdgpt/asm/gen/internal/masks"
	"github.com/simdgpt/simdgpt/asm/gen/internal/vexp"
)

// GELU's constants.
const (
	geluC = 0.7978845608028654 // √(2/π)
	geluA = 0.044715
	clamp = 20 // |x| beyond which e = 0 and the results are exact limits
)

// unroll is the number of vectors of a block.
const unroll = 2

// Constants of the table, each replicated 16 times (64 bytes) so that it
// is a full-width memory operand of either width or can be broadcast.
const (
	cNegClamp = iota // -20
	cClamp           // 20
	cNegK1           // -2c
	cNegK2           // -2ca
	cK1              // 2c
	cK3              // 6ca
	cExpMin          // expf.ExpMin
	cOne             // 1
	cZero            // 0
	cAbs             // 0x7fffffff
	cExp             // cExp+i holds vexp constant i
	nConsts   = cExp + int(vexp.Poly0+vexp.Deg) + 1
)

// VCMPPS predicates.
const (
	cmpLTOQ = 0x11 // less than, ordered (false for NaN)
	cmpGEOQ = 0x1d // greater than or equal, ordered (false for NaN)
)

var (
	consts Mem
	maskDW Mem
	maskW  Mem
)

func cm(i int) Mem { return consts.Offset(64 * i) }

func main() {
	ConstraintExpr("amd64,!purego")
	var vals [nConsts]uint32
	f := func(i int, v float64) { vals[i] = math.Float32bits(float32(v)) }
	f(cNegClamp, -clamp)
	f(cClamp, clamp)
	f(cNegK1, -2*geluC)
	f(cNegK2, -2*geluC*geluA)
	f(cK1, 2*geluC)
	f(cK3, 6*geluC*geluA)
	f(cExpMin, expf.ExpMin)
	f(cOne, 1)
	f(cZero, 0)
	vals[cAbs] = 0x7fffffff
	for c := vexp.Log2e; c <= vexp.Poly0+vexp.Deg; c++ {
		vals[cExp+int(c)] = math.Float32bits(vexp.Value(c))
	}
	consts = GLOBL("geluConsts", RODATA|NOPTR)
	for i, v := range vals {
		for j := 0; j < 16; j++ {
			DATA(64*i+4*j, U32(v))
		}
	}
	maskDW = masks.LanesAVX2("geluMaskDW")
	maskW = masks.OpmasksAVX512("geluMaskW")

	for _, s := range []*isa{avx2, avx512} {
		kernel(s, forward)
		kernel(s, backward)
		kernel(s, biased)
	}
	Generate()
}

// isa describes one vector width.
type isa struct {
	name   string
	req    string
	lanes  int
	newVec func() reg.VecVirtual
}

var (
	avx2   = &isa{name: "AVX2", req: "AVX2 and FMA", lanes: 8, newVec: func() reg.VecVirtual { return YMM() }}
	avx512 = &isa{name: "AVX512", req: "AVX-512F", lanes: 16, newVec: func() reg.VecVirtual { return ZMM() }}
)

func (s *isa) is512() bool { return s.lanes == 16 }

// mode is the kernel emitted.
type mode int

const (
	forward mode = iota
	backward
	biased
)

// tail holds the mask of the last elements.
type tail struct {
	k reg.OpmaskVirtual
	y reg.VecVirtual
}

func (s *isa) tailMask(rem reg.GPVirtual) *tail {
	base := GP64()
	if s.is512() {
		LEAQ(maskW, base)
		k := K()
		KMOVW(Mem{Base: base, Index: rem, Scale: 2}, k)
		return &tail{k: k}
	}
	off := GP64()
	MOVQ(U32(8), off)
	SUBQ(rem, off)
	LEAQ(maskDW, base)
	m := YMM()
	VMOVDQU(Mem{Base: base, Index: off, Scale: 4}, m)
	return &tail{y: m}
}

func (s *isa) load(src Mem, t *tail) reg.VecVirtual {
	v := s.newVec()
	switch {
	case t == nil:
		VMOVUPS(src, v)
	case s.is512():
		VMOVUPS_Z(src, t.k, v)
	default:
		VMASKMOVPS(src, t.y, v)
	}
	return v
}

func (s *isa) store(v reg.VecVirtual, dst Mem, t *tail) {
	switch {
	case t == nil:
		VMOVUPS(v, dst)
	case s.is512():
		VMOVUPS(v, t.k, dst)
	default:
		VMASKMOVPS(v, t.y, dst)
	}
}

// vec is the state of one vector.
type vec struct {
	off              int
	xs, xc, x2, s, q reg.VecVirtual
	e                vexp.Vec
}

func kernel(s *isa, m mode) {
	var name, sig string
	var doc []string
	switch m {
	case forward:
		name, sig = "geluRow"+s.name, "func(dst, x []float32)"
		doc = []string{name + " sets dst[j] = gelu(x[j]) for j < len(x) (tanh form, see",
			"asm/gen/gelu); dst must be at least as long as x and may be x itself."}
	case backward:
		name, sig = "geluBackwardRow"+s.name, "func(dx, dy, x []float32)"
		doc = []string{name + " sets dx[j] = dy[j]·gelu'(x[j]) for j < len(x); dx and dy",
			"must be at least as long as x, and dx may be dy itself."}
	case biased:
		name, sig = "biasGeluRow"+s.name, "func(y, x, bias []float32)"
		doc = []string{name + " sets x[j] += bias[j] and then y[j] = gelu(x[j]) for",
			"j < len(x); y and bias must be at least as long as x, and y may be x",
			"itself (it then holds the GELU)."}
	}
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	Doc(append(doc, "Requires "+s.req+". Arguments are not checked.")...)

	var pOut, pX, pIn reg.GPVirtual // output, x, and dy or bias
	pX = GP64()
	Load(Param("x").Base(), pX)
	n := GP64()
	Load(Param("x").Len(), n)
	ptrs := []reg.GPVirtual{pX}
	pOut = GP64()
	switch m {
	case forward:
		Load(Param("dst").Base(), pOut)
	case backward:
		Load(Param("dx").Base(), pOut)
		pIn = GP64()
		Load(Param("dy").Base(), pIn)
	case biased:
		Load(Param("y").Base(), pOut)
		pIn = GP64()
		Load(Param("bias").Base(), pIn)
	}
	ptrs = append(ptrs, pOut)
	if pIn != nil {
		ptrs = append(ptrs, pIn)
	}

	// AVX-512 keeps the constants in registers; AVX2, with 16 registers,
	// reads them from memory (VMAXPS, VMINPS and VDIVPS take a register
	// first operand, loaded per use).
	var kreg [nConsts]reg.VecVirtual
	if s.is512() {
		for _, i := range []int{cNegClamp, cClamp, cNegK2, cExpMin, cOne, cZero,
			cExp + int(vexp.Log2e), cExp + int(vexp.Shifter), cExp + int(vexp.Ln2Hi), cExp + int(vexp.Ln2Lo)} {
			kreg[i] = s.newVec()
			VBROADCASTSS(cm(i), kreg[i])
		}
		if m == backward {
			kreg[cK3] = s.newVec()
			VBROADCASTSS(cm(cK3), kreg[cK3])
		}
	}
	kc := func(i int) Op {
		if kreg[i] != nil {
			return kreg[i]
		}
		return cm(i)
	}
	loadConst := func(i int, v reg.VecVirtual) {
		switch {
		case kreg[i] != nil:
			VMOVAPS(kreg[i], v)
		case s.is512():
			VBROADCASTSS(cm(i), v)
		default:
			VMOVUPS(cm(i), v)
		}
	}
	// reg1 returns constant i in a register, for a first operand.
	reg1 := func(i int) reg.VecVirtual {
		if kreg[i] != nil {
			return kreg[i]
		}
		v := s.newVec()
		loadConst(i, v)
		return v
	}
	ex := &vexp.Emitter{AVX512: s.is512(), NewVec: s.newVec,
		Op:   func(c vexp.Const) Op { return kc(cExp + int(c)) },
		Load: func(c vexp.Const, v reg.VecVirtual) { loadConst(cExp+int(c), v) }}

	body := func(k int, t *tail) {
		vs := make([]*vec, k)
		for i := range vs {
			vs[i] = &vec{off: 4 * s.lanes * i}
		}
		each := func(f func(v *vec)) {
			for _, v := range vs {
				f(v)
			}
		}
		at := func(p reg.GPVirtual, v *vec) Mem { return Mem{Base: p, Disp: v.off} }
		// x (plus bias, stored back); xs = max(x, -20), xc = min(xs, 20).
		each(func(v *vec) {
			x := s.load(at(pX, v), t)
			if m == biased {
				if t == nil {
					VADDPS(at(pIn, v), x, x)
				} else {
					b := s.load(at(pIn, v), t)
					VADDPS(b, x, x)
				}
				s.store(x, at(pX, v), t)
			}
			// The first (Intel second) source is returned when either is
			// NaN: x, then xs.
			v.xs = s.newVec()
			VMAXPS(x, reg1(cNegClamp), v.xs)
			v.xc = s.newVec()
			VMINPS(v.xs, reg1(cClamp), v.xc)
		})
		// t = |xc|·(-2c - 2ca·xc²), in e.X.
		each(func(v *vec) {
			v.x2 = s.newVec()
			VMULPS(v.xc, v.xc, v.x2)
			g := s.newVec()
			loadConst(cNegK1, g)
			VFMADD231PS(kc(cNegK2), v.x2, g)
			v.e.X = s.newVec()
			VANDPS(cm(cAbs), v.xc, v.e.X)
			VMULPS(g, v.e.X, v.e.X)
		})
		// keep: t >= expMin (false for NaN; masked-off tail lanes are 0).
		each(func(v *vec) {
			if s.is512() {
				v.e.KeepK = K()
				VCMPPS(Imm(cmpGEOQ), kc(cExpMin), v.e.X, v.e.KeepK)
				return
			}
			v.e.KeepY = s.newVec()
			VCMPPS(Imm(cmpGEOQ), kc(cExpMin), v.e.X, v.e.KeepY)
		})
		evs := make([]*vexp.Vec, k)
		for i, v := range vs {
			evs[i] = &v.e
		}
		ex.Exponent(evs, ex.InitShifter)
		ex.ReduceHi(evs)
		ex.ReduceLo(evs)
		ex.Poly(evs)
		ex.Scale(evs)
		// s = 1/(1 + e); e becomes es = e·s; q = es·s (backward).
		each(func(v *vec) {
			d := s.newVec()
			VADDPS(kc(cOne), v.e.P, d)
			v.s = s.newVec()
			VDIVPS(d, reg1(cOne), v.s)
		})
		each(func(v *vec) {
			VMULPS(v.s, v.e.P, v.e.P)
			if m == backward {
				v.q = s.newVec()
				VMULPS(v.s, v.e.P, v.q)
			}
		})
		// σ = es where xc < 0, s elsewhere, in s's register.
		each(func(v *vec) {
			if s.is512() {
				neg := K()
				VCMPPS(Imm(cmpLTOQ), kc(cZero), v.xc, neg)
				VMOVAPS(v.e.P, neg, v.s)
				return
			}
			VBLENDVPS(v.xc, v.e.P, v.s, v.s)
		})
		if m != backward {
			each(func(v *vec) {
				VMULPS(v.xs, v.s, v.s)
				s.store(v.s, at(pOut, v), t)
			})
			return
		}
		// gelu' = σ + (xc·q)·(2c + 6ca·xc²); dx = dy·gelu'.
		each(func(v *vec) {
			h := s.newVec()
			loadConst(cK1, h)
			VFMADD231PS(kc(cK3), v.x2, h)
			VMULPS(v.xc, v.q, v.q)
			VFMADD231PS(h, v.q, v.s)
		})
		each(func(v *vec) {
			if t == nil {
				VMULPS(at(pIn, v), v.s, v.s)
			} else {
				dy := s.load(at(pIn, v), t)
				VMULPS(dy, v.s, v.s)
			}
			s.store(v.s, at(pOut, v), t)
		})
	}

	step := func(k int, next string) {
		Label(fmt.Sprintf("%s_loop%d", name, k))
		CMPQ(n, U32(k*s.lanes))
		JB(LabelRef(next))
		body(k, nil)
		for _, p := range ptrs {
			ADDQ(U32(4*k*s.lanes), p)
		}
		SUBQ(U32(k*s.lanes), n)
		JMP(LabelRef(fmt.Sprintf("%s_loop%d", name, k)))
	}
	step(unroll, name+"_loop1")
	step(1, name+"_tail")
	Label(name + "_tail")
	TESTQ(n, n)
	JZ(LabelRef(name + "_done"))
	body(1, s.tailMask(n))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}
