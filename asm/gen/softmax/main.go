// Command softmax generates the softmax kernels, forward and backward, for
// AVX2+FMA (YMM registers, VMASKMOVPS tails) and AVX-512F (ZMM registers,
// opmask tails).
//
// # Forward
//
// SoftmaxRow{AVX2,AVX512}(dst, src), n = len(src):
//
//	pass 1  m = max(src), 4 accumulators; m' = max(m, -MaxFloat32)
//	pass 2  e[j] = exp(src[j] - c) -> dst[j], sum += e[j]  (c ≈ m', below;
//	        float32 partial sums folded every 8 blocks into a Kahan sum)
//	pass 3  dst[j] *= inv, inv = 1/sum, or 0 if sum = 0 (a row of -Inf,
//	        whose exponentials are all 0 already)
//
// The row stays in L1 between the passes, and pass 3 rescales the stored
// exponentials rather than recomputing them. SoftmaxRows2AVX512 runs two
// rows of equal length through the same passes at once, their loops
// interleaved, so that one row's reductions (max, sum: shuffles and
// dependent adds, ~30 cycles each) and reciprocal overlap the other's work:
// for rows of 256 these latencies are otherwise a third of the time.
//
// softmaxExpRow{AVX2,AVX512}(dst, src) (c, sum) is the same code, passes 1
// and 2 only: it returns the shift c the exponentials were taken against
// (near: c; far: m') and their sum, from which the cross-entropy kernels
// (kernels/amd64/xent.go) take the loss, c - x[target] + log(sum), and the
// scale of pass 3.
//
// # The exponential
//
// exp(t) = 2^k * exp(r) with k = round(t*log2(e)) and r = t - k*ln2, where
// ln2 is split Cody-Waite fashion into ln2Hi (9 significant bits, so k*ln2Hi
// is exact) and ln2Lo. k comes from the shifter z = t*log2(e) + 1.5*2^23,
// whose low mantissa bits hold k in two's complement (so kf = z - 1.5*2^23
// is k as a float, and z<<23 is k in the exponent field: one FMA and one
// subtraction where VCVTPS2DQ+VCVTDQ2PS would need a multiply and two
// conversions). exp(r) is a degree-5 polynomial with constant term 1 (so
// exp(0) = 1 exactly), a Remez fit of the relative error on |r| <= 0.3495,
// evaluated with FMA in Horner form: 4.5e-7 before rounding its
// coefficients, 5.2e-7 in float32 arithmetic (measured over every float32 t
// in [-1, 0] and a sample down to -87.3). A softmax output, a ratio of such
// exponentials, is then within about 1.3e-6 of exact (1.06e-6 measured).
// Its steps are emitted by asm/gen/internal/vexp, which asm/gen/gelu
// shares.
//
// The argument reduction must not round t = x - c: for |t| in [64, 87.3]
// one rounding of t is up to 2^-18, a relative error of 3.8e-6 in exp(t).
// Two reductions are generated and chosen per row:
//
//   - near (|m'| < 4096): j = round(m'*log2(e)) and c = j*ln2 rounded to a
//     multiple of 2^-9. Then c*log2(e) is within 2e-3 of the integer j, so
//     k = round(x*log2(e) + (1.5*2^23 - j)) is round(t*log2(e)) or off by a
//     margin that keeps |r| <= 0.3495, and t itself is never formed:
//     w = c + k*ln2Hi is exact (multiples of 2^-9 below 2^13 in
//     magnitude), x - w is below 0.38 in magnitude, so its rounding error
//     is below 2^-26, and r = (x - w) - k*ln2Lo.
//   - far (|m'| >= 4096, or m' NaN or ±Inf): c = m'. Every x with
//     x - c >= expMin is then within a factor 2 of c, so t = x - c is exact
//     (Sterbenz) and r = (t - k*ln2Hi) - k*ln2Lo.
//
// Either way x - c <= 0.35, so exp never overflows, and the entry equal to
// the maximum contributes at least exp(-0.35) to sum, so sum >= 0.7 unless
// the row is all -Inf.
//
// Outputs for x - c < expMin = -87.3 (exp below 1.2e-38), including -Inf
// entries, are set to exactly 0 by a compare mask; every exponential kept
// is a normal number.
//
// # NaN and +Inf
//
// A row holding NaN or +Inf must become all NaN; it suffices that sum
// becomes NaN, since pass 3 multiplies every entry, zeros included, by
// 1/sum. With +Inf and no NaN, m = +Inf exactly and its t = +Inf - +Inf is
// NaN. VMAXPS does not propagate NaN through pass 1, and need not: NaN
// entries themselves are caught in pass 2.
//
//   - AVX-512 scales by 2^k with VSCALEFPS, which is NaN-transparent (and,
//     for the normal results kept here, the same operation as adding k to
//     the exponent field), so the compare keeps NaN lanes (NLT_UQ: not less
//     than, or unordered) and a NaN flows from x or t through the polynomial
//     into the sum.
//   - AVX2 adds k into the exponent field with VPSLLD/VPADDD, which would
//     shift a NaN's payload bits into its own exponent field and could make
//     it finite; so NaN lanes are zeroed with the others (GE_OQ is false for
//     NaN) and NaN is detected on the side with VCMPPS UNORD on pairs of
//     vectors of x (near) or t (far), OR-ed into an accumulator that is
//     finally OR-ed into sum (all-ones is a NaN).
//
// The reciprocal is VDIVPS on AVX2 and, on AVX-512, VRCP14PS refined by one
// Newton step (under 1 ulp); a sum of exactly 0 gives inv = 0, and a NaN
// sum a NaN inv. A row that is all -Inf has m' = -MaxFloat32 (far), every
// t = -Inf, every exponential 0, sum = 0 and stays all 0.
//
// # Backward
//
// SoftmaxBackwardRow{AVX2,AVX512}(dx, y, dy) computes s = sum(y*dy) with
// four FMA accumulators and then dx[j] = y[j]*(dy[j] - s).
//
// # Tails
//
// AVX-512 masks the last n%16 lanes with an opmask (zeroing or merging
// loads, masked stores, so nothing outside the slices is touched; in pass 1
// a merge-masked VMAXPS leaves masked-off lanes of the accumulator as they
// were, -Inf at worst); AVX2 uses VMASKMOVPS with a mask loaded from a
// constant table for the last n%8 elements (masked-off lanes of the max
// pass are blended to -Inf). No element is left to scalar code.
package main

