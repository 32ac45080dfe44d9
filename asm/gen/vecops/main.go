// Command vecops generates the AVX2+FMA (YMM) and AVX-512 (ZMM) vector
// operations of package kernels/amd64: Dot, Axpy, Scale, Add, Sum and Max,
// into vecops_amd64.s.
//
// Every kernel is written once, against an x86.ISA value that supplies the
// lane count, the register constructor and the masked tail, and is emitted
// for both widths. The shape of each kernel is the same: a loop over four
// vectors (with independent accumulators for the reductions), a loop over
// single vectors, and a final masked step for the last lanes-1 or fewer
// elements, so there is no scalar loop. AVX2 masks its tail with
// VMASKMOVPS and a mask read from a constant table; AVX-512 uses an opmask
// read from a constant table with zeroing (or merging) masked moves. Neither
// faults on masked-off lanes, so no kernel touches memory outside its
// slices.
package main

import (
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/simdgpt/simdgpt/asm/gen/internal/x86"
)

// unroll is the number of vectors processed by one iteration of the main
// loop, and the number of accumulators of the reductions.
const unroll = 4

// Constant tables shared by both widths.
var (
	// masks are the tail masks (the form: table address, then index).
	masks *x86.Masks
	// negInf is float32 -Inf, the identity of Max.
	negInf Mem
)

func main() {
	ConstraintExpr("amd64,!purego")
	masks = x86.NewMasks("vecopsMaskAVX2", "vecopsMaskAVX512", x86.MaskForm{})
	negInf = GLOBL("vecopsNegInf", RODATA|NOPTR)
	DATA(0, U32(math.Float32bits(float32(math.Inf(-1)))))
	for _, s := range x86.Both {
		dot(s)
		axpy(s)
		scale(s)
		add(s)
		sum(s)
		maxOp(s)
	}
	x86.Finish()
}

// loadFill loads the lanes of t at m into dst and sets the others to the
// float32 at fill.
func loadFill(s *x86.ISA, m, fill Mem, t *x86.Tail, dst reg.VecVirtual) {
	if s.Is512() {
		VBROADCASTSS(fill, dst)
		VMOVUPS(m, t.K, dst) // merge masking
		return
	}
	f := YMM()
	VBROADCASTSS(fill, f)
	VMASKMOVPS(m, t.Y, dst)
	VBLENDVPS(t.Y, dst, f, dst)
}

// storeResult stores lane 0 of x as the float32 result, with a VEX move
// (a legacy-SSE MOVSS after dirtying the upper halves can stall).
func storeResult(x reg.Register) {
	VMOVSS(x, x86.Ret(0))
}

func dot(s *x86.ISA) {
	name := s.Header("dot",
		"returns the sum of x[i]*y[i]. len(y) must equal len(x).",
		"It keeps four vector accumulators and uses FMA, so the rounding differs from a sequential loop.")
	x := x86.LoadGP(Param("x").Base())
	y := x86.LoadGP(Param("y").Base())
	n := x86.LoadGP(Param("x").Len())
	acc := s.Zeros(unroll)
	s.Loops(name, n, []reg.GPVirtual{x, y}, unroll, masks, x86.Split(func(k int) {
		for j := 0; j < k; j++ {
			t := s.Vec()
			VMOVUPS(s.At(x, j), t)
			VFMADD231PS(s.At(y, j), t, acc[j])
		}
	}, func(tl *x86.Tail) {
		tx, ty := s.Vec(), s.Vec()
		s.LoadTo(s.At(x, 0), tl, tx)
		s.LoadTo(s.At(y, 0), tl, ty)
		VFMADD231PS(ty, tx, acc[1])
	}))
	Label(name + "_done")
	storeResult(s.ReduceLow(VADDPS, acc))
	VZEROUPPER()
	RET()
}

func sum(s *x86.ISA) {
	name := s.Header("sum",
		"returns the sum of the elements of x, 0 if x is empty.",
		"It keeps four vector accumulators, so the rounding differs from a sequential loop.")
	x := x86.LoadGP(Param("x").Base())
	n := x86.LoadGP(Param("x").Len())
	acc := s.Zeros(unroll)
	s.Loops(name, n, []reg.GPVirtual{x}, unroll, masks, x86.Split(func(k int) {
		for j := 0; j < k; j++ {
			VADDPS(s.At(x, j), acc[j], acc[j])
		}
	}, func(tl *x86.Tail) {
		t := s.Vec()
		s.LoadTo(s.At(x, 0), tl, t)
		VADDPS(t, acc[1], acc[1])
	}))
	Label(name + "_done")
	storeResult(s.ReduceLow(VADDPS, acc))
	VZEROUPPER()
	RET()
}

