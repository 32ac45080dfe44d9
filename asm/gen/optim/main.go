// Command optim generates the optimizer kernels of package kernels/amd64
// for AVX2 (YMM registers, VMASKMOVPS tails) and AVX-512F (ZMM registers,
// opmask tails): the AdamW update and the sum of squares of the global
// gradient norm.
//
// # AdamW
//
// adamw{AVX2,AVX512}(p, g, m, v, scale, b1, c1, b2, c2, ic1, ic2, eps, wd,
// lr) runs one pass over the four arrays, a vector at a time:
//
//	g  = G*scale
//	mi = b1*M + c1*g;          M = mi
//	vi = b2*V + (c2*g)*g;      V = vi
//	u  = (mi*ic1) / (sqrt(vi*ic2) + eps)
//	u  = u + wd*P              (only in the loop chosen when wd != 0)
//	P  = P - lr*u
//
// every operation rounded on its own, in the order of generic.AdamW: no
// FMA, so that the results are bitwise those of the scalar Go reference
// (VSQRTPS and VDIVPS are correctly rounded, like float32(math.Sqrt) and
// the Go division). The kernel is bound by the divider (one VSQRTPS and
// one VDIVPS a vector) and by memory, not by the multiplications FMA
// would save. AVX-512 keeps the ten scalars in registers and processes four
// vectors a block; AVX2, with sixteen registers, keeps them broadcast in
// its stack frame (memory operands) and processes two.
//
// # SumSquares
//
// sumSquares{AVX2,AVX512}(x) widens every float to float64 (VCVTPS2PD),
// where its square is exact, and accumulates the squares with VFMADD231PD
// into eight float64 vector accumulators (one rounding per addition,
// exactly as a multiplication then an addition would give), which are
// added pairwise and then across lanes at the end. Every lane sums a
// sequence of its own, so the relative error is below (len(x)/lanes +
// 8)·2^-53.
//
// # Tails
//
// The last len%lanes elements are processed by one masked step (zeroing
// loads, masked stores), so nothing outside the slices is read or written
// and no element is left to scalar code.
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/gotypes"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/simdgpt/simdgpt/asm/gen/internal/masks"
)

// Constant tables of the masked tails.
var (
	maskAVX2   Mem // VMASKMOVPS lane masks (masks.LanesAVX2)
	maskAVX512 Mem // opmasks (masks.OpmasksAVX512)
)

// isa describes one vector width.
type isa struct {
	suffix   string // function name suffix
	lanes    int    // float32 lanes per vector
	requires string // CPU features, for the doc comments
	vec      func() reg.VecVirtual
	// adamUnroll is the number of vectors of an AdamW block.
	adamUnroll int

	// Per-function state of the masked tail.
	ymask reg.VecVirtual    // AVX2
	kmask reg.OpmaskVirtual // AVX-512
}

func (a *isa) avx512() bool { return a.lanes == 16 }

var isas = []*isa{
	{suffix: "AVX2", lanes: 8, requires: "AVX2 and FMA", adamUnroll: 2, vec: func() reg.VecVirtual { return YMM() }},
	{suffix: "AVX512", lanes: 16, requires: "AVX-512F", adamUnroll: 4, vec: func() reg.VecVirtual { return ZMM() }},
}

func main() {
	ConstraintExpr("amd64,!purego")
	maskAVX2 = masks.LanesAVX2("optimMaskAVX2")
	maskAVX512 = masks.OpmasksAVX512("optimMaskAVX512")
	for _, a := range isas {
		adamw(a)
		sumSquares(a)
	}
	Generate()
}

// header starts a function and its stub declaration.
func (a *isa) header(op, signature string, doc ...string) string {
	name := op + a.suffix
	TEXT(name, NOSPLIT, signature)
	Pragma("noescape")
	doc = append(doc, "Requires "+a.requires+". Arguments are not checked.")
	doc[0] = name + " " + doc[0]
	Doc(doc...)
	return name
}

func load(c gotypes.Component) reg.GPVirtual {
	r := GP64()
	Load(c, r)
	return r
}