import (
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/simdgpt/simdgpt/asm/gen/internal/expf"
	"github.com/simdgpt/simdgpt/asm/gen/internal/masks"
	"github.com/simdgpt/simdgpt/asm/gen/internal/vexp"
)

// vexpConst maps the constants of the shared exponential to the table.
var vexpConst = map[vexp.Const]int{
	vexp.Log2e:   cLog2e,
	vexp.Shifter: cShifter,
	vexp.Ln2Hi:   cLn2Hi,
	vexp.Ln2Lo:   cLn2Lo,
	vexp.Poly0:   cPoly,
}

func init() {
	for i := 1; i <= int(vexp.Deg); i++ {
		vexpConst[vexp.Poly0+vexp.Const(i)] = cPoly + i
	}
}

// Constants of the exponential.
const (
	log2e    = expf.Log2E
	ln2      = expf.Ln2
	ln2Hi    = expf.Ln2Hi
	ln2Lo    = expf.Ln2Lo
	shifter  = expf.Shifter
	shifter9 = 24576 // 1.5*2^14: rounds |x| < 2^13 to a multiple of 2^-9
	expMin   = expf.ExpMin
	negMax   = -math.MaxFloat32
	nearMax  = expf.NearMax

	foldBlocks = 8 // blocks of pass 2 between folds of the partial sums
)

// poly holds c0..c5 of exp(r) (see package expf).
var poly = expf.Poly

// VCMPPS predicates.
const (
	cmpEQOQ   = 0x00 // equal, ordered
	cmpUNORDQ = 0x03 // either operand NaN
	cmpNLTUQ  = 0x15 // not less than, or unordered (true for NaN)
	cmpGEOQ   = 0x1d // greater than or equal, ordered (false for NaN)
)

// Constants, each stored replicated 16 times (64 bytes) so that it can be a
// full-width memory operand of either vector width, or be broadcast.
const (
	cLog2e = iota
	cLn2
	cShifter
	cShifter9
	cLn2Hi
	cLn2Lo
	cExpMin
	cNegMax
	cOne
	cNegInf
	cPoly   // cPoly+i holds poly[i]
	nConsts = cPoly + len(poly)
)

var (
	consts Mem // nConsts × 16 float32
	maskDW Mem // 8 × 0xffffffff then 8 × 0: VMASKMOVPS masks
	maskW  Mem // 16 uint16: (1<<i)-1, opmask for a tail of i lanes
)

// cm returns constant i as a memory operand.
func cm(i int) Mem { return consts.Offset(64 * i) }

func main() {
	ConstraintExpr("amd64,!purego")

	var vals [nConsts]float32
	vals[cLog2e] = log2e
	vals[cLn2] = ln2
	vals[cShifter] = shifter
	vals[cShifter9] = shifter9
	vals[cLn2Hi] = ln2Hi
	vals[cLn2Lo] = ln2Lo
	vals[cExpMin] = expMin
	vals[cNegMax] = negMax
	vals[cOne] = 1
	vals[cNegInf] = float32(math.Inf(-1))
	for i, v := range poly {
		vals[cPoly+i] = v
	}
	consts = GLOBL("softmaxConsts", RODATA|NOPTR)
	for i, v := range vals {
		for j := 0; j < 16; j++ {
			DATA(64*i+4*j, U32(math.Float32bits(v)))
		}
	}
	maskDW = masks.LanesAVX2("softmaxMaskDW")
	maskW = masks.OpmasksAVX512("softmaxMaskW")

	forward(avx2, 1, false)
	forward(avx512, 1, false)
	forward(avx512, 2, false)
	forward(avx2, 1, true)
	forward(avx512, 1, true)
	backward(avx2)
	backward(avx512)
	Generate()
}

