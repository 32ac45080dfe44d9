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
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/simdgpt/simdgpt/asm/gen/internal/expf"
	"github.com/simdgpt/simdgpt/asm/gen/internal/vexp"
	"github.com/simdgpt/simdgpt/asm/gen/internal/x86"
)

// GELU's constants.
const (
	geluC = 0.7978845608028654 // √(2/π)
	geluA = 0.044715
	clamp = 20 // |x| beyond which e = 0 and the results are exact limits
)

// unroll is the number of vectors of a block.
const unroll = 2

// Constants of the table (x86.Table: each replicated 16 times).
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
	table x86.Table
	// masks are the tail masks (the form: index 8-n, then the table
	// address).
	masks *x86.Masks
)

func main() {
	ConstraintExpr("amd64,!purego")
	table = x86.NewTable("geluConsts", constValues())
	masks = x86.NewMasks("geluMaskDW", "geluMaskW", x86.MaskForm{IndexFirst: true})
	for _, s := range x86.Both {
		kernel(s, forward)
		kernel(s, backward)
		kernel(s, biased)
	}
	x86.Finish()
}

// constValues returns the bits of the table's constants.
func constValues() []uint32 {
	vals := make([]uint32, nConsts)
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
	return vals
}

// mode is the kernel emitted.
type mode int

const (
	forward mode = iota
	backward
	biased
)

// kern is the state of one kernel being emitted.
type kern struct {
	s             *x86.ISA
	m             mode
	pOut, pX, pIn reg.GPVirtual // output, x, and dy or bias
	k             *x86.Consts
	ex            *vexp.Emitter
}

// vec is the state of one vector.
type vec struct {
	off              int
	xs, xc, x2, s, q reg.VecVirtual
	e                vexp.Vec
}

