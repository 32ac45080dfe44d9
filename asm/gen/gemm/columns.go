package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/simdgpt/simdgpt/asm/gen/internal/x86"
)

// colsMax is the most columns colsKernel computes.
const colsMax = 3

// colsKernel generates GemmColsKernel{MR}{ISA}, which computes up to three
// columns of a tile from a packed A panel, the rows along the vector:
//
//	dst[j*ps + i] = sum_{p<k} a[p*ps + i] * b[j*k + p],  i < ps, j < cols
//
// with ps = panelStride(MR) (one vector) and b holding the cols columns of
// op(B) one after another. It serves a last panel of 1 to 3 columns when A
// is packed (a transposed A): the panel kernels would spend NR lanes of
// FMAs per row and k step on it, this kernel one vector FMA per column and
// k step. The caller scales the results into C. Each column has four
// accumulators (k steps in turn) to cover the FMA latency.
func colsKernel(s *x86.ISA, mr int) {
	ps := panelStride(mr)
	if ps != s.Lanes {
		panic("colsKernel: a panel row must be one vector")
	}
	name := colsName(s, mr)
	x86.Func(name, "gemmColsKernel",
		fmt.Sprintf("%s sets dst[j*%d+i] = sum over p < k of a[p*%d+i]*b[j*k+p], for i < %d and", name, ps, ps, ps),
		fmt.Sprintf("j < cols (1 <= cols <= %d): columns of C from a packed A panel. Requires %s.", colsMax, s.Req),
	)
	k := x86.Arg("k")
	a := x86.Arg("a")
	cols := x86.Arg("cols")
	dst := x86.Arg("dst")
	// Column pointers: b, b + 4k, b + 8k.
	kb := GP64()
	MOVQ(k, kb)
	SHLQ(U8(2), kb)
	bp := make([]reg.GPVirtual, colsMax)
	bp[0] = x86.Arg("b")
	for j := 1; j < colsMax; j++ {
		bp[j] = GP64()
		LEAQ(Mem{Base: bp[j-1], Index: kb, Scale: 1}, bp[j])
	}
	for nc := 1; nc <= colsMax; nc++ {
		CMPQ(cols, U32(nc))
		JEQ(LabelRef(fmt.Sprintf("%s_cols%d", name, nc)))
	}
	RET() // cols out of range: the caller never does this
	for nc := 1; nc <= colsMax; nc++ {
		colsCase(s, fmt.Sprintf("%s_cols%d", name, nc), nc, k, a, dst, bp)
	}
}

// colsCase emits the case of nc columns, at label pre: unroll k steps an
// iteration into unroll accumulators per column, then the k%unroll steps
// left, then the accumulators' sums stored.
func colsCase(s *x86.ISA, pre string, nc int, k, a, dst reg.GPVirtual, bp []reg.GPVirtual) {
	ps := s.Lanes
	Label(pre)
	acc := make([][unroll]reg.VecVirtual, nc)
	for j := range acc {
		for u := range acc[j] {
			acc[j][u] = s.Vec()
			VXORPS(acc[j][u], acc[j][u], acc[j][u])
		}
	}
	n := GP64()
	MOVQ(k, n)
	SHRQ(U8(2), n)
	rem := GP64()
	MOVQ(k, rem)
	ANDQ(U8(unroll-1), rem)
	q := GP64() // byte offset into the columns
	XORQ(q, q)
	pa := GP64()
	MOVQ(a, pa)
	TESTQ(n, n)
	JZ(LabelRef(pre + "_tail"))
	Label(pre + "_loop")
	for u := 0; u < unroll; u++ {
		av := s.Vec()
		VMOVUPS(Mem{Base: pa, Disp: 4 * u * ps}, av)
		for j := 0; j < nc; j++ {
			t := s.Vec()
			VBROADCASTSS(Mem{Base: bp[j], Index: q, Scale: 1, Disp: 4 * u}, t)
			VFMADD231PS(av, t, acc[j][u])
		}
	}
	ADDQ(U32(4*unroll*ps), pa)
	ADDQ(U8(4*unroll), q)
	DECQ(n)
	JNZ(LabelRef(pre + "_loop"))
	Label(pre + "_tail")
	TESTQ(rem, rem)
	JZ(LabelRef(pre + "_store"))
	Label(pre + "_tailloop")
	av := s.Vec()
	VMOVUPS(Mem{Base: pa}, av)
	for j := 0; j < nc; j++ {
		t := s.Vec()
		VBROADCASTSS(Mem{Base: bp[j], Index: q, Scale: 1}, t)
		VFMADD231PS(av, t, acc[j][0])
	}
	ADDQ(U32(4*ps), pa)
	ADDQ(U8(4), q)
	DECQ(rem)
	JNZ(LabelRef(pre + "_tailloop"))
	Label(pre + "_store")
	for j := range acc {
		x86.Tree(VADDPS, acc[j][:])
		VMOVUPS(acc[j][0], Mem{Base: dst, Disp: 4 * j * ps})
	}
	VZEROUPPER()
	RET()
}

// dotRows are the registers of a dot kernel's rows of A.
type dotRows struct {
	bases   []reg.GPVirtual
	rs, rs3 reg.GPVirtual
}

func (d *dotRows) addr(i int) Mem { return rowAddr(d.bases, d.rs, d.rs3, i) }

