// Command wdots generates the AVX2+FMA and AVX-512 kernels of the
// products over low-bit weights of package kernels/amd64 into
// wdots_amd64.s (see kernels/internal/wdots for their contract):
//
// wdots<T><r>: for i < r, j < rows, c[i*ldc+j] = alpha*Σ_p x_i[p]·w_j[p] +
// beta*c[i*ldc+j], W's row j a row of groups of 32 weights of type T
// (BF16: 64 bytes, the halves of 32-bit words interleaved as package
// lowbit stores them; Int8: 36 bytes, a float32 scale and 32 int8).
//
// Rows of W go R at a time (R from the register budget), then one at a
// time. Each group of a row is converted to float32 vectors in registers
// (bf16: the words shifted left by 16, and masked to their upper halves;
// int8: VPMOVSXBD, VCVTDQ2PS, times the group's scale) and each vector is
// multiplied with the r rows of x, read from memory, into one vector
// accumulator per (i, j), in the order of p. The groups in place come
// first, then, when the argument xt is not nil, one more group whose x is
// read from xt. The accumulators are reduced across their lanes at the
// end, so a result does not depend on the block its row was in.
//
// The kernels read c only when beta is not ±0, and never touch memory
// outside the rows×(groups+1) blocks of W, the r rows of x and xt, and
// the r×rows region of c given.
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

// group is the number of weights of a group, and groupX its x's bytes.
const (
	group  = 32
	groupX = 4 * group
)

// format is a weight type.
type format struct {
	name       string
	blockBytes int
}

var (
	bf16 = &format{name: "BF16", blockBytes: 2 * group}
	int8 = &format{name: "Int8", blockBytes: 4 + group}
)

// rowsAtOnce returns R, the rows of W a kernel of r rows of x takes at
// once: r·R accumulators and the conversion's four temporaries fit the
// registers (16 YMM, 32 ZMM).
func rowsAtOnce(s *x86.ISA, r int) int {
	if s.Is512() {
		return []int{0, 8, 8, 6, 5, 4, 3, 3, 2}[r]
	}
	return []int{0, 8, 5, 3, 2, 2, 1, 1, 1}[r]
}

var upperHalves Mem

func main() {
	ConstraintExpr("amd64,!purego")
	upperHalves = GLOBL("wdotsUpperHalves", RODATA|NOPTR)
	DATA(0, U32(0xffff0000))
	for _, s := range x86.Both {
		for _, f := range []*format{bf16, int8} {
			for r := 1; r <= maxR; r++ {
				kernel(s, f, r)
			}
		}
	}
	Generate()
}

