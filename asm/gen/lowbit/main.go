// Command lowbit generates the AVX2+FMA and AVX-512 kernels of the
// products over low-bit weights of package kernels/amd64 into
// lowbit_amd64.s (see kernels/internal/lowbit for their contract):
//
// lowbitBF16<r>: for i < r, j < rows, c[i*ldc+j] = alpha*Σ_p x_i[p]·w_j[p]
// + beta*c[i*ldc+j], W's row j a row of groups of 32 bfloat16 weights (64
// bytes, the halves of 32-bit words interleaved as package lowbit stores
// them) and x float32. Each group of a row is converted to float32
// vectors in registers (the words shifted left by 16, and masked to their
// upper halves) and each vector is multiplied with the r rows of x, read
// from memory, into one vector accumulator per (i, j), in the order of p.
// The groups in place come first, then, when the argument xt is not nil,
// one more group whose x is read from xt.
//
// lowbitInt8<r>: for i < r, j < rows, c[i*ldc+j] = xs[i]·Σ_g s_jg·Σ_{p in
// g} x_i[p]·q_j[p] + beta*c[i*ldc+j], W's row j a row of groups of 32
// int8 weights q with a float32 scale s (36 bytes: the scale, then q) and
// x int16, whole groups (the driver pads x). Each group's sums are exact
// int32 lanes (int8Body), converted to float32 and multiplied by the
// group's scale into one vector accumulator per (i, j).
//
// lowbitBF16Pair1AVX512 and lowbitSplitBF16AVX512 (pair.go): the one-row
// BF16 product on AVX512_BF16, x split into two bfloat16 vectors.
//
// Rows of W go R at a time (R from the register budget), then one at a
// time; each group of a block prefetches the same group of the rows of
// the next block (PREFETCHT0), or for the AVX2 one-row int8 kernel of the
// block after it, into L2 (PREFETCHT2); prefetches never fault. The accumulators are reduced across their lanes at the end, so a
// result does not depend on the block its row was in. The kernels read c
// only when beta is not ±0, and never touch memory outside the
// rows×(groups+1) blocks of W, the r rows of x (and xt), and the r×rows
// region of c given.
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/simdgpt/simdgpt/asm/gen/internal/x86"
)

// maxR is the largest number of rows of x a kernel takes.
const maxR = 8

// group is the number of weights of a group.
const group = 32

// format is a weight type: its name, the bytes of a group of W and the
// bytes of an element of x (float32 for bf16, int16 for int8).
type format struct {
	name       string
	blockBytes int
	xBytes     int
}

var (
	bf16 = &format{name: "BF16", blockBytes: 2 * group, xBytes: 4}
	int8 = &format{name: "Int8", blockBytes: 4 + group, xBytes: 2}
)

// groupX is the bytes of x a group of f multiplies.
func (f *format) groupX() int { return f.xBytes * group }

// rowsAtOnce returns R, the rows of W a kernel of r rows of x takes at
// once: r·R accumulators and the conversion's temporaries fit the
// registers (16 YMM, 32 ZMM), and the rows' base registers (one per four
// rows, twice: the block's and the next block's) fit the general ones.
// (The AVX-512 int8 kernels take rows of W in pairs: int8PairsPer.)
func rowsAtOnce(s *x86.ISA, f *format, r int) int {
	if s.Is512() {
		return []int{0, 0, 8, 6, 5, 4, 3, 3, 2}[r]
	}
	return []int{0, 8, 5, 3, 2, 2, 1, 1, 1}[r]
}

// aheadBlocks is how many blocks of rows ahead a kernel prefetches: two
// for the one-row int8 kernel of AVX2 (which both sets decode with) and
// for the 8-row AVX-512 int8 kernel (BenchmarkInt8Decode: 15.8 against
// 19.2 ms for GPT-2 small's matrices at m = 8, Zen 5, with 2 rows of W at
// once; 9.3-9.8 against 9.7-10.3 cpu-ms with 3), one otherwise, as
// measured in PERF.md ("GEMV with 16- and 8-bit weights").
// Prefetches more than one block ahead go to L2 (PREFETCHT2).
func aheadBlocks(s *x86.ISA, f *format, r int) int {
	if f == int8 && r == 1 && !s.Is512() {
		return 2
	}
	if f == int8 && s.Is512() && r == maxR {
		return 2
	}
	return 1
}