// addr returns the stack address of a scalar parameter or result.
func addr(c gotypes.Component) Mem {
	b, err := c.Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

// at returns the address of vector j of the block starting at p.
func (a *isa) at(p reg.GPVirtual, j int) Mem { return Mem{Base: p, Disp: 4 * a.lanes * j} }

// loops emits the iteration over n elements of the arrays at ptrs, all
// advanced together: blocks of unroll vectors, then single vectors (if
// unroll > 1), then one masked step for the last 0 < n < lanes elements,
// for which body gets tail = true after the mask has been prepared.
// Control then reaches the label name+"_done", which the caller emits.
func (a *isa) loops(name string, n reg.GPVirtual, ptrs []reg.GPVirtual, unroll int, body func(k int, tail bool)) {
	step := func(k int, next string) {
		Label(fmt.Sprintf("%s_loop%d", name, k))
		CMPQ(n, U32(k*a.lanes))
		JB(LabelRef(next))
		body(k, false)
		for _, p := range ptrs {
			ADDQ(U32(4*k*a.lanes), p)
		}
		SUBQ(U32(k*a.lanes), n)
		JMP(LabelRef(fmt.Sprintf("%s_loop%d", name, k)))
	}
	if unroll > 1 {
		step(unroll, fmt.Sprintf("%s_loop%d", name, 1))
	}
	step(1, name+"_tail")

	Label(name + "_tail")
	TESTQ(n, n)
	JZ(LabelRef(name + "_done"))
	a.tailMask(n)
	body(1, true)
}

// tailMask prepares the mask selecting the first n lanes, 0 < n < lanes.
func (a *isa) tailMask(n reg.GPVirtual) {
	table := GP64()
	if a.avx512() {
		LEAQ(maskAVX512, table)
		a.kmask = K()
		KMOVW(Mem{Base: table, Index: n, Scale: 2}, a.kmask)
		return
	}
	LEAQ(maskAVX2, table)
	idx := GP64()
	MOVQ(U32(8), idx)
	SUBQ(n, idx)
	a.ymask = YMM()
	VMOVDQU(Mem{Base: table, Index: idx, Scale: 4}, a.ymask)
}

// loadVec loads a whole vector, or the tail lanes (the others zeroed).
func (a *isa) loadVec(m Mem, tail bool) reg.VecVirtual {
	v := a.vec()
	switch {
	case !tail:
		VMOVUPS(m, v)
	case a.avx512():
		VMOVUPS_Z(m, a.kmask, v)
	default:
		VMASKMOVPS(m, a.ymask, v)
	}
	return v
}

// storeVec stores a whole vector, or only its tail lanes.
func (a *isa) storeVec(v reg.VecVirtual, m Mem, tail bool) {
	switch {
	case !tail:
		VMOVUPS(v, m)
	case a.avx512():
		VMOVUPS(v, a.kmask, m)
	default:
		VMASKMOVPS(v, a.ymask, m)
	}
}

// The scalars of adamw, in the order of its signature.
var adamScalars = []string{"scale", "b1", "c1", "b2", "c2", "ic1", "ic2", "eps", "wd", "lr"}

func adamw(a *isa) {
	name := a.header("adamw", "func(p, g, m, v []float32, scale, b1, c1, b2, c2, ic1, ic2, eps, wd, lr float32)",
		"applies one AdamW step to p[i], m[i] and v[i] for i < len(p) from the",
		"gradients g (see generic.AdamW): g, m and v must be as long as p and no",
		"two may overlap; c1 = 1-b1 and c2 = 1-b2 as float32. The weight-decay term",
		"is added only if wd != 0. Each operation is rounded as in generic.AdamW",
		"(no FMA), so the results are bitwise the same.")
	// The scalars: registers on AVX-512, broadcast into the stack frame on
	// AVX2 (16 registers are too few for them and two vectors in flight).
	k := map[string]Op{}
	var local Mem
	if !a.avx512() {
		local = AllocLocal(32 * len(adamScalars))
	}
	for i, s := range adamScalars {
		v := a.vec()
		VBROADCASTSS(addr(Param(s)), v)
		if a.avx512() {
			k[s] = v
			continue
		}
		m := local.Offset(32 * i)
		VMOVUPS(v, m)
		k[s] = m
	}
	p := load(Param("p").Base())
	g := load(Param("g").Base())
	m := load(Param("m").Base())
	v := load(Param("v").Base())
	n := load(Param("p").Len())
	ptrs := []reg.GPVirtual{p, g, m, v}

	wd := XMM()
	zero := XMM()
	VMOVSS(addr(Param("wd")), wd)
	VXORPS(zero, zero, zero)
	VUCOMISS(zero, wd)
	JNE(LabelRef(name + "_decay")) // wd != 0, or NaN
	JP(LabelRef(name + "_decay"))
	for _, decay := range []bool{false, true} {
		lname := name + "_plain"
		if decay {
			Label(name + "_decay")
			lname = name + "_decayed"
		}
		a.loops(lname, n, ptrs, a.adamUnroll, func(nv int, tail bool) {
			for j := 0; j < nv; j++ {
				a.adamVec(k, p, g, m, v, j, tail, decay)
			}
		})
		Label(lname + "_done")
		VZEROUPPER()
		RET()
	}
}

// adamVec emits the update of vector j of the block at p, g, m, v (see
// the package comment); k holds the scalars' operands.
func (a *isa) adamVec(k map[string]Op, p, g, m, v reg.GPVirtual, j int, tail, decay bool) {
	gv := a.loadVec(a.at(g, j), tail)
	VMULPS(k["scale"], gv, gv) // g
	t := a.vec()
	mv := a.loadVec(a.at(m, j), tail)
	VMULPS(k["b1"], mv, mv)
	VMULPS(k["c1"], gv, t)
	VADDPS(t, mv, mv) // mi
	a.storeVec(mv, a.at(m, j), tail)
	vv := a.loadVec(a.at(v, j), tail)
	VMULPS(k["b2"], vv, vv)
	VMULPS(k["c2"], gv, t)
	VMULPS(gv, t, t)
	VADDPS(t, vv, vv) // vi
	a.storeVec(vv, a.at(v, j), tail)
	VMULPS(k["ic2"], vv, vv)
	VSQRTPS(vv, vv)
	VADDPS(k["eps"], vv, vv) // denominator
	VMULPS(k["ic1"], mv, mv)
	VDIVPS(vv, mv, mv) // u = mi*ic1 / denominator
	pv := a.loadVec(a.at(p, j), tail)
	if decay {
		VMULPS(k["wd"], pv, t)
		VADDPS(t, mv, mv)
	}
	VMULPS(k["lr"], mv, mv)
	VSUBPS(mv, pv, pv) // p - lr*u
	a.storeVec(pv, a.at(p, j), tail)
}

// nacc is the number of float64 accumulators of sumSquares.
const nacc = 8

func sumSquares(a *isa) {
	name := a.header("sumSquares", "func(x []float32) float64",
		"returns the sum of x[i]*x[i], each square exact in float64 and summed in",
		"float64 in eight vector accumulators (0 if x is empty).")
	x := load(Param("x").Base())
	n := load(Param("x").Len())
	acc := make([]reg.VecVirtual, nacc)
	for i := range acc {
		acc[i] = a.vec()
		if a.avx512() {
			VPXORD(acc[i], acc[i], acc[i]) // VXORPD on ZMM would need AVX512DQ
		} else {
			VXORPD(acc[i], acc[i], acc[i])
		}
	}
	// Vector j of a block: its low and high halves widened into two
	// float64 vectors, squared into accumulators 2j%nacc and 2j%nacc+1.
	half := 2 * a.lanes // bytes of half a float32 vector
	a.loops(name, n, []reg.GPVirtual{x}, 4, func(nv int, tail bool) {
		for j := 0; j < nv; j++ {
			lo, hi := a.vec(), a.vec()
			if !tail {
				VCVTPS2PD(Mem{Base: x, Disp: 4 * a.lanes * j}, lo)
				VCVTPS2PD(Mem{Base: x, Disp: 4*a.lanes*j + half}, hi)
			} else {
				f := a.loadVec(a.at(x, j), true)
				if a.avx512() {
					h := YMM()
					VCVTPS2PD(f.AsY(), lo)
					VEXTRACTF64X4(U8(1), f, h)
					VCVTPS2PD(h, hi)
				} else {
					h := XMM()
					VCVTPS2PD(f.AsX(), lo)
					VEXTRACTF128(U8(1), f, h)
					VCVTPS2PD(h, hi)
				}
			}
			a0 := acc[2*j%nacc]
			a1 := acc[2*j%nacc+1]
			VFMADD231PD(lo, lo, a0)
			VFMADD231PD(hi, hi, a1)
		}
	})
	Label(name + "_done")
	for w := 1; w < nacc; w *= 2 {
		for i := 0; i+w < nacc; i += 2 * w {
			VADDPD(acc[i+w], acc[i], acc[i])
		}
	}
	s := acc[0]
	if a.avx512() {
		h := YMM()
		VEXTRACTF64X4(U8(1), s, h)
		VADDPD(h, s.AsY(), s.AsY())
	}
	h := XMM()
	VEXTRACTF128(U8(1), s.AsY(), h)
	sx := s.AsX()
	VADDPD(h, sx, sx)
	VPERMILPD(U8(1), sx, h) // swap the two doubles
	VADDSD(h, sx, sx)
	VMOVSD(sx, addr(ReturnIndex(0)))
	VZEROUPPER()
	RET()
}
