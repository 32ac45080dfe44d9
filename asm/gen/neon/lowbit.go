package main

import "fmt"

// Kernels of the products over low-bit weights (see
// kernels/internal/lowbit for their contract, the same as amd64's of
// asm/gen/lowbit):
//
// lowbitBF16<r>NEON, r = 1..8: for i < r, j < rows, c[i*ldc+j] =
// alpha*Σ_p x_i[p]·w_j[p] + beta*c[i*ldc+j], W's row j a row of groups of
// 32 bfloat16 weights (64 bytes, word d = w[d] | w[16+d]<<16). Rows of W
// go R at a time (lowbitRows), then one at a time; the groups in place
// first, then, when xt is not nil, one more whose x is read from xt (rows
// 32 floats apart). A group goes in four quarters, each a vector of four
// words shifted left by 16 (w[4q..4q+3]) and masked to their upper halves
// (w[16+4q..]). Each vector of weights is multiplied into one accumulator
// per (i, j) by FMLA; the four lanes a0..a3 of an accumulator are summed
// as (a0+a1)+(a2+a3) by two FADDPs, then multiplied by alpha (one
// rounding), and, when beta is not ±0, c*beta (one rounding) is added
// (one rounding).
//
// lowbitInt8<r>NEON, r = 1..8: for i < r, j < rows, c[i*ldc+j] =
// xs[i]·Σ_g s_jg·Σ_{p in g} x_i[p]·q_j[p] + beta*c[i*ldc+j], W's row j a
// row of groups of 32 int8 weights q with a float32 scale s (36 bytes)
// and x int16, whole groups; see lowbitInt8Block.
//
// Every element is computed the same way whatever its block. c is only
// written when beta is ±0; no memory outside the rows×(groups+1) blocks
// of W, the r rows of x (whole groups), xt and the r×rows region of c is
// touched.
//
// Registers: V0.. accumulators (i*R+j), then vectors of x and
// temporaries; R0 rows left, R1 groups, R2 the block's first row of W, R3
// ldw bytes, R4 x, R5 ldx bytes, R6 c, R7 ldc bytes, R8 the groups left,
// R9 R*ldw, R10 scratch, R11 xt (bf16) or xs (int8); the pointers to the
// rows of x and of W from lowbitPtr. Never R18 or R26-R30.
func lowbitNEON() *file {
	f := newFile("lowbit_arm64.s")
	for r := 1; r < len(lowbitRows); r++ {
		lowbitKernel(f, true, r)
	}
	for r := 1; r < len(lowbitInt8Rows); r++ {
		lowbitKernel(f, false, r)
	}
	return f
}

// lowbitRows[r] is R, the rows of W a kernel of r rows of x takes at once:
// r·R accumulators, 2r vectors of x and 4 temporaries fit the 32
// registers, and r+R pointers fit lowbitPtr.
var lowbitRows = [...]int{0, 8, 8, 6, 5, 3, 2, 2, 1}

// lowbitInt8Rows[r] is R for the Int8 kernels: r·R accumulators, the four
// vectors of a group's weights, four of x, a sum and the scale fit the 32
// registers.
var lowbitInt8Rows = [...]int{0, 8, 8, 6, 5, 4, 3, 3, 2}

// lowbitPtr are the general registers of the pointers to the rows of x
// (first) and of W in a block.
var lowbitPtr = [...]string{"R12", "R13", "R14", "R15", "R16", "R17", "R19", "R20", "R21", "R22", "R23", "R24", "R25"}

func lowbitKernel(f *file, bf bool, r int) {
	R := lowbitRows[r]
	typ, blockBytes := "Int8", 36
	if bf {
		typ, blockBytes = "BF16", 64
	} else {
		R = lowbitInt8Rows[r]
	}
	name := fmt.Sprintf("lowbit%s%dNEON", typ, r)
	if bf {
		f.text(name, 80, fmt.Sprintf("func %s(rows, groups int, w *byte, ldw int, x *float32, ldx int, xt *float32, c *float32, ldc int, alpha, beta float32)", name))
	} else {
		f.text(name, 76, fmt.Sprintf("func %s(rows, groups int, w *byte, ldw int, x *int16, ldx int, xs *float32, c *float32, ldc int, beta float32)", name))
	}
	f.op("MOVD rows+0(FP), R0")
	f.op("MOVD groups+8(FP), R1")
	f.op("MOVD w+16(FP), R2")
	f.op("MOVD ldw+24(FP), R3")
	f.op("MOVD x+32(FP), R4")
	f.op("MOVD ldx+40(FP), R5")
	if bf {
		f.op("LSL $2, R5")
		f.op("MOVD xt+48(FP), R11")
	} else {
		f.op("LSL $1, R5")
		f.op("MOVD xs+48(FP), R11")
	}
	f.op("MOVD c+56(FP), R6")
	f.op("MOVD ldc+64(FP), R7")
	f.op("LSL $2, R7")
	f.op("MOVD $%d, R9", R)
	f.op("MUL R3, R9")
	blocks := []int{R, 1}
	if R == 1 {
		blocks = blocks[1:]
	}
	for _, blk := range blocks {
		loop := fmt.Sprintf("rows%d", blk)
		next := "rows1"
		if blk == 1 {
			next = "done"
		}
		f.label(loop)
		f.op("CMP $%d, R0", blk)
		f.op("BLT %s", next)
		if bf {
			lowbitBlock(f, bf, r, blk, blockBytes, fmt.Sprintf("b%d", blk))
		} else {
			lowbitInt8Block(f, r, blk, fmt.Sprintf("b%d", blk))
		}
		if blk == 1 {
			f.op("ADD R3, R2")
		} else {
			f.op("ADD R9, R2")
		}
		f.op("ADD $%d, R6", 4*blk)
		f.op("SUB $%d, R0", blk)
		f.op("B %s", loop)
	}
	f.label("done")
	f.op("RET")
}