func kernel(s *x86.ISA, m mode) {
	g := &kern{s: s, m: m}
	name := header(s, m)
	n := g.loadArgs()
	ptrs := []reg.GPVirtual{g.pX, g.pOut}
	if g.pIn != nil {
		ptrs = append(ptrs, g.pIn)
	}
	g.loadConsts()
	s.Loops(name, n, ptrs, unroll, masks, g.body)
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// header starts the kernel of mode m and returns its name.
func header(s *x86.ISA, m mode) string {
	switch m {
	case forward:
		return s.Header("geluRow",
			"sets dst[j] = gelu(x[j]) for j < len(x) (tanh form, see",
			"asm/gen/gelu); dst must be at least as long as x and may be x itself.")
	case backward:
		return s.Header("geluBackwardRow",
			"sets dx[j] = dy[j]·gelu'(x[j]) for j < len(x); dx and dy",
			"must be at least as long as x, and dx may be dy itself.")
	}
	return s.Header("biasGeluRow",
		"sets x[j] += bias[j] and then y[j] = gelu(x[j]) for",
		"j < len(x); y and bias must be at least as long as x, and y may be x",
		"itself (it then holds the GELU).")
}

// loadArgs loads the pointers and returns the length n.
func (g *kern) loadArgs() reg.GPVirtual {
	g.pX = x86.LoadGP(Param("x").Base())
	n := x86.LoadGP(Param("x").Len())
	switch g.m {
	case forward:
		g.pOut = x86.LoadGP(Param("dst").Base())
	case backward:
		g.pOut = x86.LoadGP(Param("dx").Base())
		g.pIn = x86.LoadGP(Param("dy").Base())
	case biased:
		g.pOut = x86.LoadGP(Param("y").Base())
		g.pIn = x86.LoadGP(Param("bias").Base())
	}
	return n
}

// loadConsts sets up the constants: AVX-512 keeps them in registers;
// AVX2, with 16 registers, reads them from memory (VMAXPS, VMINPS and
// VDIVPS take a register first operand, loaded per use).
func (g *kern) loadConsts() {
	s := g.s
	g.k = table.For(s)
	if s.Is512() {
		g.k.Keep(cNegClamp, cClamp, cNegK2, cExpMin, cOne, cZero,
			cExp+int(vexp.Log2e), cExp+int(vexp.Shifter), cExp+int(vexp.Ln2Hi), cExp+int(vexp.Ln2Lo))
		if g.m == backward {
			g.k.Keep(cK3)
		}
	}
	g.ex = &vexp.Emitter{AVX512: s.Is512(), NewVec: s.Vec,
		Op:   func(c vexp.Const) Op { return g.k.Op(cExp + int(c)) },
		Load: func(c vexp.Const, v reg.VecVirtual) { g.k.Set(cExp+int(c), v) }}
}

// body emits the kernel's work on k vectors, or on the tail under t.
func (g *kern) body(k int, t *x86.Tail) {
	vs := make([]*vec, k)
	evs := make([]*vexp.Vec, k)
	for i := range vs {
		vs[i] = &vec{off: g.s.Bytes() * i}
		evs[i] = &vs[i].e
	}
	g.loadClamped(vs, t)
	g.expArg(vs)
	g.keepMask(vs)
	g.ex.Exponent(evs, g.ex.InitShifter)
	g.ex.ReduceHi(evs)
	g.ex.ReduceLo(evs)
	g.ex.Poly(evs)
	g.ex.Scale(evs)
	g.sigmoid(vs)
	g.selectSign(vs)
	if g.m != backward {
		g.storeGELU(vs, t)
		return
	}
	g.storeBackward(vs, t)
}

func at(p reg.GPVirtual, v *vec) Mem { return Mem{Base: p, Disp: v.off} }

// loadClamped loads x (plus bias, stored back) and sets xs = max(x, -20),
// xc = min(xs, 20).
func (g *kern) loadClamped(vs []*vec, t *x86.Tail) {
	s := g.s
	for _, v := range vs {
		x := s.Load(at(g.pX, v), t)
		if g.m == biased {
			if t == nil {
				VADDPS(at(g.pIn, v), x, x)
			} else {
				b := s.Load(at(g.pIn, v), t)
				VADDPS(b, x, x)
			}
			s.Store(x, at(g.pX, v), t)
		}
		// The first (Intel second) source is returned when either is
		// NaN: x, then xs.
		v.xs = s.Vec()
		VMAXPS(x, g.k.Reg(cNegClamp), v.xs)
		v.xc = s.Vec()
		VMINPS(v.xs, g.k.Reg(cClamp), v.xc)
	}
}

// expArg sets the exponential's argument t = |xc|·(-2c - 2ca·xc²), in
// e.X, and x2 = xc².
func (g *kern) expArg(vs []*vec) {
	s := g.s
	for _, v := range vs {
		v.x2 = s.Vec()
		VMULPS(v.xc, v.xc, v.x2)
		h := s.Vec()
		g.k.Set(cNegK1, h)
		VFMADD231PS(g.k.Op(cNegK2), v.x2, h)
		v.e.X = s.Vec()
		VANDPS(g.k.Mem(cAbs), v.xc, v.e.X)
		VMULPS(h, v.e.X, v.e.X)
	}
}

// keepMask sets the lanes whose exponential is kept: t >= expMin (false
// for NaN; masked-off tail lanes are 0).
func (g *kern) keepMask(vs []*vec) {
	for _, v := range vs {
		if g.s.Is512() {
			v.e.KeepK = K()
			VCMPPS(Imm(cmpGEOQ), g.k.Op(cExpMin), v.e.X, v.e.KeepK)
			continue
		}
		v.e.KeepY = g.s.Vec()
		VCMPPS(Imm(cmpGEOQ), g.k.Op(cExpMin), v.e.X, v.e.KeepY)
	}
}

// sigmoid sets s = 1/(1 + e), turns e into es = e·s, and (backward) sets
// q = es·s.
func (g *kern) sigmoid(vs []*vec) {
	s := g.s
	for _, v := range vs {
		d := s.Vec()
		VADDPS(g.k.Op(cOne), v.e.P, d)
		v.s = s.Vec()
		VDIVPS(d, g.k.Reg(cOne), v.s)
	}
	for _, v := range vs {
		VMULPS(v.s, v.e.P, v.e.P)
		if g.m == backward {
			v.q = s.Vec()
			VMULPS(v.s, v.e.P, v.q)
		}
	}
}

// selectSign sets σ = es where xc < 0, s elsewhere, in s's register.
func (g *kern) selectSign(vs []*vec) {
	for _, v := range vs {
		if g.s.Is512() {
			neg := K()
			VCMPPS(Imm(cmpLTOQ), g.k.Op(cZero), v.xc, neg)
			VMOVAPS(v.e.P, neg, v.s)
			continue
		}
		VBLENDVPS(v.xc, v.e.P, v.s, v.s)
	}
}

// storeGELU stores gelu = xs·σ.
func (g *kern) storeGELU(vs []*vec, t *x86.Tail) {
	for _, v := range vs {
		VMULPS(v.xs, v.s, v.s)
		g.s.Store(v.s, at(g.pOut, v), t)
	}
}

// storeBackward stores dx = dy·gelu', gelu' = σ + (xc·q)·(2c + 6ca·xc²).
func (g *kern) storeBackward(vs []*vec, t *x86.Tail) {
	s := g.s
	for _, v := range vs {
		h := s.Vec()
		g.k.Set(cK1, h)
		VFMADD231PS(g.k.Op(cK3), v.x2, h)
		VMULPS(v.xc, v.q, v.q)
		VFMADD231PS(h, v.q, v.s)
	}
	for _, v := range vs {
		if t == nil {
			VMULPS(at(g.pIn, v), v.s, v.s)
		} else {
			dy := s.Load(at(g.pIn, v), t)
			VMULPS(dy, v.s, v.s)
		}
		s.Store(v.s, at(g.pOut, v), t)
	}
}
