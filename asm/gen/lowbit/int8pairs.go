package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/simdgpt/simdgpt/asm/gen/internal/x86"
)

// The AVX-512 Int8 kernels of r >= minR512 rows of x hold two rows of W
// in each ZMM register, row j's eight int32 lanes in the lower half and
// row j+1's in the upper one, so that every accumulator lane takes the
// operations of the AVX2 kernels' lane (int8Body) in the same order and
// every output is the AVX2 kernels' bit for bit, whatever the rows of x
// and of W a call takes together:
//
//   - a group's lane l of a row is the exact int32 sum of the products
//     2l, 2l+1, 16+2l and 17+2l (two VPMADDWD of the group's halves,
//     added), converted to float32 and multiplied by the row's scale
//     into the accumulator (one FMA), group after group;
//   - the eight lanes are then summed as x86.ISA.SumToLane0 sums a YMM
//     register: ((a0+a4)+(a2+a6)) + ((a1+a5)+(a3+a7)).
//
// x's halves of a group are broadcast to both halves of a register
// (VBROADCASTI64X4), and each pair of rows of W is loaded once per group
// for all r rows of x: 16 bytes of each row put side by side
// (VINSERTI128) and sign-extended to int16 (VPMOVSXBW), the two scales
// broadcast to their halves (the second by a masked broadcast). Per
// output and group that is one VPMADDWD, half a VPADDD, half a VCVTDQ2PS
// and half an FMA, where a ZMM register of one row takes one of each.

// int8PairsPer returns P, the pairs of rows of W a kernel of r rows of x
// takes at once: its r·P accumulators, the P pairs' two weight vectors
// and scales, x's two halves, two temporaries and the loads' XMM
// register fit the 32 ZMM registers; at most 4 (8 rows of W, whose 16
// bases and prefetch bases fit the general registers).
func int8PairsPer(r int) int {
	return min(4, (zmmCount-5)/(r+3))
}

// int8PairsKernel emits lowbitInt8<r>AVX512 (see int8Body for the
// contract and the package comment of kernels/internal/lowbit).
func int8PairsKernel(s *x86.ISA, r int) {
	name := fmt.Sprintf("lowbit%s%d%s", int8.name, r, s.Name)
	P := int8PairsPer(r)
	x86.Func(name, "lowbitInt8",
		fmt.Sprintf("%s sets c[i*ldc+j] = xs[i]*Σ_g scale_jg*Σ_{p in g} x_i[p]*q_j[p] + beta*c[i*ldc+j]", name),
		fmt.Sprintf("for i < %d, j < rows (rows >= 1) over Int8 groups of W and int16 rows of x (see kernels/internal/lowbit),", r),
		fmt.Sprintf("not reading c when beta is ±0, each c as lowbitInt8%dAVX2 computes it. Rows of W go %d at a time, then 2, then 1. Requires %s.", r, 2*P, s.Req))
	blocks := []int{2 * P, 2, 1}
	if P == 1 {
		blocks = blocks[1:]
	}
	rowBlocks(name, blocks, func(blk int, label string) { int8PairsBlock(s, r, blk, label) })
}

