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
	"github.com/simdgpt/simdgpt/asm/gen/internal/vexp"
	"github.com/simdgpt/simdgpt/asm/gen/internal/x86"
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
	table x86.Table // nConsts × 16 float32
	// masks are the tail masks (the form: index 8-n, then the table
	// address, VMOVUPS; the opmask through a 32-bit register).
	masks *x86.Masks
)

func main() {
	ConstraintExpr("amd64,!purego")
	table = x86.NewTable("softmaxConsts", constValues())
	masks = x86.NewMasks("softmaxMaskDW", "softmaxMaskW", x86.MaskForm{IndexFirst: true, ViaGP32: true, MovUPS: true})

	forward(x86.AVX2, 1, false)
	forward(x86.AVX512, 1, false)
	forward(x86.AVX512, 2, false)
	forward(x86.AVX2, 1, true)
	forward(x86.AVX512, 1, true)
	backward(x86.AVX2)
	backward(x86.AVX512)
	x86.Finish()
}

// constValues returns the bits of the table's constants.
func constValues() []uint32 {
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
	bits := make([]uint32, nConsts)
	for i, v := range vals {
		bits[i] = math.Float32bits(v)
	}
	return bits
}

// loop emits one pass over a row: blocks of unroll vectors, then single
// vectors, then a masked tail. body gets the byte offsets, from the current
// pointers, of the vectors to process and the tail mask (nil for full
// vectors); step advances the pointers by a number of bytes.
func loop(s *x86.ISA, name string, n reg.Register, unroll int, step func(bytes int), body func(offs []int, t *x86.Tail)) {
	loopFold(s, name, n, unroll, step, body, 0, nil)
}