// lowbitBlock emits the r×R block of c at R6 from the R rows of W at R2.
func lowbitBlock(f *file, bf bool, r, R, blockBytes int, pfx string) {
	acc := func(i, j int) int { return i*R + j }
	xv := func(i, h int) int { return r*R + 2*i + h }
	t0 := r*R + 2*r
	t1, t2, t3 := t0+1, t0+2, t0+3 // t3: bf16's mask, int8's scale
	xp := func(i int) string { return lowbitPtr[i] }
	wp := func(j int) string { return lowbitPtr[r+j] }
	f.zero(0, r*R)
	if bf {
		f.op("MOVW $0xffff0000, R10")
		f.op("VDUP R10, V%d.S4", t3)
	}
	setX := func(base, ld string) {
		f.op("MOVD %s, %s", base, xp(0))
		for i := 1; i < r; i++ {
			f.op("ADD %s, %s, %s", ld, xp(i-1), xp(i))
		}
	}
	setX("R4", "R5")
	f.op("MOVD R2, %s", wp(0))
	for j := 1; j < R; j++ {
		f.op("ADD R3, %s, %s", wp(j-1), wp(j))
	}
	body := func() {
		for q := 0; q < 4; q++ {
			// The x of this quarter: bf16 x[4q..] and x[16+4q..]; int8
			// x[8q..] and x[8q+4..].
			off0, off1 := 16*q, 64+16*q
			if !bf {
				off0, off1 = 32*q, 32*q+16
			}
			for i := 0; i < r; i++ {
				f.op("FMOVQ %d(%s), F%d", off0, xp(i), xv(i, 0))
				f.op("FMOVQ %d(%s), F%d", off1, xp(i), xv(i, 1))
			}
			for j := 0; j < R; j++ {
				if bf {
					f.op("FMOVQ %d(%s), F%d", 16*q, wp(j), t0)
					f.op("VSHL $16, V%d.S4, V%d.S4", t0, t1)
					f.op("VAND V%d.B16, V%d.B16, V%d.B16", t3, t0, t0)
				} else {
					f.op("FMOVS 0(%s), F%d", wp(j), t3)
					f.op("FMOVD %d(%s), F%d", 4+8*q, wp(j), t0)
					f.w(sxtl8h(t0, t0))
					f.w(sxtl4s(t1, t0))
					f.w(sxtl24s(t0, t0))
					f.w(scvtf4s(t1, t1))
					f.w(scvtf4s(t0, t0))
					f.w(fmulElem(t1, t1, t3, 0))
					f.w(fmulElem(t0, t0, t3, 0))
				}
				for i := 0; i < r; i++ {
					f.op("VFMLA V%d.S4, V%d.S4, V%d.S4", t1, xv(i, 0), acc(i, j))
					f.op("VFMLA V%d.S4, V%d.S4, V%d.S4", t0, xv(i, 1), acc(i, j))
				}
			}
		}
	}
	f.op("MOVD R1, R8")
	f.label(pfx + "_g")
	f.op("CBZ R8, %s_tail", pfx)
	body()
	for i := 0; i < r; i++ {
		f.op("ADD $128, %s", xp(i))
	}
	for j := 0; j < R; j++ {
		f.op("ADD $%d, %s", blockBytes, wp(j))
	}
	f.op("SUB $1, R8")
	f.op("B %s_g", pfx)
	f.label(pfx + "_tail")
	f.op("CBZ R11, %s_reduce", pfx)
	f.op("MOVD $128, R10")
	setX("R11", "R10")
	body()
	f.label(pfx + "_reduce")
	for a := 0; a < r*R; a++ {
		f.w(faddp4s(a, a, a))
		f.w(faddp4s(a, a, a))
	}
	f.op("FMOVS alpha+72(FP), F%d", t0)
	for a := 0; a < r*R; a++ {
		f.op("FMULS F%d, F%d, F%d", t0, a, a)
	}
	f.op("FMOVS beta+76(FP), F%d", t1)
	f.op("FCMPS $(0.0), F%d", t1)
	f.op("BEQ %s_b0", pfx)
	for _, withBeta := range []bool{true, false} {
		if !withBeta {
			f.label(pfx + "_b0")
		}
		f.op("MOVD R6, R10")
		for i := 0; i < r; i++ {
			if i > 0 {
				f.op("ADD R7, R10")
			}
			for j := 0; j < R; j++ {
				a := acc(i, j)
				if withBeta {
					f.op("FMOVS %d(R10), F%d", 4*j, t2)
					f.op("FMULS F%d, F%d, F%d", t1, t2, t2)
					f.op("FADDS F%d, F%d, F%d", t2, a, a)
				}
				f.op("FMOVS F%d, %d(R10)", a, 4*j)
			}
		}
		if withBeta {
			f.op("B %s_stored", pfx)
		}
	}
	f.label(pfx + "_stored")
}