// int8PairsBlock computes the r×n block of c from n rows of W, in
// (n+1)/2 pairs (a last row alone is paired with itself).
func int8PairsBlock(s *x86.ISA, r, n int, name string) {
	P := (n + 1) / 2
	// The accumulators are copied from a register broadcast from a
	// general one: avo takes a register that is read before it is written
	// (VPXORD z, z, z) as live from the function's entry, and the blocks'
	// accumulators together do not fit.
	zero := ZMM()
	{
		bits := GP32()
		MOVL(U32(0), bits)
		VPBROADCASTD(bits, zero)
	}
	acc := make([][]reg.VecVirtual, P) // acc[p][i]: rows 2p, 2p+1 of W, row i of x
	for p := range acc {
		acc[p] = make([]reg.VecVirtual, r)
		for i := range acc[p] {
			acc[p][i] = ZMM()
			VMOVAPS(zero, acc[p][i])
		}
	}
	p0 := x86.Arg("w")
	ldw := x86.Arg("ldw")
	var ldw3 reg.GPVirtual
	if n > 2 {
		ldw3 = GP64()
		LEAQ(Mem{Base: ldw, Index: ldw, Scale: 2}, ldw3)
	}
	rows := x86.NewRows(p0, ldw, ldw3, n)
	wAt := func(j, disp int) Mem { return rows.At(min(j, n-1), disp) }
	// next: the same group of the block of rows ahead·n on, prefetched
	// while this block's is read (see block).
	ahead := aheadBlocks(s, int8, r)
	var next *x86.Rows
	if n > 1 {
		next = rows.NextBlock(ahead * n)
	}
	x := newXRows(r, 2)
	xAt := x.At
	// upper: the mask of the upper eight lanes, for the second row's
	// scale.
	upper := reg.K1
	{
		bits := GP32()
		MOVL(U32(0xff00), bits)
		KMOVW(bits, upper)
	}

	groupLoop(name, name+"_reduce", int8, rows, next, x, func() {
		prefetchRows(next, n, ahead)
		lo, hi, scale := make([]reg.VecVirtual, P), make([]reg.VecVirtual, P), make([]reg.VecVirtual, P)
		for p := 0; p < P; p++ {
			for h, dst := range []*reg.VecVirtual{&lo[p], &hi[p]} {
				disp := 4 + h*group/2
				b := ZMM()
				VBROADCASTI32X4(wAt(2*p, disp), b)
				VINSERTI32X4(U8(1), wAt(2*p+1, disp), b, b)
				*dst = ZMM()
				VPMOVSXBW(b.AsY(), *dst)
			}
			scale[p] = ZMM()
			VBROADCASTSS(wAt(2*p, 0), scale[p])
			VBROADCASTSS(wAt(2*p+1, 0), upper, scale[p])
		}
		for i := 0; i < r; i++ {
			xl, xh := ZMM(), ZMM()
			VBROADCASTI64X4(xAt(i, 0), xl)
			VBROADCASTI64X4(xAt(i, group), xh)
			for p := 0; p < P; p++ {
				t0, t1 := ZMM(), ZMM()
				VPMADDWD(xl, lo[p], t0)
				VPMADDWD(xh, hi[p], t1)
				VPADDD(t1, t0, t0)
				VCVTDQ2PS(t0, t0)
				VFMADD231PS(scale[p], t0, acc[p][i])
			}
		}
	})

	Label(name + "_reduce")
	int8PairsFinish(r, n, name, acc)
}

// int8PairsFinish sums each accumulator's halves' lanes (two pairs of
// rows at a time, one register of four rows' 128-bit quarters), scales
// row i of x's sums by xs[i] and stores c[i*ldc+j] for the block's n
// rows j (+ beta*c when beta is not ±0).
func int8PairsFinish(r, n int, name string, acc [][]reg.VecVirtual) {
	P := len(acc)
	// sums[i][q]: lanes 0, 4, 8 and 12 hold rows 4q to 4q+3 (those of
	// the block) of W times row i of x.
	sums := make([][]reg.VecVirtual, r)
	xs := x86.Arg("xs")
	for i := range sums {
		for q := 0; q < P; q += 2 {
			a, b := acc[q][i], acc[q][i]
			if q+1 < P {
				b = acc[q+1][i]
			}
			// [a0 a2 b0 b2] + [a1 a3 b1 b3] in 128-bit quarters: each
			// row's lanes l and l+4 added.
			t0, t1 := ZMM(), ZMM()
			VSHUFF32X4(U8(0x88), b, a, t0)
			VSHUFF32X4(U8(0xdd), b, a, t1)
			VADDPS(t1, t0, t0)
			t := ZMM()
			VPERMILPS(U8(0x4e), t0, t) // lanes 2, 3 onto 0, 1
			VADDPS(t, t0, t0)
			VPERMILPS(U8(0xb1), t0, t) // lane 1 onto 0
			VADDPS(t, t0, t0)
			VMULPS_BCST(Mem{Base: xs, Disp: 4 * i}, t0, t0)
			sums[i] = append(sums[i], t0)
		}
	}
	quarters := reg.K2
	{
		bits := GP32()
		MOVL(U32(0x1111), bits)
		KMOVW(bits, quarters)
	}
	for i := range sums {
		for _, v := range sums[i] {
			VCOMPRESSPS(v, quarters, v)
		}
	}
	storeRows(name, r, func() reg.Register {
		beta := XMM()
		VBROADCASTSS(x86.Addr(Param("beta")), beta)
		return beta
	}, func(i int, c reg.GPVirtual, beta reg.Register) {
		for q, v := range sums[i] {
			m := Mem{Base: c, Disp: 16 * q}
			x := v.AsX()
			switch min(4, n-4*q) {
			case 4:
				if beta != nil {
					VFMADD231PS(m, beta, x)
				}
				VMOVUPS(x, m)
			case 2:
				if beta != nil {
					t := XMM()
					VMOVSD(m, t)
					VFMADD231PS(t, beta, x)
				}
				VMOVSD(x, m)
			case 1:
				if beta != nil {
					VFMADD231SS(m, beta, x)
				}
				VMOVSS(x, m)
			default:
				panic("lowbit: a block of rows of W is not 1, 2 or a multiple of 4")
			}
		}
	})
}