// loopFold is loop that also calls fold after every `every` blocks.
func loopFold(s *x86.ISA, name string, n reg.Register, unroll int, step func(bytes int), body func(offs []int, t *x86.Tail), every int, fold func()) {
	cnt := GP64()
	MOVQ(n, cnt)
	var ctr reg.GPVirtual
	if fold != nil {
		ctr = GP64()
		MOVQ(U32(every), ctr)
	}
	block := unroll * s.Lanes
	offs := make([]int, unroll)
	for j := range offs {
		offs[j] = s.Bytes() * j
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
	CMPQ(cnt, U32(s.Lanes))
	JB(LabelRef(name + "_tail"))
	body(offs[:1], nil)
	step(s.Bytes())
	SUBQ(U32(s.Lanes), cnt)
	JMP(LabelRef(name + "_single"))

	Label(name + "_tail")
	TESTQ(cnt, cnt)
	JZ(LabelRef(name + "_done"))
	body(offs[:1], masks.Tail(s, cnt))
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

// pass2 emits pass 2 over rows of a common length, all with the near or
// all with the far reduction (see the package comment).
type pass2 struct {
	s    *x86.ISA
	rows []*row
	near bool
	k    *x86.Consts
}

// expPass emits pass 2 over rows of a common length n in blocks of units
// vectors per row; k holds the constants kept in registers.
func expPass(s *x86.ISA, name string, n reg.Register, rows []*row, near bool, units int, k *x86.Consts) {
	p := &pass2{s: s, rows: rows, near: near, k: k}
	step := func(b int) {
		for _, r := range rows {
			ADDQ(U32(b), r.ps)
			ADDQ(U32(b), r.pd)
		}
	}
	loopFold(s, name, n, units, step, p.block, foldBlocks, p.fold)
}

// fold adds the partial sums into total and restarts them. It runs every
// foldBlocks blocks, so that no float32 accumulator lane adds more than
// foldBlocks terms into a running sum; total is a Kahan-compensated sum,
// so its error does not grow with n either. The rounding error of the
// whole sum is then bounded by about (foldBlocks + log2 of the lanes and
// accumulators + 2) half-ulps, whatever the row length.
func (p *pass2) fold() {
	for _, r := range p.rows {
		for _, v := range r.sums {
			// y = v - comp; t = total + y; comp = (t - total) - y; total = t
			VSUBPS(r.comp, v, v)
			t := p.s.Vec()
			VADDPS(v, r.total, t)
			VSUBPS(r.total, t, r.total)
			VSUBPS(v, r.total, r.comp)
			VMOVAPS(t, r.total)
			VXORPS(v, v, v)
		}
	}
}

// block emits pass 2 on the vectors at offs of every row, or on the tail
// under tl.
func (p *pass2) block(offs []int, tl *x86.Tail) {
	var vs []*expVec
	for k, off := range offs {
		for _, r := range p.rows {
			vs = append(vs, &expVec{r: r, k: k, off: off})
		}
	}
	p.loadArgs(vs, tl)
	p.keepMasks(vs, tl)
	if !p.s.Is512() {
		p.nanLanes(vs)
	}
	p.exp(vs)
	for _, v := range vs {
		p.s.Store(v.P, mem(v.r.pd, v.off), tl)
		acc := v.r.sums[v.k%len(v.r.sums)]
		VADDPS(v.P, acc, acc)
	}
}

// loadArgs loads x, and in the far reduction sets t = x - c in x's
// register.
func (p *pass2) loadArgs(vs []*expVec, tl *x86.Tail) {
	for _, v := range vs {
		v.X = p.s.Load(mem(v.r.ps, v.off), tl)
		if !p.near {
			VSUBPS(v.r.mx, v.X, v.X)
		}
	}
}

// keepMasks sets keep: the lanes whose exponential is computed, those with
// x - c >= expMin, and on AVX-512 also NaN lanes; tail lanes only.
func (p *pass2) keepMasks(vs []*expVec, tl *x86.Tail) {
	for _, v := range vs {
		var a, b Op = p.k.Op(cExpMin), v.X // far: t >= expMin
		if p.near {
			a = v.r.mx // near: x >= c + expMin
		}
		if p.s.Is512() {
			v.KeepK = K()
			if tl != nil {
				VCMPPS(Imm(cmpNLTUQ), a, b, tl.K, v.KeepK)
			} else {
				VCMPPS(Imm(cmpNLTUQ), a, b, v.KeepK)
			}
			continue
		}
		v.KeepY = p.s.Vec()
		VCMPPS(Imm(cmpGEOQ), a, b, v.KeepY)
		if tl != nil {
			VANDPS(tl.Y, v.KeepY, v.KeepY)
		}
	}
}

// nanLanes (AVX2) ORs the NaN lanes of x (near) or t (far) into each row's
// nan, two vectors of a row per compare. The masked-off lanes of a tail
// are 0.
func (p *pass2) nanLanes(vs []*expVec) {
	for _, r := range p.rows {
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
			m := p.s.Vec()
			VCMPPS(Imm(cmpUNORDQ), u, xs[g], m)
			VORPS(m, r.nan, r.nan)
		}
	}
}

// exp computes the exponentials, e = 2^k * p(r), 0 outside keep, in P.
func (p *pass2) exp(vs []*expVec) {
	s := p.s
	// z = x*log2e + (1.5*2^23 - j) (near) or t*log2e + 1.5*2^23 (far):
	// the low mantissa bits hold k; kf = z - 1.5*2^23 is k as a float.
	ex := &vexp.Emitter{AVX512: s.Is512(), NewVec: s.Vec,
		Op:   func(c vexp.Const) Op { return p.k.Op(vexpConst[c]) },
		Load: func(c vexp.Const, v reg.VecVirtual) { p.k.Load(vexpConst[c], v) }}
	evs := make([]*vexp.Vec, len(vs))
	rowOf := map[*vexp.Vec]*row{}
	for i, v := range vs {
		evs[i] = &v.Vec
		rowOf[evs[i]] = v.r
	}
	ex.Exponent(evs, func(ev *vexp.Vec, z reg.VecVirtual) {
		if p.near {
			VBROADCASTSS(rowOf[ev].bMem, z)
			return
		}
		ex.InitShifter(ev, z)
	})
	// r, in x's register.
	if p.near {
		for _, v := range vs {
			w := s.Vec()
			VBROADCASTSS(v.r.cMem, w)
			VFMADD231PS(p.k.Op(cLn2Hi), v.KF, w) // w = c + k*ln2Hi, exact
			VSUBPS(w, v.X, v.X)                  // x - w, |x - w| < 0.38
		}
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
}

// fwd is the state of one forward kernel being emitted.
type fwd struct {
	s       *x86.ISA
	nrows   int
	expOnly bool
	name    string
	rows    []*row
	n       reg.Register
	k       *x86.Consts
	units   int           // vectors per row of a pass-2 block
	bits    reg.GPVirtual // scratch of isFar
}

// forward emits SoftmaxRow<ISA> (nrows = 1) or SoftmaxRows2<ISA>
// (nrows = 2: two rows of equal length at once, so that the latencies of
// one row's reductions overlap the other's work). With expOnly (and
// nrows = 1) it emits softmaxExpRow<ISA> instead: passes 1 and 2 only,
// returning the shift c and the sum (for the cross-entropy).
func forward(s *x86.ISA, nrows int, expOnly bool) {
	f := &fwd{s: s, nrows: nrows, expOnly: expOnly, k: table.For(s)}
	switch {
	case expOnly:
		f.headerExp()
	case nrows == 1:
		f.headerRow()
	default:
		f.headerRows2()
	}
	f.loadLen()

	Comment("Pass 1: row maximum.")
	f.maxPass()

	Comment("Pass 2: exponentials into dst, and their sums.")
	f.initSums()
	f.keepConsts()
	local := AllocLocal(8 * nrows)
	for ri, r := range f.rows {
		r.cMem, r.bMem = local.Offset(8*ri), local.Offset(8*ri+4)
		r.ps, r.pd = GP64(), GP64()
	}
	f.bits = GP32()
	f.expPasses()
	Label(f.name + "_summed")
	sums := f.totals()
	if expOnly {
		VMOVSS(sums[0].AsX(), x86.Ret(1))
		VZEROUPPER()
		Label(f.name + "_ret")
		RET()
		return
	}
	invs := f.reciprocals(sums)

	Comment("Pass 3: dst *= 1/sum.")
	f.scalePass(invs)
	VZEROUPPER()
	Label(f.name + "_ret")
	RET()
}

// headerExp starts softmaxExpRow<ISA> and zeroes its results.
func (f *fwd) headerExp() {
	f.name = "softmaxExpRow" + f.s.Name
	x86.Func(f.name, "softmaxExpRow",
		f.name+" is passes 1 and 2 of softmaxRow"+f.s.Name+": it writes",
		"dst[j] = exp(src[j] - c) for j < len(src) and returns c and the sum of",
		"the dst[j], where c is the shift of the row's reduction: its maximum",
		"m' = max(m, -MaxFloat32) (far), or within 0.35 of it (near). dst must be",
		"at least as long as src (not checked) and may be src itself. An entry",
		"of -Inf gives exactly 0; a row of only -Inf gives sum = 0, a row",
		"holding NaN or +Inf a NaN sum; sum >= 0.7 otherwise. The relative error",
		"of sum and of every dst[j] above 1e-30 is below 1.3e-6. An empty src",
		"returns 0, 0. Requires "+f.s.Req+".")
	f.rows = []*row{{dst: x86.LoadGP(Param("dst").Base()), src: x86.LoadGP(Param("src").Base())}}
	z := XMM()
	VXORPS(z, z, z)
	VMOVSS(z, x86.Ret(0))
	VMOVSS(z, x86.Ret(1))
}

// headerRow starts softmaxRow<ISA>.
func (f *fwd) headerRow() {
	f.name = "softmaxRow" + f.s.Name
	x86.Func(f.name, "softmaxRow",
		f.name+" writes the softmax of src into dst[:len(src)]; dst must be at",
		"least as long as src (not checked) and may be src itself. An entry of",
		"-Inf gives exactly 0, a row of only -Inf gives all 0, and a row holding",
		"NaN or +Inf gives all NaN. The relative error of every output above",
		"1e-30 is below 2e-6; outputs below 1.2e-38/len(src) may be flushed",
		"to 0. Requires "+f.s.Req+".")
	f.rows = []*row{{dst: x86.LoadGP(Param("dst").Base()), src: x86.LoadGP(Param("src").Base())}}
}

// headerRows2 starts softmaxRows2<ISA>.
func (f *fwd) headerRows2() {
	f.name = "softmaxRows2" + f.s.Name
	x86.Func(f.name, "softmaxRows2",
		f.name+" does softmaxRow"+f.s.Name+"(dst0, src0) and softmaxRow"+f.s.Name+"(dst1, src1)",
		"at once, for two rows of length len(src0): src1, dst0 and dst1 must be",
		"at least as long (not checked), and dst0 may be src0, dst1 src1. The",
		"results have the same accuracy and special values; the sums are",
		"accumulated in another order, so they may differ in the last bit.",
		"Requires "+f.s.Req+".")
	for i := 0; i < f.nrows; i++ {
		d := x86.LoadGP(Param("dst" + itoa(i)).Base())
		sr := x86.LoadGP(Param("src" + itoa(i)).Base())
		f.rows = append(f.rows, &row{dst: d, src: sr})
	}
}

// loadLen loads the row length n and returns at once if it is 0.
func (f *fwd) loadLen() {
	if f.nrows == 1 {
		f.n = x86.LoadGP(Param("src").Len())
	} else {
		f.n = x86.LoadGP(Param("src0").Len())
	}
	TESTQ(f.n, f.n)
	JZ(LabelRef(f.name + "_ret"))
}

// maxPass emits pass 1: every row's m' = max(max(src), -MaxFloat32) in
// every lane of its mx, four accumulators a row.
func (f *fwd) maxPass() {
	s := f.s
	accs := make([][]reg.VecVirtual, f.nrows)
	for ri, r := range f.rows {
		for j := 0; j < 4; j++ {
			accs[ri] = append(accs[ri], f.k.Bcast(cNegInf))
		}
		r.ps = GP64()
		MOVQ(r.src, r.ps)
	}
	var negInf reg.VecVirtual
	if !s.Is512() {
		negInf = f.k.Bcast(cNegInf) // for the masked-off lanes of the tail
	}
	loop(s, f.name+"_max", f.n, 4, func(b int) {
		for _, r := range f.rows {
			ADDQ(U32(b), r.ps)
		}
	}, func(offs []int, t *x86.Tail) {
		for j, off := range offs {
			for ri, r := range f.rows {
				acc := accs[ri][j]
				switch {
				case t == nil:
					VMAXPS(mem(r.ps, off), acc, acc)
				case s.Is512():
					VMAXPS(mem(r.ps, off), acc, t.K, acc) // masked-off lanes keep acc
				default:
					x := s.Load(mem(r.ps, off), t)
					VBLENDVPS(t.Y, x, negInf, x) // masked-off lanes -Inf
					VMAXPS(x, acc, acc)
				}
			}
		}
	})
	x86.TreeAll(VMAXPS, accs)
	var mxs []reg.VecVirtual
	for ri, r := range f.rows {
		r.mx = accs[ri][0]
		mxs = append(mxs, r.mx)
	}
	s.ReduceAll(mxs, VMAXPS)
	// m' = max(m, -MaxFloat32): m is the second Intel-order source (the
	// first here), which VMAXPS returns if either is NaN, so NaN passes;
	// -Inf becomes -MaxFloat32, so that -Inf - m' = -Inf.
	negMaxV := f.k.Bcast(cNegMax)
	for _, r := range f.rows {
		VMAXPS(r.mx, negMaxV, r.mx)
	}
}

// initSums zeroes the accumulators of pass 2 and chooses its block size:
// four vectors and sums for one AVX-512 row, two otherwise.
func (f *fwd) initSums() {
	f.units = 4
	if !f.s.Is512() || f.nrows == 2 {
		f.units = 2
	}
	for _, r := range f.rows {
		if !f.s.Is512() {
			r.nan = f.s.Vec()
			VXORPS(r.nan, r.nan, r.nan)
		}
		for i := 0; i < f.units; i++ {
			v := f.s.Vec()
			VXORPS(v, v, v)
			r.sums = append(r.sums, v)
		}
		r.total = f.s.Vec()
		VXORPS(r.total, r.total, r.total)
		r.comp = f.s.Vec()
		VXORPS(r.comp, r.comp, r.comp)
	}
}

// keepConsts keeps constants of pass 2 in registers: on AVX-512 all but
// c4, which is loaded into p; on AVX2, with 16 registers, only log2e (the
// FMA that uses it has a register-only operand in the near reduction).
func (f *fwd) keepConsts() {
	inReg := []int{cLog2e}
	if f.s.Is512() {
		inReg = []int{cLog2e, cShifter, cLn2Hi, cLn2Lo, cExpMin}
		for i := range poly {
			if i != len(poly)-2 { // c4 is loaded into p, not an operand
				inReg = append(inReg, cPoly+i)
			}
		}
	}
	f.k.Keep(inReg...)
}

// nearSetup turns m' into c + expMin for the near reduction and stores c
// and 1.5*2^23 - j: j = round(m'*log2e), c = round(j*ln2 * 2^9) / 2^9.
func (f *fwd) nearSetup(rs []*row) {
	jfs := make([]reg.VecVirtual, len(rs))
	for i, r := range rs {
		jfs[i] = f.k.Bcast(cShifter)
		VFMADD231PS(f.k.Op(cLog2e), r.mx, jfs[i])
	}
	for i := range rs {
		VSUBPS(f.k.Mem(cShifter), jfs[i], jfs[i]) // j
	}
	for i, r := range rs {
		b := f.k.Bcast(cShifter)
		VSUBPS(jfs[i], b, b)
		VMOVSS(b.AsX(), r.bMem)
		f.k.Load(cShifter9, r.mx)
		VFMADD231PS(f.k.Mem(cLn2), jfs[i], r.mx)
	}
	for _, r := range rs {
		VSUBPS(f.k.Mem(cShifter9), r.mx, r.mx) // c
		VMOVSS(r.mx.AsX(), r.cMem)
	}
	for _, r := range rs {
		VADDPS(f.k.Mem(cExpMin), r.mx, r.mx) // c + expMin
	}
}

// start sets the running pointers of rs to the rows' starts.
func start(rs []*row) {
	for _, r := range rs {
		MOVQ(r.src, r.ps)
		MOVQ(r.dst, r.pd)
	}
}

// isFar jumps to label if |m'| >= nearMax (or m' is NaN or ±Inf).
func (f *fwd) isFar(r *row, label string) {
	VMOVD(r.mx.AsX(), f.bits)
	ANDL(U32(0x7fffffff), f.bits)
	CMPL(f.bits, U32(math.Float32bits(nearMax)))
	JAE(LabelRef(label))
}

// onePass emits pass 2 of one row, near or far as its maximum says.
func (f *fwd) onePass(r *row, prefix string, units int) {
	f.isFar(r, prefix+"_far")
	f.nearSetup([]*row{r})
	if f.expOnly {
		c := XMM()
		VMOVSS(r.cMem, c)
		VMOVSS(c, x86.Ret(0))
	}
	start([]*row{r})
	expPass(f.s, prefix+"_near", f.n, []*row{r}, true, units, f.k)
	JMP(LabelRef(prefix + "_done"))
	Label(prefix + "_far")
	if f.expOnly {
		VMOVSS(r.mx.AsX(), x86.Ret(0))
	}
	start([]*row{r})
	expPass(f.s, prefix+"_far", f.n, []*row{r}, false, units, f.k)
	Label(prefix + "_done")
}

// expPasses emits pass 2 of every row. Two rows both near run in one
// interleaved loop; otherwise one row after the other.
func (f *fwd) expPasses() {
	if f.nrows == 1 {
		f.onePass(f.rows[0], f.name, f.units)
		return
	}
	for _, r := range f.rows {
		f.isFar(r, f.name+"_apart")
	}
	f.nearSetup(f.rows)
	start(f.rows)
	expPass(f.s, f.name+"_near", f.n, f.rows, true, f.units, f.k)
	JMP(LabelRef(f.name + "_summed"))
	Label(f.name + "_apart")
	for ri, r := range f.rows {
		f.onePass(r, f.name+"_row"+itoa(ri), 2*f.units)
	}
}

// totals adds each row's compensated total and partial sums (and, on
// AVX2, its NaN lanes) into the sum, in every lane of the vector returned
// for the row.
func (f *fwd) totals() []reg.VecVirtual {
	var sums []reg.VecVirtual
	for _, r := range f.rows {
		VSUBPS(r.comp, r.total, r.total)
		VADDPS(r.total, r.sums[0], r.sums[0])
		for len(r.sums) > 1 {
			h := len(r.sums) / 2
			for i := 0; i < h; i++ {
				VADDPS(r.sums[i+h], r.sums[i], r.sums[i])
			}
			r.sums = r.sums[:h]
		}
		if !f.s.Is512() {
			VORPS(r.nan, r.sums[0], r.sums[0]) // all-ones lanes are NaN
		}
		sums = append(sums, r.sums[0])
	}
	f.s.ReduceAll(sums, VADDPS)
	return sums
}

// reciprocals returns inv = 1/sum, or 0 if sum is 0 (every entry was -Inf
// and every exponential is already 0), for each sum. A NaN sum gives a NaN
// inv.
func (f *fwd) reciprocals(sums []reg.VecVirtual) []reg.VecVirtual {
	s := f.s
	invs := make([]reg.VecVirtual, f.nrows)
	zero := s.Vec()
	VXORPS(zero, zero, zero)
	for i, sum := range sums {
		invs[i] = s.Vec()
		if s.Is512() {
			// 1/sum to 14 bits, then one Newton step: inv*(1 + (1 - sum*inv)).
			e := s.Vec()
			VRCP14PS(sum, invs[i])
			f.k.Load(cOne, e)
			VFNMADD231PS(invs[i], sum, e)
			VFMADD231PS(e, invs[i], invs[i])
			kz := K()
			VCMPPS(Imm(cmpEQOQ), zero, sum, kz)
			VMOVAPS(zero, kz, invs[i])
		} else {
			f.k.Load(cOne, invs[i])
			VDIVPS(sum, invs[i], invs[i])
			m := s.Vec()
			VCMPPS(Imm(cmpEQOQ), zero, sum, m)
			VANDNPS(invs[i], m, invs[i])
		}
	}
	return invs
}

// scalePass emits pass 3: every row's dst *= its inv.
func (f *fwd) scalePass(invs []reg.VecVirtual) {
	s := f.s
	for _, r := range f.rows {
		MOVQ(r.dst, r.pd)
	}
	loop(s, f.name+"_scale", f.n, 4, func(b int) {
		for _, r := range f.rows {
			ADDQ(U32(b), r.pd)
		}
	}, func(offs []int, tl *x86.Tail) {
		// All loads of a block before its stores: the rows of a pair are
		// often 4 KiB apart, and a load issued after a store to the same
		// address modulo 4096 waits for it (4K aliasing).
		var vs []reg.VecVirtual
		var ms []Mem
		for _, off := range offs {
			for ri, r := range f.rows {
				v := s.Vec()
				switch {
				case tl == nil:
					VMULPS(mem(r.pd, off), invs[ri], v)
				case s.Is512():
					VMULPS_Z(mem(r.pd, off), invs[ri], tl.K, v)
				default:
					v = s.Load(mem(r.pd, off), tl)
					VMULPS(invs[ri], v, v)
				}
				vs, ms = append(vs, v), append(ms, mem(r.pd, off))
			}
		}
		for i, v := range vs {
			s.Store(v, ms[i], tl)
		}
	})
}

func itoa(i int) string { return string(rune('0' + i)) }

func backward(s *x86.ISA) {
	name := "softmaxBackwardRow" + s.Name
	x86.Func(name, "softmaxBackwardRow",
		name+" sets dx[j] = y[j]*(dy[j] - s) for j < len(y), where",
		"s = sum_k y[k]*dy[k]. dx and dy must be at least as long as y (not",
		"checked); dx may be dy itself. Requires "+s.Req+".")
	dxBase := x86.LoadGP(Param("dx").Base())
	yBase := x86.LoadGP(Param("y").Base())
	dyBase := x86.LoadGP(Param("dy").Base())
	n := x86.LoadGP(Param("y").Len())
	TESTQ(n, n)
	JZ(LabelRef(name + "_ret"))

	Comment("Pass 1: s = sum(y*dy).")
	acc := make([]reg.VecVirtual, 4)
	for i := range acc {
		acc[i] = s.Vec()
		VXORPS(acc[i], acc[i], acc[i])
	}
	py, pdy := GP64(), GP64()
	MOVQ(yBase, py)
	MOVQ(dyBase, pdy)
	loop(s, name+"_dot", n, 4, func(b int) { ADDQ(U32(b), py); ADDQ(U32(b), pdy) }, func(offs []int, tl *x86.Tail) {
		for j, off := range offs {
			yv := s.Load(mem(py, off), tl)
			if tl == nil {
				VFMADD231PS(mem(pdy, off), yv, acc[j])
			} else {
				dyv := s.Load(mem(pdy, off), tl)
				VFMADD231PS(dyv, yv, acc[j])
			}
		}
	})
	x86.Tree(VADDPS, acc)
	sv := acc[0]
	s.ReduceAll([]reg.VecVirtual{sv}, VADDPS)

	Comment("Pass 2: dx = y*(dy - s).")
	pdx := GP64()
	MOVQ(yBase, py)
	MOVQ(dyBase, pdy)
	MOVQ(dxBase, pdx)
	loop(s, name+"_out", n, 4, func(b int) { ADDQ(U32(b), py); ADDQ(U32(b), pdy); ADDQ(U32(b), pdx) }, func(offs []int, tl *x86.Tail) {
		// Loads of a block before its stores (see pass 3 of forward).
		ds := make([]reg.VecVirtual, len(offs))
		for i, off := range offs {
			d := s.Load(mem(pdy, off), tl)
			VSUBPS(sv, d, d)
			switch {
			case tl == nil:
				VMULPS(mem(py, off), d, d)
			case s.Is512():
				VMULPS_Z(mem(py, off), d, tl.K, d)
			default:
				yv := s.Load(mem(py, off), tl)
				VMULPS(yv, d, d)
			}
			ds[i] = d
		}
		for i, off := range offs {
			s.Store(ds[i], mem(pdx, off), tl)
		}
	})
	VZEROUPPER()
	Label(name + "_ret")
	RET()
}