// dotKernel generates GemmDotKernel{MR}{ISA}, which computes one column of
// C for MR rows as dot products along k:
//
//	c[i*ldc] = alpha * sum_{p<k} a[i*lda+p]*b[p] + beta*c[i*ldc],  i < MR
//
// It serves the last column of a matrix whose width leaves one column past
// the full panels (N = 65 in TinyGPT's LM head): the panel kernels would
// spend a whole vector of FMAs per row and k step on it, this kernel one
// FMA per row per vector of k. Each row of A and b is read for exactly k
// floats (masked loads for the tail); C is not read when beta is ±0.
func dotKernel(s *x86.ISA, mr int, maskTable Mem) {
	name := dotName(s, mr)
	x86.Func(name, "gemmDotKernel",
		fmt.Sprintf("%s sets c[i*ldc] = alpha*dot(a[i*lda:i*lda+k], b[:k]) + beta*c[i*ldc] for i < %d,", name, mr),
		fmt.Sprintf("reading exactly k floats of each row; c is not read when beta is ±0. Requires %s.", s.Req),
	)
	acc := make([]reg.VecVirtual, mr)
	for i := range acc {
		acc[i] = s.Vec()
		VXORPS(acc[i], acc[i], acc[i])
	}
	k := x86.Arg("k")
	var rows dotRows
	rows.bases, rows.rs, rows.rs3 = rowBases(mr, "a", "lda")
	b := x86.Arg("b")
	bv := dotLoop(s, name, k, b, &rows, acc)
	dotTail(s, name, k, b, bv, &rows, acc, maskTable)
	Label(name + "_reduce")
	for _, v := range acc {
		s.SumToLane0(v)
	}
	dotStore(name, acc)
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// dotLoop emits the loop over the whole vectors of k, one FMA per row a
// vector, and returns the register of b's vector.
func dotLoop(s *x86.ISA, name string, k, b reg.GPVirtual, rows *dotRows, acc []reg.VecVirtual) reg.VecVirtual {
	n := GP64()
	MOVQ(k, n)
	SHRQ(U8(map[int]int{8: 3, 16: 4}[s.Lanes]), n)
	ANDQ(U8(s.Lanes-1), k)
	TESTQ(n, n)
	JZ(LabelRef(name + "_tail"))
	Label(name + "_loop")
	bv := s.Vec()
	VMOVUPS(Mem{Base: b}, bv)
	for i := range acc {
		VFMADD231PS(rows.addr(i), bv, acc[i])
	}
	ADDQ(U32(s.Bytes()), b)
	for _, base := range rows.bases {
		ADDQ(U32(s.Bytes()), base)
	}
	DECQ(n)
	JNZ(LabelRef(name + "_loop"))
	return bv
}

// dotTail emits the masked step over the last k%lanes floats.
func dotTail(s *x86.ISA, name string, k, b reg.GPVirtual, bv reg.VecVirtual, rows *dotRows, acc []reg.VecVirtual, maskTable Mem) {
	Label(name + "_tail")
	TESTQ(k, k)
	JZ(LabelRef(name + "_reduce"))
	tbl := GP64()
	LEAQ(maskTable, tbl)
	if s.Is512() {
		km := K()
		KMOVW(Mem{Base: tbl, Index: k, Scale: 2}, km)
		VMOVUPS_Z(Mem{Base: b}, km, bv)
		for i := range acc {
			t := s.Vec()
			VMOVUPS_Z(rows.addr(i), km, t)
			VFMADD231PS(t, bv, acc[i])
		}
		return
	}
	NEGQ(k)
	m := s.Vec()
	VMOVUPS(Mem{Base: tbl, Index: k, Scale: 4, Disp: 32}, m)
	VMASKMOVPS(Mem{Base: b}, m, bv)
	for i := range acc {
		t := s.Vec()
		VMASKMOVPS(rows.addr(i), m, t)
		VFMADD231PS(t, bv, acc[i])
	}
}

// dotStore stores c[i*ldc] = alpha*acc[i] + beta*c[i*ldc], without
// reading c when beta is ±0.
func dotStore(name string, acc []reg.VecVirtual) {
	alpha := XMM()
	MOVSS(NewParamAddr("alpha", 48), alpha)
	for _, v := range acc {
		VMULSS(alpha, v.AsX(), v.AsX())
	}
	c := x86.Arg("c")
	ldc := x86.Arg("ldc")
	SHLQ(U8(2), ldc)
	betaBits := GP32()
	MOVL(NewParamAddr("beta", 52), betaBits)
	ANDL(U32(0x7fffffff), betaBits)
	JZ(LabelRef(name + "_beta0"))
	beta := XMM()
	MOVSS(NewParamAddr("beta", 52), beta)
	p := GP64()
	MOVQ(c, p)
	for i, v := range acc {
		if i > 0 {
			ADDQ(ldc, p)
		}
		VFMADD231SS(Mem{Base: p}, beta, v.AsX())
		VMOVSS(v.AsX(), Mem{Base: p})
	}
	JMP(LabelRef(name + "_done"))
	Label(name + "_beta0")
	for i, v := range acc {
		if i > 0 {
			ADDQ(ldc, c)
		}
		VMOVSS(v.AsX(), Mem{Base: c})
	}
}