func axpy(s *x86.ISA) {
	name := s.Header("axpy",
		"sets y[i] += alpha*x[i] with a fused multiply-add (one rounding).",
		"len(y) must equal len(x).")
	alpha := s.Broadcast("alpha")
	x := x86.LoadGP(Param("x").Base())
	y := x86.LoadGP(Param("y").Base())
	n := x86.LoadGP(Param("x").Len())
	s.Loops(name, n, []reg.GPVirtual{x, y}, unroll, masks, x86.Split(func(k int) {
		t := make([]reg.VecVirtual, k)
		for j := range t {
			t[j] = s.Vec()
			VMOVUPS(s.At(y, j), t[j])
			VFMADD231PS(s.At(x, j), alpha, t[j])
		}
		for j := range t {
			VMOVUPS(t[j], s.At(y, j))
		}
	}, func(tl *x86.Tail) {
		tx, ty := s.Vec(), s.Vec()
		s.LoadTo(s.At(x, 0), tl, tx)
		s.LoadTo(s.At(y, 0), tl, ty)
		VFMADD231PS(tx, alpha, ty)
		s.Store(ty, s.At(y, 0), tl)
	}))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

func scale(s *x86.ISA) {
	name := s.Header("scale",
		"sets x[i] *= alpha.")
	alpha := s.Broadcast("alpha")
	x := x86.LoadGP(Param("x").Base())
	n := x86.LoadGP(Param("x").Len())
	s.Loops(name, n, []reg.GPVirtual{x}, unroll, masks, x86.Split(func(k int) {
		t := make([]reg.VecVirtual, k)
		for j := range t {
			t[j] = s.Vec()
			VMULPS(s.At(x, j), alpha, t[j])
		}
		for j := range t {
			VMOVUPS(t[j], s.At(x, j))
		}
	}, func(tl *x86.Tail) {
		t := s.Vec()
		s.LoadTo(s.At(x, 0), tl, t)
		VMULPS(t, alpha, t)
		s.Store(t, s.At(x, 0), tl)
	}))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

func add(s *x86.ISA) {
	name := s.Header("add",
		"sets dst[i] = x[i] + y[i]. x and y must be as long as dst;",
		"dst may be x or y (the same slice), but must not otherwise overlap them.")
	d := x86.LoadGP(Param("dst").Base())
	x := x86.LoadGP(Param("x").Base())
	y := x86.LoadGP(Param("y").Base())
	n := x86.LoadGP(Param("dst").Len())
	s.Loops(name, n, []reg.GPVirtual{d, x, y}, unroll, masks, x86.Split(func(k int) {
		t := make([]reg.VecVirtual, k)
		for j := range t {
			t[j] = s.Vec()
			VMOVUPS(s.At(x, j), t[j])
			VADDPS(s.At(y, j), t[j], t[j])
		}
		for j := range t {
			VMOVUPS(t[j], s.At(d, j))
		}
	}, func(tl *x86.Tail) {
		tx, ty := s.Vec(), s.Vec()
		s.LoadTo(s.At(x, 0), tl, tx)
		s.LoadTo(s.At(y, 0), tl, ty)
		VADDPS(ty, tx, tx)
		s.Store(tx, s.At(d, 0), tl)
	}))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// nanTracker records whether any lane of the vectors given to it is NaN:
// an OR of unordered-compare masks, in a vector register (AVX2) or an
// opmask register (AVX-512). VMAXPS alone does not propagate NaN.
type nanTracker struct {
	s *x86.ISA
	v reg.VecVirtual
	k reg.OpmaskVirtual
}

func newNaNTracker(s *x86.ISA) *nanTracker {
	t := &nanTracker{s: s}
	if s.Is512() {
		t.k = K()
		KXORW(t.k, t.k, t.k)
	} else {
		t.v = YMM()
		VXORPS(t.v, t.v, t.v)
	}
	return t
}

// add records the NaN lanes of x and y.
func (t *nanTracker) add(x, y reg.VecVirtual) {
	if t.s.Is512() {
		m := K()
		VCMPPS(U8(3), y, x, m) // predicate 3: unordered
		KORW(m, t.k, t.k)
		return
	}
	m := YMM()
	VCMPPS(U8(3), y, x, m)
	VORPS(m, t.v, t.v)
}

// jumpIfAny jumps to label if a NaN was recorded.
func (t *nanTracker) jumpIfAny(label string) {
	if t.s.Is512() {
		KORTESTW(t.k, t.k)
	} else {
		VPTEST(t.v, t.v)
	}
	JNZ(LabelRef(label))
}

func maxOp(s *x86.ISA) {
	name := s.Header("max",
		"returns the largest element of x, -Inf if x is empty.",
		"If any element is NaN it returns the first NaN element of x.",
		"The sign of a zero result is unspecified when x holds both +0 and -0.")
	x := x86.LoadGP(Param("x").Base())
	n := x86.LoadGP(Param("x").Len())
	acc := make([]reg.VecVirtual, unroll)
	for i := range acc {
		acc[i] = s.Vec()
		VBROADCASTSS(negInf, acc[i])
	}
	nan := newNaNTracker(s)
	s.Loops(name, n, []reg.GPVirtual{x}, unroll, masks, x86.Split(func(k int) {
		t := make([]reg.VecVirtual, k)
		for j := range t {
			t[j] = s.Vec()
			VMOVUPS(s.At(x, j), t[j])
			VMAXPS(t[j], acc[j], acc[j])
		}
		for j := 0; j < k; j += 2 {
			nan.add(t[j], t[min(j+1, k-1)])
		}
	}, func(tl *x86.Tail) {
		t := s.Vec()
		loadFill(s, s.At(x, 0), negInf, tl, t)
		VMAXPS(t, acc[1], acc[1])
		nan.add(t, t)
	}))
	Label(name + "_done")
	nan.jumpIfAny(name + "_nan")
	Label(name + "_reduce")
	storeResult(s.ReduceLow(VMAXPS, acc))
	VZEROUPPER()
	RET()

	// Rare path: find and return the first NaN element, so that the result
	// is bitwise the one a sequential loop returns.
	Label(name + "_nan")
	p := x86.LoadGP(Param("x").Base())
	m := x86.LoadGP(Param("x").Len())
	e := XMM()
	Label(name + "_scan")
	VMOVSS(Mem{Base: p}, e)
	VUCOMISS(e, e)
	JP(LabelRef(name + "_found"))
	ADDQ(U8(4), p)
	DECQ(m)
	JNZ(LabelRef(name + "_scan"))
	JMP(LabelRef(name + "_reduce")) // not reached: a NaN was seen
	Label(name + "_found")
	storeResult(e)
	VZEROUPPER()
	RET()
}
