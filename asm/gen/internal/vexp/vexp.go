// Package vexp emits, with avo, the steps of the vectorised float32
// exponential shared by the AVX2 and AVX-512 generators (asm/gen/softmax,
// asm/gen/gelu): exp(t) = 2^k * p(r) with k = round(t*log2(e)) from the
// 1.5*2^23 shifter, r = t - k*ln2 reduced Cody-Waite fashion, and p the
// degree-5 polynomial of package expf (the derivation and the error bounds
// are in asm/gen/softmax's package comment).
//
// Every step is emitted for a list of vectors at once, one instruction per
// vector before the next instruction, so that the vectors' dependency
// chains interleave. The steps are, in order:
//
//	Exponent   z = init + x*log2e; kf = z - 1.5*2^23 (k as a float)
//	ReduceHi   x -= kf*ln2Hi   (the "far" reduction: x holds t, exact)
//	ReduceLo   x -= kf*ln2Lo   (x now holds r, |r| <= 0.3495)
//	Poly       p = c0 + r*(c1 + r*(... + r*c5))
//	Scale      e = p * 2^k, 0 in the lanes outside keep
//
// A generator may replace a step by its own (the softmax's "near"
// reduction replaces ReduceHi).
package vexp

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/simdgpt/simdgpt/asm/gen/internal/expf"
)

// Const names a constant of the exponential.
type Const int

// The constants; Poly0+i is expf.Poly[i].
const (
	Log2e Const = iota
	Shifter
	Ln2Hi
	Ln2Lo
	Poly0
)

// Deg is the degree of the polynomial.
const Deg = Const(len(expf.Poly) - 1)

// Value returns the float32 value of c.
func Value(c Const) float32 {
	switch c {
	case Log2e:
		return expf.Log2E
	case Shifter:
		return expf.Shifter
	case Ln2Hi:
		return expf.Ln2Hi
	case Ln2Lo:
		return expf.Ln2Lo
	}
	return expf.Poly[c-Poly0]
}

// Emitter emits the steps for one vector width.
type Emitter struct {
	// AVX512: ZMM registers, VSCALEFPS and opmasks; otherwise YMM
	// registers and the exponent added with integer instructions.
	AVX512 bool
	// NewVec allocates a vector register of the width.
	NewVec func() reg.VecVirtual
	// Op returns constant c as an operand: a register holding it in every
	// lane, or a full-width memory operand.
	Op func(c Const) Op
	// Load loads constant c into every lane of v.
	Load func(c Const, v reg.VecVirtual)
}

// Vec is the state of one vector: X holds the argument (and then r); Z,
// KF and P are allocated by the steps.
type Vec struct {
	X, Z, KF, P reg.VecVirtual
	// Keep selects the lanes whose exponential is kept by Scale (the
	// others become +0): an opmask on AVX-512, a lane mask on AVX2.
	KeepK reg.OpmaskVirtual
	KeepY reg.VecVirtual
}

// Exponent emits z = init + x*log2e, where init(v, z) loads the addend
// (1.5*2^23 for the plain reduction) into z, and kf = z - 1.5*2^23: on
// AVX-512 kf takes z's register (VSCALEFPS takes k as a float), on AVX2 a
// new one (Scale adds z's low bits into the exponent field).
func (e *Emitter) Exponent(vs []*Vec, init func(v *Vec, z reg.VecVirtual)) {
	for _, v := range vs {
		v.Z = e.NewVec()
		init(v, v.Z)
		VFMADD231PS(e.Op(Log2e), v.X, v.Z)
	}
	for _, v := range vs {
		if e.AVX512 {
			v.KF = v.Z
		} else {
			v.KF = e.NewVec()
		}
		VSUBPS(e.Op(Shifter), v.Z, v.KF)
	}
}

// InitShifter is the init of Exponent for the plain reduction.
func (e *Emitter) InitShifter(_ *Vec, z reg.VecVirtual) { e.Load(Shifter, z) }

// ReduceHi emits x -= kf*ln2Hi, exact (k*ln2Hi has 9+16 significant bits
// and lies within a factor 2 of x where it matters).
func (e *Emitter) ReduceHi(vs []*Vec) {
	for _, v := range vs {
		VFNMADD231PS(e.Op(Ln2Hi), v.KF, v.X)
	}
}

// ReduceLo emits x -= kf*ln2Lo.
func (e *Emitter) ReduceLo(vs []*Vec) {
	for _, v := range vs {
		VFNMADD231PS(e.Op(Ln2Lo), v.KF, v.X)
	}
}

// Poly emits p(r), r in X, by Horner's rule with FMA. On AVX-512 p takes
// a new register (kf is still needed by Scale); on AVX2 it takes kf's.
func (e *Emitter) Poly(vs []*Vec) {
	for _, v := range vs {
		if e.AVX512 {
			v.P = e.NewVec()
		} else {
			v.P = v.KF
		}
		e.Load(Poly0+Deg-1, v.P)
		VFMADD231PS(e.Op(Poly0+Deg), v.X, v.P)
	}
	for i := Deg - 2; i >= 0; i-- {
		for _, v := range vs {
			VFMADD213PS(e.Op(Poly0+Const(i)), v.X, v.P)
		}
	}
}

// Scale emits p = p * 2^k in the lanes of Keep and +0 in the others. On
// AVX-512 this is VSCALEFPS (NaN-transparent); on AVX2, z<<23 added to
// the bits of p, which is exact while the result is a normal number, then
// AND-ed with the keep mask.
func (e *Emitter) Scale(vs []*Vec) {
	for _, v := range vs {
		if e.AVX512 {
			VSCALEFPS_Z(v.KF, v.P, v.KeepK, v.P)
			continue
		}
		VPSLLD(Imm(23), v.Z, v.Z) // k << 23
		VPADDD(v.Z, v.P, v.P)     // added into the exponent field
		VANDPS(v.KeepY, v.P, v.P)
	}
}