// isa describes one vector width and how its tails are masked.
type isa struct {
	name   string // function name suffix
	req    string // CPU features, for the doc comments
	lanes  int
	newVec func() reg.VecVirtual
	// reduce leaves the reduction of v by op in every lane of v,
	// using tmp.
	reduce func(v, tmp reg.VecVirtual, op func(a, b, dst Op))
}

var avx2 = &isa{
	name: "AVX2", req: "AVX2 and FMA", lanes: 8,
	newVec: func() reg.VecVirtual { return YMM() },
	reduce: func(v, tmp reg.VecVirtual, op func(a, b, dst Op)) {
		VPERM2F128(Imm(1), v, v, tmp) // swap the 128-bit halves
		op(tmp, v, v)
		VPERMILPS(Imm(0x4e), v, tmp) // swap 64-bit pairs
		op(tmp, v, v)
		VPERMILPS(Imm(0xb1), v, tmp) // swap neighbours
		op(tmp, v, v)
	},
}

var avx512 = &isa{
	name: "AVX512", req: "AVX-512F", lanes: 16,
	newVec: func() reg.VecVirtual { return ZMM() },
	reduce: func(v, tmp reg.VecVirtual, op func(a, b, dst Op)) {
		VSHUFF32X4(Imm(0x4e), v, v, tmp) // swap the 256-bit halves
		op(tmp, v, v)
		VSHUFF32X4(Imm(0xb1), v, v, tmp) // swap 128-bit neighbours
		op(tmp, v, v)
		VPERMILPS(Imm(0x4e), v, tmp)
		op(tmp, v, v)
		VPERMILPS(Imm(0xb1), v, tmp)
		op(tmp, v, v)
	},
}

func maxOp(a, b, dst Op) { VMAXPS(a, b, dst) }
func addOp(a, b, dst Op) { VADDPS(a, b, dst) }

// loadConst loads constant i into every lane of v.
func (s *isa) loadConst(i int, v reg.VecVirtual) {
	if s.lanes == 16 {
		VBROADCASTSS(cm(i), v)
	} else {
		VMOVUPS(cm(i), v)
	}
}

// bcast loads constant i into every lane of a new register.
func (s *isa) bcast(i int) reg.VecVirtual {
	v := s.newVec()
	VBROADCASTSS(cm(i), v)
	return v
}

// tail holds the mask of the last n%lanes elements of a row.
type tail struct {
	k reg.OpmaskVirtual // AVX-512
	y reg.VecVirtual    // AVX2
}

// tailMask builds the mask for rem (1..lanes-1) remaining elements.
func (s *isa) tailMask(rem reg.GPVirtual) tail {
	base := GP64()
	if s.lanes == 16 {
		LEAQ(maskW, base)
		w := GP32()
		MOVWLZX(Mem{Base: base, Index: rem, Scale: 2}, w)
		k := K()
		KMOVW(w, k)
		return tail{k: k}
	}
	// Lanes j < rem must be set: load 8 dwords starting at maskDW[8-rem].
	off := GP64()
	MOVQ(U32(8), off)
	SUBQ(rem, off)
	LEAQ(maskDW, base)
	m := YMM()
	VMOVUPS(Mem{Base: base, Index: off, Scale: 4}, m)
	return tail{y: m}
}

// load reads a full vector, or the tail of a row (0 in the other lanes).
func (s *isa) load(src Mem, t *tail) reg.VecVirtual {
	v := s.newVec()
	switch {
	case t == nil:
		VMOVUPS(src, v)
	case s.lanes == 16:
		VMOVUPS_Z(src, t.k, v)
	default:
		VMASKMOVPS(src, t.y, v)
	}
	return v
}

// store writes a full vector, or only the lanes of the tail.
func (s *isa) store(v reg.VecVirtual, dst Mem, t *tail) {
	switch {
	case t == nil:
		VMOVUPS(v, dst)
	case s.lanes == 16:
		VMOVUPS(v, t.k, dst)
	default:
		VMASKMOVPS(v, t.y, dst)
	}
}

// loop emits one pass over a row: blocks of unroll vectors, then single
// vectors, then a masked tail. body gets the byte offsets, from the current
// pointers, of the vectors to process and the tail mask (nil for full
// vectors); step advances the pointers by a number of bytes.
func (s *isa) loop(name string, n reg.Register, unroll int, step func(bytes int), body func(offs []int, t *tail)) {
	s.loopFold(name, n, unroll, step, body, 0, nil)
}