// minR512 is the fewest rows of x an AVX-512 kernel takes: for one row
// the avx512 set uses the AVX2 kernel (see kernels/amd64/lowbit.go).
const minR512 = 2

var upperHalves Mem

func main() {
	ConstraintExpr("amd64,!purego")
	upperHalves = GLOBL("lowbitUpperHalves", RODATA|NOPTR)
	DATA(0, U32(0xffff0000))
	pairGatherTable()
	splitConstsTable()
	for _, s := range x86.Both {
		for _, f := range []*format{bf16, int8} {
			for r := 1; r <= maxR; r++ {
				switch {
				case s.Is512() && r < minR512:
				case s.Is512() && f == int8:
					int8PairsKernel(s, r)
				default:
					kernel(s, f, r)
				}
			}
		}
	}
	pairKernel()
	splitKernel()
	x86.Finish()
}

func kernel(s *x86.ISA, f *format, r int) {
	name := fmt.Sprintf("lowbit%s%d%s", f.name, r, s.Name)
	R := rowsAtOnce(s, f, r)
	if f == bf16 {
		x86.Func(name, "lowbitBF16",
			fmt.Sprintf("%s sets c[i*ldc+j] = alpha*Σ_p x_i[p]*w_j[p] + beta*c[i*ldc+j]", name),
			fmt.Sprintf("for i < %d, j < rows (rows >= 1) over BF16 groups of W (see kernels/internal/lowbit),", r),
			fmt.Sprintf("not reading c when beta is ±0. Rows of W go %d at a time, then one at a time. Requires %s.", R, s.Req))
	} else {
		x86.Func(name, "lowbitInt8",
			fmt.Sprintf("%s sets c[i*ldc+j] = xs[i]*Σ_g scale_jg*Σ_{p in g} x_i[p]*q_j[p] + beta*c[i*ldc+j]", name),
			fmt.Sprintf("for i < %d, j < rows (rows >= 1) over Int8 groups of W and int16 rows of x (see kernels/internal/lowbit),", r),
			fmt.Sprintf("not reading c when beta is ±0. Rows of W go %d at a time, then one at a time. Requires %s.", R, s.Req))
	}
	blocks := []int{R, 1}
	if R == 1 {
		blocks = blocks[1:]
	}
	rowBlocks(name, blocks, func(blk int, label string) { block(s, f, r, blk, label) })
}

