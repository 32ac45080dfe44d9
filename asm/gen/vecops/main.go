// Command vecops generates the AVX2+FMA (YMM) and AVX-512 (ZMM) vector
// operations of package kernels/amd64: Dot, Axpy, Scale, Add, Sum and Max
// (-family vecops, into vecops_amd64.s), and the LayerNorm row kernels
// (-family layernorm, layernorm.go, into layernorm_amd64.s), which share
// their loops and masked tails.
//
// Every kernel is written once, against an isa value that supplies the
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
	"flag"
	"fmt"
	"log"
	"math"

	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/gotypes"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/simdgpt/simdgpt/asm/gen/internal/masks"
)

// unroll is the number of vectors processed by one iteration of the main
// loop, and the number of accumulators of the reductions.
const unroll = 4

// Constant tables shared by both widths.
var (
	// maskAVX2 is eight all-ones dwords followed by eight zero dwords:
	// the 8 dwords starting at index 8-n select the first n lanes.
	maskAVX2 Mem
	// maskAVX512 holds the 16-bit opmasks (1<<n)-1 for n = 0..16.
	maskAVX512 Mem
	// negInf is float32 -Inf, the identity of Max.
	negInf Mem
)

// isa describes one vector width.
type isa struct {
	suffix   string // function name suffix: "AVX2" or "AVX512"
	lanes    int    // float32 lanes per vector
	requires string // CPU features, for the doc comments
	vec      func() reg.VecVirtual

	// Per-function state of the masked tail.
	ymask reg.VecVirtual    // AVX2: lane mask
	kmask reg.OpmaskVirtual // AVX-512: opmask
}

func (a *isa) avx512() bool { return a.lanes == 16 }

// bytes is the size of one vector in bytes.
func (a *isa) bytes() int { return 4 * a.lanes }

var isas = []*isa{
	{suffix: "AVX2", lanes: 8, requires: "AVX2 and FMA", vec: func() reg.VecVirtual { return YMM() }},
	{suffix: "AVX512", lanes: 16, requires: "AVX-512F", vec: func() reg.VecVirtual { return ZMM() }},
}

// families lists the kernel families this generator writes, one output
// file each (the -family flag): the vector operations, and LayerNorm
// (layernorm.go), which shares their loops and masked tails.
var families = map[string]func(a *isa){
	"vecops": func(a *isa) {
		dot(a)
		axpy(a)
		scale(a)
		add(a)
		sum(a)
		maxOp(a)
	},
	"layernorm": func(a *isa) {
		layerNormRow(a)
		layerNormBackwardRow(a)
	},
}