// loopFold is loop that also calls fold after every `every` blocks.
func (s *isa) loopFold(name string, n reg.Register, unroll int, step func(bytes int), body func(offs []int, t *tail), every int, fold func()) {
	cnt := GP64()
	MOVQ(n, cnt)
	var ctr reg.GPVirtual
	if fold != nil {
		ctr = GP64()
		MOVQ(U32(every), ctr)
	}
	block := unroll * s.lanes
	offs := make([]int, unroll)
	for j := range offs {
		offs[j] = 4 * s.lanes * j
	}
	Label(name + "_block")
	CMPQ(cnt, U32(block))
	JB(LabelRef(name + "_single"))
	body(offs, nil)
	step(4 * block)
	SUBQ(U32(block), cnt)
	if fold != nil {
		DECQ(ctr)
		JNZ(LabelRef(name + "_block"))
		fold()
		MOVQ(U32(every), ctr)
	}
	JMP(LabelRef(name + "_block"))

	Label(name + "_single")
	CMPQ(cnt, U32(s.lanes))
	JB(LabelRef(name + "_tail"))
	body(offs[:1], nil)
	step(4 * s.lanes)
	SUBQ(U32(s.lanes), cnt)
	JMP(LabelRef(name + "_single"))

	Label(name + "_tail")
	TESTQ(cnt, cnt)
	JZ(LabelRef(name + "_done"))
	t := s.tailMask(cnt)
	body(offs[:1], &t)
	Label(name + "_done")
}

func mem(p reg.GPVirtual, off int) Mem { return Mem{Base: p, Disp: off} }

// row is the state of one row of a forward kernel.
type row struct {
	dst, src   reg.Register     // base pointers
	ps, pd     reg.GPVirtual    // running pointers of a pass
	mx         reg.VecVirtual   // m'; then c, or c + expMin (near)
	cMem, bMem Mem              // near: c and 1.5*2^23 - j, broadcast per vector
	sums       []reg.VecVirtual // partial sums of pass 2
	total      reg.VecVirtual   // sums folded every foldBlocks blocks
	comp       reg.VecVirtual   // Kahan compensation of total
	nan        reg.VecVirtual   // AVX2: all-ones in lanes that met a NaN
}

// expVec is the state of one vector in pass 2.
type expVec struct {
	r        *row
	k        int // index of the vector within its row in the block
	off      int
	vexp.Vec // x (X), the exponential's registers and keep mask
}

// expPass emits pass 2 over rows of a common length n, all with the near
// or all with the far reduction (see the package comment); kc returns a
// constant from a register or from memory.
func (s *isa) expPass(name string, n reg.Register, rows []*row, near bool, units int, kc func(int) Op) {
	avx512 := s.lanes == 16
	// Every foldBlocks blocks the partial sums are added into total and
	// restarted, so that no float32 accumulator lane adds more than
	// foldBlocks terms into a running sum; total is a Kahan-compensated
	// sum, so its error does not grow with n either. The rounding error of
	// the whole sum is then bounded by about (foldBlocks + log2 of the
	// lanes and accumulators + 2) half-ulps, whatever the row length.
	fold := func() {
		for _, r := range rows {
			for _, v := range r.sums {
				// y = v - comp; t = total + y; comp = (t - total) - y; total = t
				VSUBPS(r.comp, v, v)
				t := s.newVec()
				VADDPS(v, r.total, t)
				VSUBPS(r.total, t, r.total)
				VSUBPS(v, r.total, r.comp)
				VMOVAPS(t, r.total)
				VXORPS(v, v, v)
			}
		}
	}
	step := func(b int) {
		for _, r := range rows {
			ADDQ(U32(b), r.ps)
			ADDQ(U32(b), r.pd)
		}
	}
	s.loopFold(name, n, units, step, func(offs []int, tl *tail) {
		var vs []*expVec
		for k, off := range offs {
			for _, r := range rows {
				vs = append(vs, &expVec{r: r, k: k, off: off})
			}
		}
		each := func(f func(v *expVec)) {
			for _, v := range vs {
				f(v)
			}
		}
		// x, and in the far reduction t = x - c in x's register.
		each(func(v *expVec) {
			v.X = s.load(mem(v.r.ps, v.off), tl)
			if !near {
				VSUBPS(v.r.mx, v.X, v.X)
			}
		})
		// keep: the lanes whose exponential is computed, those with
		// x - c >= expMin, and on AVX-512 also NaN lanes; tail lanes only.
		each(func(v *expVec) {
			var a, b Op = kc(cExpMin), v.X // far: t >= expMin
			if near {
				a = v.r.mx // near: x >= c + expMin
			}
			if avx512 {
				v.KeepK = K()
				if tl != nil {
					VCMPPS(Imm(cmpNLTUQ), a, b, tl.k, v.KeepK)
				} else {
					VCMPPS(Imm(cmpNLTUQ), a, b, v.KeepK)
				}
				return
			}
			v.KeepY = s.newVec()
			VCMPPS(Imm(cmpGEOQ), a, b, v.KeepY)
			if tl != nil {
				VANDPS(tl.y, v.KeepY, v.KeepY)
			}
		})
		if !avx512 {
			// NaN lanes of x (near) or t (far), two vectors of a row per
			// compare. The masked-off lanes of a tail are 0.
			for _, r := range rows {
				var xs []reg.VecVirtual
				for _, v := range vs {
					if v.r == r {
						xs = append(xs, v.X)
					}
				}
				for g := 0; g < len(xs); g += 2 {
					u := xs[g]
					if g+1 < len(xs) {
						u = xs[g+1]
					}
					m := s.newVec()
					VCMPPS(Imm(cmpUNORDQ), u, xs[g], m)
					VORPS(m, r.nan, r.nan)
				}
			}
		}
		// z = x*log2e + (1.5*2^23 - j) (near) or t*log2e + 1.5*2^23 (far):
		// the low mantissa bits hold k; kf = z - 1.5*2^23 is k as a float.
		ex := &vexp.Emitter{AVX512: avx512, NewVec: s.newVec,
			Op:   func(c vexp.Const) Op { return kc(vexpConst[c]) },
			Load: func(c vexp.Const, v reg.VecVirtual) { s.loadConst(vexpConst[c], v) }}
		evs := make([]*vexp.Vec, len(vs))
		rowOf := map[*vexp.Vec]*row{}
		for i, v := range vs {
			evs[i] = &v.Vec
			rowOf[evs[i]] = v.r
		}
		ex.Exponent(evs, func(ev *vexp.Vec, z reg.VecVirtual) {
			if near {
				VBROADCASTSS(rowOf[ev].bMem, z)
				return
			}
			ex.InitShifter(ev, z)
		})
		// r, in x's register.
		if near {
			each(func(v *expVec) {
				w := s.newVec()
				VBROADCASTSS(v.r.cMem, w)
				VFMADD231PS(kc(cLn2Hi), v.KF, w) // w = c + k*ln2Hi, exact
				VSUBPS(w, v.X, v.X)              // x - w, |x - w| < 0.38
			})
		} else {
			ex.ReduceHi(evs) // t - k*ln2Hi, exact
		}
		ex.ReduceLo(evs)
		// Horner: p = c5*r + c4, then p = p*r + c_i down to c0 = 1. On
		// AVX-512 p takes a new register (kf is still needed) and the
		// coefficients are registers (an FMA with an embedded-broadcast
		// memory operand is slower: PERF.md, "Softmax"); on AVX2 p takes
		// kf's register and the coefficients are memory operands.
		ex.Poly(evs)
		// e = 2^k * p, 0 outside keep.
		ex.Scale(evs)
		each(func(v *expVec) {
			s.store(v.P, mem(v.r.pd, v.off), tl)
			acc := v.r.sums[v.k%len(v.r.sums)]
			VADDPS(v.P, acc, acc)
		})
	}, foldBlocks, fold)
}