// rowBlocks emits a kernel's passes over the rows of W: while at least
// blocks[b] rows remain, body computes that many (under labels starting
// with label) and the kernel moves w and c on by them, then the next
// size; the last size must be 1. The function returns after the passes.
func rowBlocks(name string, blocks []int, body func(blk int, label string)) {
	rows := x86.Addr(Param("rows"))
	wp := x86.Addr(Param("w"))
	cp := x86.Addr(Param("c"))
	for bi, blk := range blocks {
		loop := fmt.Sprintf("%s_rows%d", name, blk)
		next := name + "_done"
		if bi+1 < len(blocks) {
			next = fmt.Sprintf("%s_rows%d", name, blocks[bi+1])
		}
		Label(loop)
		CMPQ(rows, U32(blk))
		JB(LabelRef(next))
		body(blk, fmt.Sprintf("%s_b%d", name, blk))
		// Next block of rows: w += blk*ldw, c += blk floats.
		step := x86.Arg("ldw")
		if blk > 1 {
			IMUL3Q(U32(blk), step, step)
		}
		ADDQ(step, wp)
		ADDQ(U32(4*blk), cp)
		SUBQ(U32(blk), rows)
		JMP(LabelRef(loop))
	}
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// block computes the r×R block of c from R rows of W.
func block(s *x86.ISA, f *format, r, R int, name string) {
	acc := make([][]reg.VecVirtual, R) // acc[j][i]: row j of W, row i of x
	for j := range acc {
		acc[j] = s.Zeros(r)
	}
	p0 := x86.Arg("w")
	ldw := x86.Arg("ldw")
	var ldw3 reg.GPVirtual
	if R > 2 {
		ldw3 = GP64()
		LEAQ(Mem{Base: ldw, Index: ldw, Scale: 2}, ldw3)
	}
	rows := x86.NewRows(p0, ldw, ldw3, R)
	wAt := rows.At
	// next: the same group of the next block's rows (R rows on),
	// prefetched while this block's is read. A row of W is short (K·9/8
	// bytes for int8, K·2 for bf16), too short for the hardware's stream
	// prefetchers to run ahead of the R rows read at once; the next
	// block's rows are read next.
	ahead := aheadBlocks(s, f, r)
	var next *x86.Rows
	if R > 1 {
		next = rows.NextBlock(ahead * R)
	}
	x := newXRows(r, f.xBytes)
	xAt := x.At
	var mask reg.VecVirtual
	if f == bf16 {
		mask = s.Vec()
		VPBROADCASTD(upperHalves, mask)
	}
	// body adds one group of every row of W times x into the accumulators.
	body := func() {
		prefetchRows(next, R, ahead)
		if f == int8 {
			int8Body(s, r, R, wAt, xAt, acc)
			return
		}
		for j := 0; j < R; j++ {
			for _, v := range convert(s, mask, func(disp int) Mem { return wAt(j, disp) }) {
				for i := 0; i < r; i++ {
					VFMADD231PS(xAt(i, v.xoff), v.w, acc[j][i])
				}
			}
		}
	}
	groupLoop(name, name+"_tail", f, rows, next, x, body)

	// BF16: the padded last group, its x from xt (rows GroupSize floats
	// apart). Int8's rows of x are padded to whole groups.
	Label(name + "_tail")
	if f == bf16 {
		tail(f, name, x, body)
	}
	Label(name + "_reduce")
	finish(s, f, r, R, name, acc)
}

// prefetchRows prefetches the group at the n rows of next (the block of
// rows ahead blocks on): into L1 (PREFETCHT0) one block ahead, into L2
// (PREFETCHT2) further; nothing when next is nil.
func prefetchRows(next *x86.Rows, n, ahead int) {
	if next == nil {
		return
	}
	for j := 0; j < n; j++ {
		if ahead > 1 {
			PREFETCHT2(next.At(j, 0))
		} else {
			PREFETCHT0(next.At(j, 0))
		}
	}
}

// groupLoop emits a block's loop over the groups of W: while the
// argument groups (counted down) is not 0, body, then W's rows, the
// prefetched rows (next, when not nil) and x's rows move on by a group
// of f; then it jumps to the label done.
func groupLoop(name, done string, f *format, rows, next *x86.Rows, x *xRows, body func()) {
	g := x86.Arg("groups")
	Label(name + "_g")
	TESTQ(g, g)
	JZ(LabelRef(done))
	body()
	rows.Advance(f.blockBytes)
	if next != nil {
		next.Advance(f.blockBytes)
	}
	x.Advance(f.groupX())
	DECQ(g)
	JMP(LabelRef(name + "_g"))
}

// tail runs body once more on the group of x at xt, when xt is not nil.
func tail(f *format, name string, x *xRows, body func()) {
	groupX := f.groupX()
	xt := x86.Addr(Param("xt"))
	CMPQ(xt, U32(0))
	JE(LabelRef(name + "_reduce"))
	MOVQ(xt, x.p)
	if x.ld != nil {
		MOVQ(U32(groupX), x.ld)
	}
	if x.ld3 != nil {
		MOVQ(U32(3*groupX), x.ld3)
	}
	if x.p4 != nil {
		LEAQ(Mem{Base: x.p, Disp: 4 * groupX}, x.p4)
	}
	body()
}

// xRows addresses the rows of x a kernel of r rows reads: the argument x
// (p), and for r > 1 the bytes between rows (ld, from the argument ldx
// in elements of elem bytes), 3·ld when r > 3 and the fifth row (p4)
// when r > 4.
type xRows struct {
	p, ld, ld3, p4 reg.GPVirtual
}

// newXRows loads the arguments x and ldx of a kernel of r rows of x.
func newXRows(r, elem int) *xRows {
	x := &xRows{p: x86.Arg("x")}
	if r > 1 {
		x.ld = x86.Arg("ldx")
		IMUL3Q(U32(elem), x.ld, x.ld)
	}
	if r > 3 {
		x.ld3 = GP64()
		LEAQ(Mem{Base: x.ld, Index: x.ld, Scale: 2}, x.ld3)
	}
	if r > 4 {
		x.p4 = GP64()
		LEAQ(Mem{Base: x.p, Index: x.ld, Scale: 4}, x.p4)
	}
	return x
}

// At returns the address disp bytes into row i.
func (x *xRows) At(i, disp int) Mem {
	if i >= 4 {
		return x86.RowAt(x.p4, x.ld, x.ld3, i-4, disp)
	}
	return x86.RowAt(x.p, x.ld, x.ld3, i, disp)
}

// Advance moves every row on by n bytes.
func (x *xRows) Advance(n int) {
	ADDQ(U32(n), x.p)
	if x.p4 != nil {
		ADDQ(U32(n), x.p4)
	}
}

// finish reduces each accumulator into its lane 0, scales it (bf16: by
// alpha; int8: acc[j][i] by xs[i]) and stores c[i*ldc+j] (+ beta*c when
// beta is not ±0).
func finish(s *x86.ISA, f *format, r, R int, name string, acc [][]reg.VecVirtual) {
	var res []reg.VecVirtual
	for j := 0; j < R; j++ {
		res = append(res, acc[j]...)
	}
	if s.Is512() {
		for q := 0; q < len(res); q += 4 {
			s.ReduceAll(res[q:min(q+4, len(res))], VADDPS)
		}
	} else {
		for _, v := range res {
			s.SumToLane0(v)
		}
	}
	if f == bf16 {
		alpha := XMM()
		VMOVSS(x86.Addr(Param("alpha")), alpha)
		for _, v := range res {
			VMULSS(alpha, v.AsX(), v.AsX())
		}
	} else {
		xs := x86.Arg("xs")
		for j := 0; j < R; j++ {
			for i := 0; i < r; i++ {
				VMULSS(Mem{Base: xs, Disp: 4 * i}, acc[j][i].AsX(), acc[j][i].AsX())
			}
		}
	}
	storeRows(name, r, func() reg.Register {
		beta := XMM()
		VMOVSS(x86.Addr(Param("beta")), beta)
		return beta
	}, func(i int, c reg.GPVirtual, beta reg.Register) {
		for j := 0; j < R; j++ {
			v := acc[j][i].AsX()
			if beta != nil {
				VFMADD231SS(Mem{Base: c, Disp: 4 * j}, beta, v)
			}
			VMOVSS(v, Mem{Base: c, Disp: 4 * j})
		}
	})
}

// storeRows emits the stores of a kernel's r rows of c, the argument ldc
// floats apart: row(i, c, beta) stores row i at c, with beta loaded by
// loadBeta when the argument beta is not ±0 and nil when it is (and c is
// then not to be read).
func storeRows(name string, r int, loadBeta func() reg.Register, row func(i int, c reg.GPVirtual, beta reg.Register)) {
	var ldc reg.GPVirtual
	if r > 1 {
		ldc = x86.Arg("ldc")
		SHLQ(U8(2), ldc)
	}
	betaBranches(name, func(withBeta bool) {
		var beta reg.Register
		if withBeta {
			beta = loadBeta()
		}
		c := x86.Arg("c")
		for i := 0; i < r; i++ {
			if i > 0 {
				ADDQ(ldc, c)
			}
			row(i, c, beta)
		}
	})
}

// betaBranches emits store(true) when the argument beta is not ±0 and
// store(false) when it is (so that c is not read), under labels starting
// with name.
func betaBranches(name string, store func(withBeta bool)) {
	bits := GP32()
	MOVL(x86.Addr(Param("beta")), bits)
	ANDL(U32(0x7fffffff), bits)
	JZ(LabelRef(name + "_beta0"))
	store(true)
	JMP(LabelRef(name + "_stored"))
	Label(name + "_beta0")
	store(false)
	Label(name + "_stored")
}

// zmmCount is the number of vector registers of AVX-512.
const zmmCount = 32

// int8Body adds one Int8 group of each of the R rows of W times the r
// int16 rows of x into the accumulators (AVX2; the AVX-512 kernels take
// rows of W in pairs, int8pairs.go, with these results): the group's 32
// weights sign-extended to int16 (VPMOVSXBW) in two halves, each
// multiplied by x's and added in pairs into int32 lanes (VPMADDWD), the
// two halves' lanes added, converted to float32 and multiplied by the
// group's scale into the accumulator (one FMA). The integer sums are
// exact: |q| <= 127 and |x| <= 32767 bound a lane by 4·127·32767 < 2³¹.
//
// The one-row kernel loads the group's x into two registers once for
// its R rows of W (a VPMADDWD with a memory operand for each row is the
// slower loop); the others read x from memory for each product, their
// registers taken by accumulators.
func int8Body(s *x86.ISA, r, R int, wAt, xAt func(j, disp int) Mem, acc [][]reg.VecVirtual) {
	var x0, x1 Op
	if r == 1 {
		y0, y1 := YMM(), YMM()
		VMOVDQU(xAt(0, 0), y0)
		VMOVDQU(xAt(0, group), y1)
		x0, x1 = y0, y1
	}
	for j := 0; j < R; j++ {
		w0, w1, scale := YMM(), YMM(), YMM()
		VPMOVSXBW(wAt(j, 4), w0)
		VPMOVSXBW(wAt(j, 4+group/2), w1)
		VBROADCASTSS(wAt(j, 0), scale)
		for i := 0; i < r; i++ {
			if r > 1 {
				x0, x1 = xAt(i, 0), xAt(i, group)
			}
			t0, t1 := YMM(), YMM()
			VPMADDWD(x0, w0, t0)
			VPMADDWD(x1, w1, t1)
			VPADDD(t1, t0, t0)
			VCVTDQ2PS(t0, t0)
			VFMADD231PS(scale, t0, acc[j][i])
		}
	}
}

// wvec is a vector of weights in float32 and the byte offset, within the
// group's x, of the elements it multiplies.
type wvec struct {
	w    reg.VecVirtual
	xoff int
}

// convert loads the BF16 group of a row of W at at(0) and returns its
// weights as float32 vectors, in the order of their x offsets.
func convert(s *x86.ISA, mask reg.VecVirtual, at func(disp int) Mem) []wvec {
	// Word d of the group is w[d] | w[16+d]<<16.
	var lo, hi []wvec
	for off := 0; off < 2*group; off += s.Bytes() {
		u := s.Vec()
		VMOVDQU32orU(s, at(off), u)
		l := s.Vec()
		VPSLLD(U8(16), u, l)
		if s.Is512() {
			VPANDD(mask, u, u)
		} else {
			VPAND(mask, u, u)
		}
		d := off / 4
		lo = append(lo, wvec{l, 4 * d})
		hi = append(hi, wvec{u, 4 * (group/2 + d)})
	}
	return append(lo, hi...)
}

// VMOVDQU32orU loads a whole vector of integers: VMOVDQU32 on ZMM,
// VMOVDQU on YMM.
func VMOVDQU32orU(s *x86.ISA, m Mem, v reg.VecVirtual) {
	if s.Is512() {
		VMOVDQU32(m, v)
	} else {
		VMOVDQU(m, v)
	}
}