func main() {
	family := flag.String("family", "vecops", "kernel family to generate: vecops or layernorm")
	flag.Parse()
	emit, ok := families[*family]
	if !ok {
		log.Fatalf("vecops: unknown -family %q", *family)
	}
	ConstraintExpr("amd64,!purego")

	// Each family's file has its own constant tables (the symbols are
	// per package, so their names carry the family).
	maskAVX2 = masks.LanesAVX2(*family + "MaskAVX2")
	maskAVX512 = masks.OpmasksAVX512(*family + "MaskAVX512")
	negInf = GLOBL(*family+"NegInf", RODATA|NOPTR)
	DATA(0, U32(math.Float32bits(float32(math.Inf(-1)))))

	for _, a := range isas {
		emit(a)
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

// load loads a pointer or length parameter into a new general-purpose
// register.
func load(c gotypes.Component) reg.GPVirtual {
	r := GP64()
	Load(c, r)
	return r
}

// at returns the address of vector j of the block starting at p.
func (a *isa) at(p reg.GPVirtual, j int) Mem {
	return Mem{Base: p, Disp: j * a.bytes()}
}

// loops emits the iteration over n elements of the arrays at ptrs, all
// advanced together. block(k) must process k (unroll or 1) whole vectors
// at a.at(ptr, 0..k-1); tail must process the 0 < n < lanes remaining
// elements with the masked moves, after the mask has been prepared. Control
// reaches the label name+"_done" afterwards (and when n is a multiple of
// lanes); the caller emits it.
func (a *isa) loops(name string, n reg.GPVirtual, ptrs []reg.GPVirtual, block func(k int), tail func()) {
	step := func(k int, next string) {
		Label(fmt.Sprintf("%s_loop%d", name, k))
		CMPQ(n, U32(k*a.lanes))
		JB(LabelRef(next))
		block(k)
		for _, p := range ptrs {
			ADDQ(U32(k*a.bytes()), p)
		}
		SUBQ(U32(k*a.lanes), n)
		JMP(LabelRef(fmt.Sprintf("%s_loop%d", name, k)))
	}
	step(unroll, name+"_loop1")
	step(1, name+"_tail")

	Label(name + "_tail")
	TESTQ(n, n)
	JZ(LabelRef(name + "_done"))
	a.tailMask(n)
	tail()
}

// tailMask prepares the mask that selects the first n lanes, 0 < n < lanes.
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

// maskedLoad loads the tail lanes at m into dst and zeroes the others.
func (a *isa) maskedLoad(m Mem, dst reg.VecVirtual) {
	if a.avx512() {
		VMOVUPS_Z(m, a.kmask, dst)
		return
	}
	VMASKMOVPS(m, a.ymask, dst)
}

// maskedLoadFill loads the tail lanes at m into dst and sets the others to
// the float32 at fill.
func (a *isa) maskedLoadFill(m, fill Mem, dst reg.VecVirtual) {
	if a.avx512() {
		VBROADCASTSS(fill, dst)
		VMOVUPS(m, a.kmask, dst) // merge masking
		return
	}
	f := YMM()
	VBROADCASTSS(fill, f)
	VMASKMOVPS(m, a.ymask, dst)
	VBLENDVPS(a.ymask, dst, f, dst)
}

// maskedStore stores the tail lanes of v to m; the other lanes of memory
// are not touched.
func (a *isa) maskedStore(v reg.VecVirtual, m Mem) {
	if a.avx512() {
		VMOVUPS(v, a.kmask, m)
		return
	}
	VMASKMOVPS(v, a.ymask, m)
}

// zeros returns n zeroed vector registers.
func (a *isa) zeros(n int) []reg.VecVirtual {
	v := make([]reg.VecVirtual, n)
	for i := range v {
		v[i] = a.vec()
		if a.avx512() {
			VPXORD(v[i], v[i], v[i]) // VXORPS on ZMM would need AVX512DQ
		} else {
			VXORPS(v[i], v[i], v[i])
		}
	}
	return v
}

// broadcast loads the scalar parameter name into every lane of a register.
func (a *isa) broadcast(name string) reg.VecVirtual {
	v := a.vec()
	VBROADCASTSS(addr(Param(name)), v)
	return v
}

// addr returns the stack address of a scalar parameter or result.
func addr(c gotypes.Component) Mem {
	b, err := c.Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

// storeResult stores lane 0 of x as the float32 result, with a VEX move
// (a legacy-SSE MOVSS after dirtying the upper halves can stall).
func storeResult(x reg.Register) {
	VMOVSS(x, addr(ReturnIndex(0)))
}

// reduce combines the accumulators with op and then reduces the lanes of
// the result horizontally; the result is in lane 0 of the returned XMM.
func (a *isa) reduce(op func(...Op), acc []reg.VecVirtual) reg.Register {
	for w := 1; w < len(acc); w *= 2 {
		for i := 0; i+w < len(acc); i += 2 * w {
			op(acc[i+w], acc[i], acc[i])
		}
	}
	v := acc[0]
	if a.avx512() {
		hi := YMM()
		VEXTRACTF64X4(U8(1), v, hi)
		op(hi, v.AsY(), v.AsY())
	}
	hi := XMM()
	VEXTRACTF128(U8(1), v.AsY(), hi)
	x := v.AsX()
	op(hi, x, x)
	t := XMM()
	VMOVHLPS(x, x, t)
	op(t, x, x)
	VMOVSHDUP(x, t)
	op(t, x, x)
	return x
}

func dot(a *isa) {
	name := a.header("dot", "func(x, y []float32) float32",
		"returns the sum of x[i]*y[i]. len(y) must equal len(x).",
		"It keeps four vector accumulators and uses FMA, so the rounding differs from a sequential loop.")
	x := load(Param("x").Base())
	y := load(Param("y").Base())
	n := load(Param("x").Len())
	acc := a.zeros(unroll)
	a.loops(name, n, []reg.GPVirtual{x, y}, func(k int) {
		for j := 0; j < k; j++ {
			t := a.vec()
			VMOVUPS(a.at(x, j), t)
			VFMADD231PS(a.at(y, j), t, acc[j])
		}
	}, func() {
		tx, ty := a.vec(), a.vec()
		a.maskedLoad(a.at(x, 0), tx)
		a.maskedLoad(a.at(y, 0), ty)
		VFMADD231PS(ty, tx, acc[1])
	})
	Label(name + "_done")
	storeResult(a.reduce(VADDPS, acc))
	VZEROUPPER()
	RET()
}

func sum(a *isa) {
	name := a.header("sum", "func(x []float32) float32",
		"returns the sum of the elements of x, 0 if x is empty.",
		"It keeps four vector accumulators, so the rounding differs from a sequential loop.")
	x := load(Param("x").Base())
	n := load(Param("x").Len())
	acc := a.zeros(unroll)
	a.loops(name, n, []reg.GPVirtual{x}, func(k int) {
		for j := 0; j < k; j++ {
			VADDPS(a.at(x, j), acc[j], acc[j])
		}
	}, func() {
		t := a.vec()
		a.maskedLoad(a.at(x, 0), t)
		VADDPS(t, acc[1], acc[1])
	})
	Label(name + "_done")
	storeResult(a.reduce(VADDPS, acc))
	VZEROUPPER()
	RET()
}

func axpy(a *isa) {
	name := a.header("axpy", "func(alpha float32, x, y []float32)",
		"sets y[i] += alpha*x[i] with a fused multiply-add (one rounding).",
		"len(y) must equal len(x).")
	alpha := a.broadcast("alpha")
	x := load(Param("x").Base())
	y := load(Param("y").Base())
	n := load(Param("x").Len())
	a.loops(name, n, []reg.GPVirtual{x, y}, func(k int) {
		t := make([]reg.VecVirtual, k)
		for j := range t {
			t[j] = a.vec()
			VMOVUPS(a.at(y, j), t[j])
			VFMADD231PS(a.at(x, j), alpha, t[j])
		}
		for j := range t {
			VMOVUPS(t[j], a.at(y, j))
		}
	}, func() {
		tx, ty := a.vec(), a.vec()
		a.maskedLoad(a.at(x, 0), tx)
		a.maskedLoad(a.at(y, 0), ty)
		VFMADD231PS(tx, alpha, ty)
		a.maskedStore(ty, a.at(y, 0))
	})
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

func scale(a *isa) {
	name := a.header("scale", "func(alpha float32, x []float32)",
		"sets x[i] *= alpha.")
	alpha := a.broadcast("alpha")
	x := load(Param("x").Base())
	n := load(Param("x").Len())
	a.loops(name, n, []reg.GPVirtual{x}, func(k int) {
		t := make([]reg.VecVirtual, k)
		for j := range t {
			t[j] = a.vec()
			VMULPS(a.at(x, j), alpha, t[j])
		}
		for j := range t {
			VMOVUPS(t[j], a.at(x, j))
		}
	}, func() {
		t := a.vec()
		a.maskedLoad(a.at(x, 0), t)
		VMULPS(t, alpha, t)
		a.maskedStore(t, a.at(x, 0))
	})
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

func add(a *isa) {
	name := a.header("add", "func(dst, x, y []float32)",
		"sets dst[i] = x[i] + y[i]. x and y must be as long as dst;",
		"dst may be x or y (the same slice), but must not otherwise overlap them.")
	d := load(Param("dst").Base())
	x := load(Param("x").Base())
	y := load(Param("y").Base())
	n := load(Param("dst").Len())
	a.loops(name, n, []reg.GPVirtual{d, x, y}, func(k int) {
		t := make([]reg.VecVirtual, k)
		for j := range t {
			t[j] = a.vec()
			VMOVUPS(a.at(x, j), t[j])
			VADDPS(a.at(y, j), t[j], t[j])
		}
		for j := range t {
			VMOVUPS(t[j], a.at(d, j))
		}
	}, func() {
		tx, ty := a.vec(), a.vec()
		a.maskedLoad(a.at(x, 0), tx)
		a.maskedLoad(a.at(y, 0), ty)
		VADDPS(ty, tx, tx)
		a.maskedStore(tx, a.at(d, 0))
	})
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// nanTracker records whether any lane of the vectors given to it is NaN:
// an OR of unordered-compare masks, in a vector register (AVX2) or an
// opmask register (AVX-512). VMAXPS alone does not propagate NaN.
type nanTracker struct {
	a *isa
	v reg.VecVirtual
	k reg.OpmaskVirtual
}

func (a *isa) newNaNTracker() *nanTracker {
	t := &nanTracker{a: a}
	if a.avx512() {
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
	if t.a.avx512() {
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
	if t.a.avx512() {
		KORTESTW(t.k, t.k)
	} else {
		VPTEST(t.v, t.v)
	}
	JNZ(LabelRef(label))
}

func maxOp(a *isa) {
	name := a.header("max", "func(x []float32) float32",
		"returns the largest element of x, -Inf if x is empty.",
		"If any element is NaN it returns the first NaN element of x.",
		"The sign of a zero result is unspecified when x holds both +0 and -0.")
	x := load(Param("x").Base())
	n := load(Param("x").Len())
	acc := make([]reg.VecVirtual, unroll)
	for i := range acc {
		acc[i] = a.vec()
		VBROADCASTSS(negInf, acc[i])
	}
	nan := a.newNaNTracker()
	a.loops(name, n, []reg.GPVirtual{x}, func(k int) {
		t := make([]reg.VecVirtual, k)
		for j := range t {
			t[j] = a.vec()
			VMOVUPS(a.at(x, j), t[j])
			VMAXPS(t[j], acc[j], acc[j])
		}
		for j := 0; j < k; j += 2 {
			nan.add(t[j], t[min(j+1, k-1)])
		}
	}, func() {
		t := a.vec()
		a.maskedLoadFill(a.at(x, 0), negInf, t)
		VMAXPS(t, acc[1], acc[1])
		nan.add(t, t)
	})
	Label(name + "_done")
	nan.jumpIfAny(name + "_nan")
	Label(name + "_reduce")
	storeResult(a.reduce(VMAXPS, acc))
	VZEROUPPER()
	RET()

	// Rare path: find and return the first NaN element, so that the result
	// is bitwise the one a sequential loop returns.
	Label(name + "_nan")
	p := load(Param("x").Base())
	m := load(Param("x").Len())
	s := XMM()
	Label(name + "_scan")
	VMOVSS(Mem{Base: p}, s)
	VUCOMISS(s, s)
	JP(LabelRef(name + "_found"))
	ADDQ(U8(4), p)
	DECQ(m)
	JNZ(LabelRef(name + "_scan"))
	JMP(LabelRef(name + "_reduce")) // not reached: a NaN was seen
	Label(name + "_found")
	storeResult(s)
	VZEROUPPER()
	RET()
}