// reduceAll reduces each of vs by op into all of its lanes, the rows'
// steps interleaved so that their latencies overlap.
func (s *isa) reduceAll(vs []reg.VecVirtual, op func(a, b, dst Op)) {
	tmps := make([]reg.VecVirtual, len(vs))
	for i := range tmps {
		tmps[i] = s.newVec()
	}
	var stages []func(v, tmp reg.VecVirtual)
	if s.lanes == 16 {
		stages = []func(v, tmp reg.VecVirtual){
			func(v, tmp reg.VecVirtual) { VSHUFF32X4(Imm(0x4e), v, v, tmp) }, // swap 256-bit halves
			func(v, tmp reg.VecVirtual) { VSHUFF32X4(Imm(0xb1), v, v, tmp) }, // swap 128-bit neighbours
		}
	} else {
		stages = []func(v, tmp reg.VecVirtual){
			func(v, tmp reg.VecVirtual) { VPERM2F128(Imm(1), v, v, tmp) }, // swap 128-bit halves
		}
	}
	stages = append(stages,
		func(v, tmp reg.VecVirtual) { VPERMILPS(Imm(0x4e), v, tmp) }, // swap 64-bit pairs
		func(v, tmp reg.VecVirtual) { VPERMILPS(Imm(0xb1), v, tmp) }, // swap neighbours
	)
	for _, st := range stages {
		for i, v := range vs {
			st(v, tmps[i])
		}
		for i, v := range vs {
			op(tmps[i], v, v)
		}
	}
}