// lowbitInt8Block emits the r×R block of c at R6 from the R Int8 rows of W
// at R2 and the r int16 rows of x at R4 (R5 bytes apart), R11 pointing to
// xs: for each group, each row of W's 32 weights are sign-extended to
// halfwords (SXTL, SXTL2) and, for each row of x, multiplied by x's 32
// halfwords and summed into four exact int32 lanes (SMULL, then SMLAL and
// SMLAL2), converted (SCVTF) and multiplied by the group's scale into the
// accumulator (FMLA by element). At the end each accumulator's lanes are
// summed as (a0+a1)+(a2+a3), multiplied by xs[i], and beta*c added.
func lowbitInt8Block(f *file, r, R int, pfx string) {
	acc := func(i, j int) int { return i*R + j }
	h := r * R          // h..h+3: the weights as halfwords
	xv := h + 4         // xv..xv+3: a row of x's group
	sum, sc := h+8, h+9 // the integer sums; the scale
	xp := func(i int) string { return lowbitPtr[i] }
	wp := func(j int) string { return lowbitPtr[r+j] }
	f.zero(0, r*R)
	f.op("MOVD R4, %s", xp(0))
	for i := 1; i < r; i++ {
		f.op("ADD R5, %s, %s", xp(i-1), xp(i))
	}
	f.op("MOVD R2, %s", wp(0))
	for j := 1; j < R; j++ {
		f.op("ADD R3, %s, %s", wp(j-1), wp(j))
	}
	f.op("MOVD R1, R8")
	f.label(pfx + "_g")
	f.op("CBZ R8, %s_reduce", pfx)
	for j := 0; j < R; j++ {
		f.op("FMOVS 0(%s), F%d", wp(j), sc)
		f.op("FMOVQ 4(%s), F%d", wp(j), h+1)
		f.op("FMOVQ 20(%s), F%d", wp(j), h+3)
		f.w(sxtl8h(h, h+1))
		f.w(sxtl28h(h+1, h+1))
		f.w(sxtl8h(h+2, h+3))
		f.w(sxtl28h(h+3, h+3))
		for i := 0; i < r; i++ {
			for q := 0; q < 4; q++ {
				f.op("FMOVQ %d(%s), F%d", 16*q, xp(i), xv+q)
			}
			f.w(smull4s(sum, h, xv))
			f.w(smlal24s(sum, h, xv))
			for q := 1; q < 4; q++ {
				f.w(smlal4s(sum, h+q, xv+q))
				f.w(smlal24s(sum, h+q, xv+q))
			}
			f.w(scvtf4s(sum, sum))
			f.w(fmlaElem(acc(i, j), sum, sc, 0))
		}
	}
	for i := 0; i < r; i++ {
		f.op("ADD $64, %s", xp(i))
	}
	for j := 0; j < R; j++ {
		f.op("ADD $36, %s", wp(j))
	}
	f.op("SUB $1, R8")
	f.op("B %s_g", pfx)
	f.label(pfx + "_reduce")
	for a := 0; a < r*R; a++ {
		f.w(faddp4s(a, a, a))
		f.w(faddp4s(a, a, a))
	}
	for i := 0; i < r; i++ {
		f.op("FMOVS %d(R11), F%d", 4*i, sc)
		for j := 0; j < R; j++ {
			f.op("FMULS F%d, F%d, F%d", sc, acc(i, j), acc(i, j))
		}
	}
	f.op("FMOVS beta+72(FP), F%d", sum)
	f.op("FCMPS $(0.0), F%d", sum)
	f.op("BEQ %s_b0", pfx)
	for _, withBeta := range []bool{true, false} {
		if !withBeta {
			f.label(pfx + "_b0")
		}
		f.op("MOVD R6, R10")
		for i := 0; i < r; i++ {
			if i > 0 {
				f.op("ADD R7, R10")
			}
			for j := 0; j < R; j++ {
				a := acc(i, j)
				if withBeta {
					f.op("FMOVS %d(R10), F%d", 4*j, xv)
					f.op("FMULS F%d, F%d, F%d", sum, xv, xv)
					f.op("FADDS F%d, F%d, F%d", xv, a, a)
				}
				f.op("FMOVS F%d, %d(R10)", a, 4*j)
			}
		}
		if withBeta {
			f.op("B %s_stored", pfx)
		}
	}
	f.label(pfx + "_stored")
}