func kernel(s *x86.ISA, f *format, r int) {
	name := fmt.Sprintf("wdots%s%d%s", f.name, r, s.Name)
	R := rowsAtOnce(s, r)
	x86.Func(name, "func(rows, groups int, w *byte, ldw int, x *float32, ldx int, xt *float32, c *float32, ldc int, alpha, beta float32)",
		fmt.Sprintf("%s sets c[i*ldc+j] = alpha*Σ_p x_i[p]*w_j[p] + beta*c[i*ldc+j]", name),
		fmt.Sprintf("for i < %d, j < rows (rows >= 1) over %s groups of W (see kernels/internal/wdots),", r, f.name),
		fmt.Sprintf("not reading c when beta is ±0. Rows of W go %d at a time, then one at a time. Requires %s.", R, s.Req))
	rows := x86.Addr(Param("rows"))
	wp := x86.Addr(Param("w"))
	cp := x86.Addr(Param("c"))
	blocks := []int{R, 1}
	if R == 1 {
		blocks = blocks[1:]
	}
	for _, blk := range blocks {
		loop := fmt.Sprintf("%s_rows%d", name, blk)
		next := name + "_rows1"
		if blk == 1 {
			next = name + "_done"
		}
		Label(loop)
		CMPQ(rows, U32(blk))
		JB(LabelRef(next))
		block(s, f, r, blk, fmt.Sprintf("%s_b%d", name, blk))
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
	var p4, ldw3 reg.GPVirtual
	if R > 2 {
		ldw3 = GP64()
		LEAQ(Mem{Base: ldw, Index: ldw, Scale: 2}, ldw3)
	}
	if R > 4 {
		p4 = GP64()
		LEAQ(Mem{Base: p0, Index: ldw, Scale: 4}, p4)
	}
	wAt := func(j, disp int) Mem {
		base := p0
		if j >= 4 {
			base, j = p4, j-4
		}
		switch j {
		case 0:
			return Mem{Base: base, Disp: disp}
		case 1:
			return Mem{Base: base, Index: ldw, Scale: 1, Disp: disp}
		case 2:
			return Mem{Base: base, Index: ldw, Scale: 2, Disp: disp}
		}
		return Mem{Base: base, Index: ldw3, Scale: 1, Disp: disp}
	}
	xp := x86.Arg("x")
	var ldx, ldx3, xp4 reg.GPVirtual
	if r > 1 {
		ldx = x86.Arg("ldx")
		SHLQ(U8(2), ldx)
	}
	if r > 3 {
		ldx3 = GP64()
		LEAQ(Mem{Base: ldx, Index: ldx, Scale: 2}, ldx3)
	}
	if r > 4 {
		xp4 = GP64()
		LEAQ(Mem{Base: xp, Index: ldx, Scale: 4}, xp4)
	}
	xAt := func(i, disp int) Mem {
		base := xp
		if i >= 4 {
			base, i = xp4, i-4
		}
		switch i {
		case 0:
			return Mem{Base: base, Disp: disp}
		case 1:
			return Mem{Base: base, Index: ldx, Scale: 1, Disp: disp}
		case 2:
			return Mem{Base: base, Index: ldx, Scale: 2, Disp: disp}
		}
		return Mem{Base: base, Index: ldx3, Scale: 1, Disp: disp}
	}
	var mask reg.VecVirtual
	if f == bf16 {
		mask = s.Vec()
		VPBROADCASTD(upperHalves, mask)
	}
	// body adds one group of every row of W times x into the accumulators.
	body := func() {
		for j := 0; j < R; j++ {
			for _, v := range convert(s, f, mask, func(disp int) Mem { return wAt(j, disp) }) {
				for i := 0; i < r; i++ {
					VFMADD231PS(xAt(i, v.xoff), v.w, acc[j][i])
				}
			}
		}
	}
	g := x86.Arg("groups")
	Label(name + "_g")
	TESTQ(g, g)
	JZ(LabelRef(name + "_tail"))
	body()
	ADDQ(U32(f.blockBytes), p0)
	if p4 != nil {
		ADDQ(U32(f.blockBytes), p4)
	}
	ADDQ(U32(groupX), xp)
	if xp4 != nil {
		ADDQ(U32(groupX), xp4)
	}
	DECQ(g)
	JMP(LabelRef(name + "_g"))

	// The padded last group, its x from xt (rows GroupSize floats apart).
	Label(name + "_tail")
	xt := x86.Addr(Param("xt"))
	CMPQ(xt, U32(0))
	JE(LabelRef(name + "_reduce"))
	MOVQ(xt, xp)
	if ldx != nil {
		MOVQ(U32(groupX), ldx)
	}
	if ldx3 != nil {
		MOVQ(U32(3*groupX), ldx3)
	}
	if xp4 != nil {
		LEAQ(Mem{Base: xp, Disp: 4 * groupX}, xp4)
	}
	body()
	Label(name + "_reduce")

	// Reduce each accumulator into its lane 0, scale by alpha, and store
	// c[i*ldc+j] (+ beta*c when beta is not ±0).
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
	alpha := XMM()
	VMOVSS(x86.Addr(Param("alpha")), alpha)
	for _, v := range res {
		VMULSS(alpha, v.AsX(), v.AsX())
	}
	var ldc reg.GPVirtual
	if r > 1 {
		ldc = x86.Arg("ldc")
		SHLQ(U8(2), ldc)
	}
	store := func(withBeta bool) {
		var beta reg.VecVirtual
		if withBeta {
			beta = XMM()
			VMOVSS(x86.Addr(Param("beta")), beta)
		}
		row := x86.Arg("c")
		for i := 0; i < r; i++ {
			if i > 0 {
				ADDQ(ldc, row)
			}
			for j := 0; j < R; j++ {
				v := acc[j][i].AsX()
				if withBeta {
					VFMADD231SS(Mem{Base: row, Disp: 4 * j}, beta, v)
				}
				VMOVSS(v, Mem{Base: row, Disp: 4 * j})
			}
		}
	}
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

// wvec is a vector of weights in float32 and the byte offset, within the
// group's x, of the elements it multiplies.
type wvec struct {
	w    reg.VecVirtual
	xoff int
}

// convert loads the group of a row of W at at(0) and returns its weights
// as float32 vectors, in the order of their x offsets.
func convert(s *x86.ISA, f *format, mask reg.VecVirtual, at func(disp int) Mem) []wvec {
	var out []wvec
	if f == bf16 {
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
	scale := s.Vec()
	VBROADCASTSS(at(0), scale)
	for p := 0; p < group; p += s.Lanes {
		v := s.Vec()
		VPMOVSXBD(at(4+p), v)
		VCVTDQ2PS(v, v)
		VMULPS(scale, v, v)
		out = append(out, wvec{v, 4 * p})
	}
	return out
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