// forward emits SoftmaxRow<ISA> (nrows = 1) or SoftmaxRows2<ISA>
// (nrows = 2: two rows of equal length at once, so that the latencies of
// one row's reductions overlap the other's work). With expOnly (and
// nrows = 1) it emits softmaxExpRow<ISA> instead: passes 1 and 2 only,
// returning the shift c and the sum (for the cross-entropy).
func forward(s *isa, nrows int, expOnly bool) {
	avx512 := s.lanes == 16
	var name string
	var rows []*row
	if expOnly {
		name = "softmaxExpRow" + s.name
		TEXT(name, NOSPLIT, "func(dst, src []float32) (c, sum float32)")
		Pragma("noescape")
		Doc(name+" is passes 1 and 2 of softmaxRow"+s.name+": it writes",
			"dst[j] = exp(src[j] - c) for j < len(src) and returns c and the sum of",
			"the dst[j], where c is the shift of the row's reduction: its maximum",
			"m' = max(m, -MaxFloat32) (far), or within 0.35 of it (near). dst must be",
			"at least as long as src (not checked) and may be src itself. An entry",
			"of -Inf gives exactly 0; a row of only -Inf gives sum = 0, a row",
			"holding NaN or +Inf a NaN sum; sum >= 0.7 otherwise. The relative error",
			"of sum and of every dst[j] above 1e-30 is below 1.3e-6. An empty src",
			"returns 0, 0. Requires "+s.req+".")
		rows = []*row{{dst: Load(Param("dst").Base(), GP64()), src: Load(Param("src").Base(), GP64())}}
		z := XMM()
		VXORPS(z, z, z)
		VMOVSS(z, retAddr(0))
		VMOVSS(z, retAddr(1))
	} else if nrows == 1 {
		name = "softmaxRow" + s.name
		TEXT(name, NOSPLIT, "func(dst, src []float32)")
		Pragma("noescape")
		Doc(name+" writes the softmax of src into dst[:len(src)]; dst must be at",
			"least as long as src (not checked) and may be src itself. An entry of",
			"-Inf gives exactly 0, a row of only -Inf gives all 0, and a row holding",
			"NaN or +Inf gives all NaN. The relative error of every output above",
			"1e-30 is below 2e-6; outputs below 1.2e-38/len(src) may be flushed",
			"to 0. Requires "+s.req+".")
		rows = []*row{{dst: Load(Param("dst").Base(), GP64()), src: Load(Param("src").Base(), GP64())}}
	} else {
		name = "softmaxRows2" + s.name
		TEXT(name, NOSPLIT, "func(dst0, src0, dst1, src1 []float32)")
		Pragma("noescape")
		Doc(name+" does softmaxRow"+s.name+"(dst0, src0) and softmaxRow"+s.name+"(dst1, src1)",
			"at once, for two rows of length len(src0): src1, dst0 and dst1 must be",
			"at least as long (not checked), and dst0 may be src0, dst1 src1. The",
			"results have the same accuracy and special values; the sums are",
			"accumulated in another order, so they may differ in the last bit.",
			"Requires "+s.req+".")
		for i := 0; i < nrows; i++ {
			d := Load(Param("dst"+itoa(i)).Base(), GP64())
			sr := Load(Param("src"+itoa(i)).Base(), GP64())
			rows = append(rows, &row{dst: d, src: sr})
		}
	}
	var n reg.Register
	if nrows == 1 {
		n = Load(Param("src").Len(), GP64())
	} else {
		n = Load(Param("src0").Len(), GP64())
	}
	TESTQ(n, n)
	JZ(LabelRef(name + "_ret"))

	Comment("Pass 1: row maximum.")
	accs := make([][]reg.VecVirtual, nrows)
	for ri, r := range rows {
		for j := 0; j < 4; j++ {
			accs[ri] = append(accs[ri], s.bcast(cNegInf))
		}
		r.ps = GP64()
		MOVQ(r.src, r.ps)
	}
	var negInf reg.VecVirtual
	if !avx512 {
		negInf = s.bcast(cNegInf) // for the masked-off lanes of the tail
	}
	s.loop(name+"_max", n, 4, func(b int) {
		for _, r := range rows {
			ADDQ(U32(b), r.ps)
		}
	}, func(offs []int, t *tail) {
		for j, off := range offs {
			for ri, r := range rows {
				acc := accs[ri][j]
				switch {
				case t == nil:
					VMAXPS(mem(r.ps, off), acc, acc)
				case avx512:
					VMAXPS(mem(r.ps, off), acc, t.k, acc) // masked-off lanes keep acc
				default:
					x := s.load(mem(r.ps, off), t)
					VBLENDVPS(t.y, x, negInf, x) // masked-off lanes -Inf
					VMAXPS(x, acc, acc)
				}
			}
		}
	})
	for _, pair := range [][2]int{{1, 0}, {3, 2}, {2, 0}} {
		for ri := range rows {
			VMAXPS(accs[ri][pair[0]], accs[ri][pair[1]], accs[ri][pair[1]])
		}
	}
	var mxs []reg.VecVirtual
	for ri, r := range rows {
		r.mx = accs[ri][0]
		mxs = append(mxs, r.mx)
	}
	s.reduceAll(mxs, maxOp)
	// m' = max(m, -MaxFloat32): m is the second Intel-order source (the
	// first here), which VMAXPS returns if either is NaN, so NaN passes;
	// -Inf becomes -MaxFloat32, so that -Inf - m' = -Inf.
	negMaxV := s.bcast(cNegMax)
	for _, r := range rows {
		VMAXPS(r.mx, negMaxV, r.mx)
	}

	Comment("Pass 2: exponentials into dst, and their sums.")
	units, nsum := 4, 4
	switch {
	case !avx512:
		units, nsum = 2, 2
	case nrows == 2:
		units, nsum = 2, 2
	}
	for _, r := range rows {
		if !avx512 {
			r.nan = s.newVec()
			VXORPS(r.nan, r.nan, r.nan)
		}
		for i := 0; i < nsum; i++ {
			v := s.newVec()
			VXORPS(v, v, v)
			r.sums = append(r.sums, v)
		}
		r.total = s.newVec()
		VXORPS(r.total, r.total, r.total)
		r.comp = s.newVec()
		VXORPS(r.comp, r.comp, r.comp)
	}
	// AVX-512 keeps the constants of pass 2 in registers, but for c4, which
	// is loaded into p; AVX2, with 16 registers, only log2e (the FMA that
	// uses it has a register-only operand in the near reduction).
	var kreg [nConsts]reg.VecVirtual
	inReg := []int{cLog2e}
	if avx512 {
		inReg = []int{cLog2e, cShifter, cLn2Hi, cLn2Lo, cExpMin}
		for i := range poly {
			if i != len(poly)-2 { // c4 is loaded into p, not an operand
				inReg = append(inReg, cPoly+i)
			}
		}
	}
	for _, i := range inReg {
		kreg[i] = s.bcast(i)
	}
	kc := func(i int) Op {
		if kreg[i] != nil {
			return kreg[i]
		}
		return cm(i)
	}
	local := AllocLocal(8 * nrows)
	for ri, r := range rows {
		r.cMem, r.bMem = local.Offset(8*ri), local.Offset(8*ri+4)
		r.ps, r.pd = GP64(), GP64()
	}
	// nearSetup turns m' into c + expMin for the near reduction and
	// stores c and 1.5*2^23 - j: j = round(m'*log2e),
	// c = round(j*ln2 * 2^9) / 2^9.
	nearSetup := func(rs []*row) {
		jfs := make([]reg.VecVirtual, len(rs))
		for i, r := range rs {
			jfs[i] = s.bcast(cShifter)
			VFMADD231PS(kc(cLog2e), r.mx, jfs[i])
		}
		for i := range rs {
			VSUBPS(cm(cShifter), jfs[i], jfs[i]) // j
		}
		for i, r := range rs {
			b := s.bcast(cShifter)
			VSUBPS(jfs[i], b, b)
			VMOVSS(b.AsX(), r.bMem)
			s.loadConst(cShifter9, r.mx)
			VFMADD231PS(cm(cLn2), jfs[i], r.mx)
		}
		for _, r := range rs {
			VSUBPS(cm(cShifter9), r.mx, r.mx) // c
			VMOVSS(r.mx.AsX(), r.cMem)
		}
		for _, r := range rs {
			VADDPS(cm(cExpMin), r.mx, r.mx) // c + expMin
		}
	}
	start := func(rs []*row) {
		for _, r := range rs {
			MOVQ(r.src, r.ps)
			MOVQ(r.dst, r.pd)
		}
	}
	// isFar jumps to label if |m'| >= nearMax (or m' is NaN or ±Inf).
	bits := GP32()
	isFar := func(r *row, label string) {
		VMOVD(r.mx.AsX(), bits)
		ANDL(U32(0x7fffffff), bits)
		CMPL(bits, U32(math.Float32bits(nearMax)))
		JAE(LabelRef(label))
	}
	// onePass emits pass 2 of one row, near or far as its maximum says.
	onePass := func(r *row, prefix string, units int) {
		isFar(r, prefix+"_far")
		nearSetup([]*row{r})
		if expOnly {
			c := XMM()
			VMOVSS(r.cMem, c)
			VMOVSS(c, retAddr(0))
		}
		start([]*row{r})
		s.expPass(prefix+"_near", n, []*row{r}, true, units, kc)
		JMP(LabelRef(prefix + "_done"))
		Label(prefix + "_far")
		if expOnly {
			VMOVSS(r.mx.AsX(), retAddr(0))
		}
		start([]*row{r})
		s.expPass(prefix+"_far", n, []*row{r}, false, units, kc)
		Label(prefix + "_done")
	}
	if nrows == 1 {
		onePass(rows[0], name, units)
	} else {
		// Both rows near: one interleaved loop. Otherwise one row after
		// the other.
		for _, r := range rows {
			isFar(r, name+"_apart")
		}
		nearSetup(rows)
		start(rows)
		s.expPass(name+"_near", n, rows, true, units, kc)
		JMP(LabelRef(name + "_summed"))
		Label(name + "_apart")
		for ri, r := range rows {
			onePass(r, name+"_row"+itoa(ri), 2*units)
		}
	}
	Label(name + "_summed")

	// sum, then inv = 1/sum, or 0 if sum is 0 (every entry was -Inf and
	// every exponential is already 0). A NaN sum gives a NaN inv.
	var sums []reg.VecVirtual
	for _, r := range rows {
		VSUBPS(r.comp, r.total, r.total)
		VADDPS(r.total, r.sums[0], r.sums[0])
		for len(r.sums) > 1 {
			h := len(r.sums) / 2
			for i := 0; i < h; i++ {
				VADDPS(r.sums[i+h], r.sums[i], r.sums[i])
			}
			r.sums = r.sums[:h]
		}
		if !avx512 {
			VORPS(r.nan, r.sums[0], r.sums[0]) // all-ones lanes are NaN
		}
		sums = append(sums, r.sums[0])
	}
	s.reduceAll(sums, addOp)
	if expOnly {
		VMOVSS(sums[0].AsX(), retAddr(1))
		VZEROUPPER()
		Label(name + "_ret")
		RET()
		return
	}
	invs := make([]reg.VecVirtual, nrows)
	zero := s.newVec()
	VXORPS(zero, zero, zero)
	for i, sum := range sums {
		invs[i] = s.newVec()
		if avx512 {
			// 1/sum to 14 bits, then one Newton step: inv*(1 + (1 - sum*inv)).
			e := s.newVec()
			VRCP14PS(sum, invs[i])
			s.loadConst(cOne, e)
			VFNMADD231PS(invs[i], sum, e)
			VFMADD231PS(e, invs[i], invs[i])
			kz := K()
			VCMPPS(Imm(cmpEQOQ), zero, sum, kz)
			VMOVAPS(zero, kz, invs[i])
		} else {
			s.loadConst(cOne, invs[i])
			VDIVPS(sum, invs[i], invs[i])
			m := s.newVec()
			VCMPPS(Imm(cmpEQOQ), zero, sum, m)
			VANDNPS(invs[i], m, invs[i])
		}
	}

	Comment("Pass 3: dst *= 1/sum.")
	for _, r := range rows {
		MOVQ(r.dst, r.pd)
	}
	s.loop(name+"_scale", n, 4, func(b int) {
		for _, r := range rows {
			ADDQ(U32(b), r.pd)
		}
	}, func(offs []int, tl *tail) {
		// All loads of a block before its stores: the rows of a pair are
		// often 4 KiB apart, and a load issued after a store to the same
		// address modulo 4096 waits for it (4K aliasing).
		var vs []reg.VecVirtual
		var ms []Mem
		for _, off := range offs {
			for ri, r := range rows {
				v := s.newVec()
				switch {
				case tl == nil:
					VMULPS(mem(r.pd, off), invs[ri], v)
				case avx512:
					VMULPS_Z(mem(r.pd, off), invs[ri], tl.k, v)
				default:
					v = s.load(mem(r.pd, off), tl)
					VMULPS(invs[ri], v, v)
				}
				vs, ms = append(vs, v), append(ms, mem(r.pd, off))
			}
		}
		for i, v := range vs {
			s.store(v, ms[i], tl)
		}
	})
	VZEROUPPER()
	Label(name + "_ret")
	RET()
}

