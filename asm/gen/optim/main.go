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
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/simdgpt/simdgpt/asm/gen/internal/x86"
)

// masks are the tail masks (the form: table address, then index).
var masks *x86.Masks

// adamUnroll is the number of vectors of an AdamW block: AVX2 has too few
// registers for more than two in flight.
func adamUnroll(s *x86.ISA) int {
	if s.Is512() {
		return 4
	}
	return 2
}

func main() {
	ConstraintExpr("amd64,!purego")
	masks = x86.NewMasks("optimMaskAVX2", "optimMaskAVX512", x86.MaskForm{})
	for _, s := range x86.Both {
		adamw(s)
		sumSquares(s)
	}
	x86.Finish()
}

// The scalars of adamw, in the order of its signature.
var adamScalars = []string{"scale", "b1", "c1", "b2", "c2", "ic1", "ic2", "eps", "wd", "lr"}

func adamw(s *x86.ISA) {
	name := s.Header("adamw",
		"applies one AdamW step to p[i], m[i] and v[i] for i < len(p) from the",
		"gradients g (see generic.AdamW): g, m and v must be as long as p and no",
		"two may overlap; c1 = 1-b1 and c2 = 1-b2 as float32. The weight-decay term",
		"is added only if wd != 0. Each operation is rounded as in generic.AdamW",
		"(no FMA), so the results are bitwise the same.")
	// The scalars: registers on AVX-512, broadcast into the stack frame on
	// AVX2 (16 registers are too few for them and two vectors in flight).
	k := map[string]Op{}
	var local Mem
	if !s.Is512() {
		local = AllocLocal(32 * len(adamScalars))
	}
	for i, sc := range adamScalars {
		v := s.Vec()
		VBROADCASTSS(x86.Addr(Param(sc)), v)
		if s.Is512() {
			k[sc] = v
			continue
		}
		m := local.Offset(32 * i)
		VMOVUPS(v, m)
		k[sc] = m
	}
	p := x86.LoadGP(Param("p").Base())
	g := x86.LoadGP(Param("g").Base())
	m := x86.LoadGP(Param("m").Base())
	v := x86.LoadGP(Param("v").Base())
	n := x86.LoadGP(Param("p").Len())
	ptrs := []reg.GPVirtual{p, g, m, v}

	wd := XMM()
	zero := XMM()
	VMOVSS(x86.Addr(Param("wd")), wd)
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
		s.Loops(lname, n, ptrs, adamUnroll(s), masks, func(nv int, t *x86.Tail) {
			for j := 0; j < nv; j++ {
				adamVec(s, k, p, g, m, v, j, t, decay)
			}
		})
		Label(lname + "_done")
		VZEROUPPER()
		RET()
	}
}

// adamVec emits the update of vector j of the block at p, g, m, v (see
// the package comment); k holds the scalars' operands.
func adamVec(s *x86.ISA, k map[string]Op, p, g, m, v reg.GPVirtual, j int, tl *x86.Tail, decay bool) {
	gv := s.Load(s.At(g, j), tl)
	VMULPS(k["scale"], gv, gv) // g
	t := s.Vec()
	mv := s.Load(s.At(m, j), tl)
	VMULPS(k["b1"], mv, mv)
	VMULPS(k["c1"], gv, t)
	VADDPS(t, mv, mv) // mi
	s.Store(mv, s.At(m, j), tl)
	vv := s.Load(s.At(v, j), tl)
	VMULPS(k["b2"], vv, vv)
	VMULPS(k["c2"], gv, t)
	VMULPS(gv, t, t)
	VADDPS(t, vv, vv) // vi
	s.Store(vv, s.At(v, j), tl)
	VMULPS(k["ic2"], vv, vv)
	VSQRTPS(vv, vv)
	VADDPS(k["eps"], vv, vv) // denominator
	VMULPS(k["ic1"], mv, mv)
	VDIVPS(vv, mv, mv) // u = mi*ic1 / denominator
	pv := s.Load(s.At(p, j), tl)
	if decay {
		VMULPS(k["wd"], pv, t)
		VADDPS(t, mv, mv)
	}
	VMULPS(k["lr"], mv, mv)
	VSUBPS(mv, pv, pv) // p - lr*u
	s.Store(pv, s.At(p, j), tl)
}

// nacc is the number of float64 accumulators of sumSquares.
const nacc = 8

func sumSquares(s *x86.ISA) {
	name := s.Header("sumSquares",
		"returns the sum of x[i]*x[i], each square exact in float64 and summed in",
		"float64 in eight vector accumulators (0 if x is empty).")
	x := x86.LoadGP(Param("x").Base())
	n := x86.LoadGP(Param("x").Len())
	acc := make([]reg.VecVirtual, nacc)
	for i := range acc {
		acc[i] = s.Vec()
		if s.Is512() {
			VPXORD(acc[i], acc[i], acc[i]) // VXORPD on ZMM would need AVX512DQ
		} else {
			VXORPD(acc[i], acc[i], acc[i])
		}
	}
	// Vector j of a block: its low and high halves widened into two
	// float64 vectors, squared into accumulators 2j%nacc and 2j%nacc+1.
	half := 2 * s.Lanes // bytes of half a float32 vector
	s.Loops(name, n, []reg.GPVirtual{x}, 4, masks, func(nv int, t *x86.Tail) {
		for j := 0; j < nv; j++ {
			lo, hi := s.Vec(), s.Vec()
			if t == nil {
				VCVTPS2PD(Mem{Base: x, Disp: 4 * s.Lanes * j}, lo)
				VCVTPS2PD(Mem{Base: x, Disp: 4*s.Lanes*j + half}, hi)
			} else {
				f := s.Load(s.At(x, j), t)
				if s.Is512() {
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
	x86.Tree(VADDPD, acc)
	total := acc[0]
	if s.Is512() {
		h := YMM()
		VEXTRACTF64X4(U8(1), total, h)
		VADDPD(h, total.AsY(), total.AsY())
	}
	h := XMM()
	VEXTRACTF128(U8(1), total.AsY(), h)
	sx := total.AsX()
	VADDPD(h, sx, sx)
	VPERMILPD(U8(1), sx, h) // swap the two doubles
	VADDSD(h, sx, sx)
	VMOVSD(sx, x86.Ret(0))
	VZEROUPPER()
	RET()
}