// retAddr returns the stack address of result i.
func retAddr(i int) Mem {
	b, err := ReturnIndex(i).Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

func itoa(i int) string { return string(rune('0' + i)) }

func backward(s *isa) {
	name := "softmaxBackwardRow" + s.name
	TEXT(name, NOSPLIT, "func(dx, y, dy []float32)")
	Pragma("noescape")
	Doc(name+" sets dx[j] = y[j]*(dy[j] - s) for j < len(y), where",
		"s = sum_k y[k]*dy[k]. dx and dy must be at least as long as y (not",
		"checked); dx may be dy itself. Requires "+s.req+".")
	dxBase := Load(Param("dx").Base(), GP64())
	yBase := Load(Param("y").Base(), GP64())
	dyBase := Load(Param("dy").Base(), GP64())
	n := Load(Param("y").Len(), GP64())
	TESTQ(n, n)
	JZ(LabelRef(name + "_ret"))

	Comment("Pass 1: s = sum(y*dy).")
	acc := make([]reg.VecVirtual, 4)
	for i := range acc {
		acc[i] = s.newVec()
		VXORPS(acc[i], acc[i], acc[i])
	}
	py, pdy := GP64(), GP64()
	MOVQ(yBase, py)
	MOVQ(dyBase, pdy)
	s.loop(name+"_dot", n, 4, func(b int) { ADDQ(U32(b), py); ADDQ(U32(b), pdy) }, func(offs []int, tl *tail) {
		for j, off := range offs {
			yv := s.load(mem(py, off), tl)
			if tl == nil {
				VFMADD231PS(mem(pdy, off), yv, acc[j])
			} else {
				dyv := s.load(mem(pdy, off), tl)
				VFMADD231PS(dyv, yv, acc[j])
			}
		}
	})
	VADDPS(acc[1], acc[0], acc[0])
	VADDPS(acc[3], acc[2], acc[2])
	VADDPS(acc[2], acc[0], acc[0])
	sv := acc[0]
	s.reduce(sv, s.newVec(), addOp)

	Comment("Pass 2: dx = y*(dy - s).")
	pdx := GP64()
	MOVQ(yBase, py)
	MOVQ(dyBase, pdy)
	MOVQ(dxBase, pdx)
	s.loop(name+"_out", n, 4, func(b int) { ADDQ(U32(b), py); ADDQ(U32(b), pdy); ADDQ(U32(b), pdx) }, func(offs []int, tl *tail) {
		// Loads of a block before its stores (see pass 3 of forward).
		ds := make([]reg.VecVirtual, len(offs))
		for i, off := range offs {
			d := s.load(mem(pdy, off), tl)
			VSUBPS(sv, d, d)
			switch {
			case tl == nil:
				VMULPS(mem(py, off), d, d)
			case s.lanes == 16:
				VMULPS_Z(mem(py, off), d, tl.k, d)
			default:
				yv := s.load(mem(py, off), tl)
				VMULPS(yv, d, d)
			}
			ds[i] = d
		}
		for i, off := range offs {
			s.store(ds[i], mem(pdx, off), tl)
		}
	})
	VZEROUPPER()
	Label(name + "_ret")
	RET()
}
