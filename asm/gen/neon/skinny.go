package main

import "fmt"

// Skinny kernels: Gemv and the products with few rows of op(A), which read
// the large operand once, in place (see kernels/internal/gemm/skinny.go
// for their contracts, the same as amd64's of asm/gen/skinny).
//
// skinnyDots<r>NEON, r = 1..4: for i < r, j < rows,
// c[i*ldc+j] = alpha*dot(x_i, w_j) + beta*c[i*ldc+j], with
// x_i = x[i*ldx:][:k] and w_j = w[j*ldw:][:k]. Rows of w go R at a time
// (skinnyDotsRows), then one at a time. Each pair (i, j) has one vector
// accumulator, fed along k four floats at a time by FMLA, the last k%4
// floats loaded into the low lanes of a zeroed vector (one more FMLA).
// The four lanes a0..a3 of an accumulator are then summed as
// (a0+a1)+(a2+a3) by two pairwise FADDPs, which for four accumulators of
// one row of x leave the four sums side by side, the layout of c: four
// columns of c are scaled and stored by one vector instruction. A single
// accumulator goes through the same two FADDPs (with itself), so a
// result does not depend on the block its row of w was in.
//
// skinnyAxpys<r>NEON, r = 1..8: for i < r, j < n,
// c[i*ldc+j] = alpha*Σ_p a[i*rsa+p*csa]·b[p*ldb+j] + beta*c[i*ldc+j].
// Columns go V vectors of four at a time (skinnyAxpysVecs), then one
// vector, then the last n%4 columns in the low lanes of one vector; the
// r×V block of c stays in registers while the k rows of b stream past,
// a(i, p) loaded into lane i%4 of one of the a registers and multiplied
// by element (FMLA Vacc, Vb, Va.S[i%4]). Every column is summed over p in
// order with FMLAs, whatever its block.
//
// In both, the sums are multiplied by alpha (FMUL, one rounding) and then,
// when beta is not ±0, c*beta is added with one rounding (FMLA), as the
// amd64 kernels do; when beta is ±0, c is only written. No memory outside
// the rows×k, r×k (or k×r), k×n and r×n regions given is read or written:
// the partial vectors are loaded and stored with scalar FMOVS and FMOVD
// and one lane moved through a general register.
//
// Registers: the vector registers are laid out per block (accumulators
// from V0, then x or b, then the w or a registers); R10 is the scratch of
// the partial loads and stores. Both shapes use R0-R17 and R19-R24,
// never R18 (platform), R26-R30.
func skinny() *file {
	f := newFile("skinny_arm64.s")
	for r := 1; r < len(skinnyDotsRows); r++ {
		skinnyDots(f, r)
	}
	for r := 1; r < len(skinnyAxpysVecs); r++ {
		skinnyAxpys(f, r)
	}
	return f
}

// skinnyDotsRows[r] is R, the rows of w a dots kernel of r rows of x takes
// at once: r·R accumulators and r vectors of x leave at least 4 of the 32
// registers for the rows of w, and R is a multiple of 2 (the reduction
// takes the sums four or two at a time) no larger than 8 (a general
// register per row of w).
var skinnyDotsRows = [...]int{0, 8, 8, 8, 6}

// skinnyAxpysVecs[r] is V, the vectors of four columns an axpys kernel of r
// rows takes at once: r·V accumulators, V vectors of b and ⌈r/4⌉
// registers of a fit the 32 vector registers.
var skinnyAxpysVecs = [...]int{0, 8, 8, 7, 6, 5, 4, 3, 3}

// dotsWPtr are the pointers to the rows of w in a dots block, and dotsXPtr
// those to the rows of x.
var (
	dotsWPtr = [...]string{"R16", "R17", "R19", "R20", "R21", "R22", "R23", "R24"}
	dotsXPtr = [...]string{"R12", "R13", "R14", "R15"}
)

// axpysAPtr are the pointers to a(i, p) in an axpys block.
var axpysAPtr = [...]string{"R13", "R14", "R15", "R16", "R17", "R19", "R20", "R21"}

// loadN loads the n (1..4) floats at off(p) into the low lanes of V(v),
// zeroing the others (FMOVS and FMOVD clear the rest of the register).
func (f *file) loadN(v int, p string, off, n int) {
	switch n {
	case 1:
		f.op("FMOVS %d(%s), F%d", off, p, v)
	case 2:
		f.op("FMOVD %d(%s), F%d", off, p, v)
	case 3:
		f.op("FMOVD %d(%s), F%d", off, p, v)
		f.op("MOVWU %d(%s), R10", off+8, p)
		f.op("VMOV R10, V%d.S[2]", v)
	case 4:
		f.op("FMOVQ %d(%s), F%d", off, p, v)
	default:
		panic(fmt.Sprintf("neon: loadN of %d floats", n))
	}
}

// storeN stores the low n (1..4) lanes of V(v) to off(p).
func (f *file) storeN(v int, p string, off, n int) {
	switch n {
	case 1:
		f.op("FMOVS F%d, %d(%s)", v, off, p)
	case 2:
		f.op("FMOVD F%d, %d(%s)", v, off, p)
	case 3:
		f.op("FMOVD F%d, %d(%s)", v, off, p)
		f.op("VMOV V%d.S[2], R10", v)
		f.op("MOVW R10, %d(%s)", off+8, p)
	case 4:
		f.op("FMOVQ F%d, %d(%s)", v, off, p)
	default:
		panic(fmt.Sprintf("neon: storeN of %d floats", n))
	}
}

// remBranch emits the dispatch on the count cnt (1..3) to the code of
// emit(3), emit(2) and emit(1), each followed by a branch to done.
func (f *file) remBranch(pfx, cnt, done string, emit func(rem int)) {
	f.op("CMP $2, %s", cnt)
	f.op("BLT %s_t1", pfx)
	f.op("BEQ %s_t2", pfx)
	emit(3)
	f.op("B %s", done)
	f.label(pfx + "_t2")
	emit(2)
	f.op("B %s", done)
	f.label(pfx + "_t1")
	emit(1)
}

// skinnyDots emits skinnyDots<r>NEON. R0 counts the rows of w left, R2
// points to the next one and R6 to its column of c; R9 = R*ldw bytes.
func skinnyDots(f *file, r int) {
	R := skinnyDotsRows[r]
	name := fmt.Sprintf("skinnyDots%dNEON", r)
	f.text(name, 72, fmt.Sprintf("func %s(rows, k int, w *float32, ldw int, x *float32, ldx int, c *float32, ldc int, alpha, beta float32)", name))
	f.op("MOVD rows+0(FP), R0")
	f.op("MOVD k+8(FP), R1")
	f.op("MOVD w+16(FP), R2")
	f.op("MOVD ldw+24(FP), R3")
	f.op("LSL $2, R3")
	f.op("MOVD x+32(FP), R4")
	if r > 1 {
		f.op("MOVD ldx+40(FP), R5")
		f.op("LSL $2, R5")
	}
	f.op("MOVD c+48(FP), R6")
	if r > 1 {
		f.op("MOVD ldc+56(FP), R7")
		f.op("LSL $2, R7")
	}
	f.op("MOVD $%d, R9", R)
	f.op("MUL R3, R9")
	for _, blk := range []int{R, 1} {
		loop := fmt.Sprintf("rows%d", blk)
		next := "rows1"
		if blk == 1 {
			next = "done"
		}
		f.label(loop)
		f.op("CMP $%d, R0", blk)
		f.op("BLT %s", next)
		dotsBlock(f, r, blk, fmt.Sprintf("b%d", blk))
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

// dotsBlock emits the r×R block of c at R6 from the R rows of w at R2:
// acc(i, j) = V(i*R+j), x_i = V(r*R+i), the rows of w rotate through the
// registers after them.
func dotsBlock(f *file, r, R int, pfx string) {
	acc := func(i, j int) int { return i*R + j }
	xv := func(i int) int { return r*R + i }
	nw := min(R, 32-r*R-r)
	wv := func(j int) int { return r*R + r + j%nw }
	f.zero(0, r*R)
	f.op("MOVD R4, %s", dotsXPtr[0])
	for i := 1; i < r; i++ {
		f.op("ADD R5, %s, %s", dotsXPtr[i-1], dotsXPtr[i])
	}
	f.op("MOVD R2, %s", dotsWPtr[0])
	for j := 1; j < R; j++ {
		f.op("ADD R3, %s, %s", dotsWPtr[j-1], dotsWPtr[j])
	}
	// step emits one k step: four floats of each row (rem = 0, pointers
	// advanced) or the last rem.
	step := func(rem int) {
		load := func(v int, p string) {
			if rem == 0 {
				f.op("VLD1.P 16(%s), %s", p, vlist(v, 1))
			} else {
				f.loadN(v, p, 0, rem)
			}
		}
		for i := 0; i < r; i++ {
			load(xv(i), dotsXPtr[i])
		}
		for j := 0; j < R; j++ {
			load(wv(j), dotsWPtr[j])
			for i := 0; i < r; i++ {
				f.op("VFMLA V%d.S4, V%d.S4, V%d.S4", wv(j), xv(i), acc(i, j))
			}
		}
	}
	// k steps of four while R8 >= 4; after the loop R8 = k%4 - 4.
	f.op("MOVD R1, R8")
	f.op("SUBS $4, R8")
	f.op("BLT %s_rem", pfx)
	f.label(pfx + "_k")
	step(0)
	f.op("SUBS $4, R8")
	f.op("BGE %s_k", pfx)
	f.label(pfx + "_rem")
	f.op("ADDS $4, R8")
	f.op("BEQ %s_reduce", pfx)
	f.remBranch(pfx, "R8", pfx+"_reduce", step)
	f.label(pfx + "_reduce")

	// Reduce the accumulators of each row i of x in groups of up to four
	// columns j; the sums of a group go to the lanes of its first
	// accumulator, in the order of c.
	type group struct{ i, j0, n int }
	var groups []group
	for i := 0; i < r; i++ {
		for j0 := 0; j0 < R; j0 += 4 {
			n := min(4, R-j0)
			a := acc(i, j0)
			switch n {
			case 4:
				f.w(faddp4s(a, a, a+1))
				f.w(faddp4s(a+2, a+2, a+3))
				f.w(faddp4s(a, a, a+2))
			case 2:
				f.w(faddp4s(a, a, a+1))
				f.w(faddp4s(a, a, a))
			case 1:
				f.w(faddp4s(a, a, a))
				f.w(faddp4s(a, a, a))
			default:
				panic("neon: dots block of an odd number of rows")
			}
			groups = append(groups, group{i, j0, n})
		}
	}
	alpha, beta, ct := r*R, r*R+1, r*R+2
	f.op("FMOVS alpha+64(FP), F%d", alpha)
	for _, g := range groups {
		f.w(fmulElem(acc(g.i, g.j0), acc(g.i, g.j0), alpha, 0))
	}
	f.op("FMOVS beta+68(FP), F%d", beta)
	f.op("FCMPS $(0.0), F%d", beta)
	f.op("BEQ %s_b0", pfx)
	for _, withBeta := range []bool{true, false} {
		if !withBeta {
			f.label(pfx + "_b0")
		}
		f.op("MOVD R6, R11")
		for gi, g := range groups {
			if gi > 0 && g.i != groups[gi-1].i {
				f.op("ADD R7, R11")
			}
			a := acc(g.i, g.j0)
			if withBeta {
				f.loadN(ct, "R11", 4*g.j0, g.n)
				f.w(fmlaElem(a, ct, beta, 0))
			}
			f.storeN(a, "R11", 4*g.j0, g.n)
		}
		if withBeta {
			f.op("B %s_stored", pfx)
		}
	}
	f.label(pfx + "_stored")
}

// skinnyAxpys emits skinnyAxpys<r>NEON. R1 counts the columns left, R5
// points to the next one in b and R7 in c.
func skinnyAxpys(f *file, r int) {
	V := skinnyAxpysVecs[r]
	name := fmt.Sprintf("skinnyAxpys%dNEON", r)
	f.text(name, 80, fmt.Sprintf("func %s(k, n int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)", name))
	f.op("MOVD k+0(FP), R0")
	f.op("MOVD n+8(FP), R1")
	f.op("MOVD a+16(FP), R2")
	if r > 1 {
		f.op("MOVD rsa+24(FP), R3")
		f.op("LSL $2, R3")
	}
	f.op("MOVD csa+32(FP), R4")
	f.op("LSL $2, R4")
	f.op("MOVD b+40(FP), R5")
	f.op("MOVD ldb+48(FP), R6")
	f.op("LSL $2, R6")
	f.op("MOVD c+56(FP), R7")
	if r > 1 {
		f.op("MOVD ldc+64(FP), R8")
		f.op("LSL $2, R8")
	}
	blocks := []int{V, 1}
	if V == 1 {
		blocks = blocks[1:]
	}
	for _, blk := range blocks {
		loop := fmt.Sprintf("cols%d", blk)
		next := "cols1"
		if blk == 1 {
			next = "tail"
		}
		f.label(loop)
		f.op("CMP $%d, R1", 4*blk)
		f.op("BLT %s", next)
		axpysBlock(f, r, blk, 0, fmt.Sprintf("b%d", blk))
		f.op("ADD $%d, R5", 16*blk)
		f.op("ADD $%d, R7", 16*blk)
		f.op("SUB $%d, R1", 4*blk)
		f.op("B %s", loop)
	}
	f.label("tail")
	f.op("CBZ R1, done")
	f.remBranch("tail", "R1", "done", func(rem int) {
		axpysBlock(f, r, 1, rem, fmt.Sprintf("p%d", rem))
	})
	f.label("done")
	f.op("RET")
}

// axpysBlock emits the r×V vectors of c at R7 (the low rem lanes of one
// vector when rem > 0, V = 1) from the k rows of b at R5: acc(i, u) =
// V(i*V+u), b_u = V(r*V+u), a(i, p) in lane i%4 of V(r*V+V+i/4).
func axpysBlock(f *file, r, V, rem int, pfx string) {
	acc := func(i, u int) int { return i*V + u }
	bv := func(u int) int { return r*V + u }
	av := func(i int) int { return r*V + V + i/4 }
	if av(r-1) > 31 {
		panic(fmt.Sprintf("neon: axpys block of %d×%d needs V%d", r, V, av(r-1)))
	}
	f.zero(0, r*V)
	f.op("MOVD R2, %s", axpysAPtr[0])
	for i := 1; i < r; i++ {
		f.op("ADD R3, %s, %s", axpysAPtr[i-1], axpysAPtr[i])
	}
	f.op("MOVD R5, R11")
	f.op("MOVD R0, R9")
	f.label(pfx + "_k")
	for i := 0; i < r; i++ {
		f.op("VLD1.P (%s)(R4), V%d.S[%d]", axpysAPtr[i], av(i), i%4)
	}
	switch {
	case rem > 0:
		f.loadN(bv(0), "R11", 0, rem)
		f.op("ADD R6, R11")
	case V <= 4:
		f.op("VLD1.P (R11)(R6), %s", vlist(bv(0), V))
	default:
		f.op("VLD1 (R11), %s", vlist(bv(0), 4))
		f.op("ADD $64, R11, R10")
		f.op("VLD1 (R10), %s", vlist(bv(4), V-4))
		f.op("ADD R6, R11")
	}
	for i := 0; i < r; i++ {
		for u := 0; u < V; u++ {
			f.w(fmlaElem(acc(i, u), bv(u), av(i), i%4))
		}
	}
	f.op("SUBS $1, R9")
	f.op("BNE %s_k", pfx)

	// c = alpha*acc (+ beta*c when beta is not ±0); the a and b registers
	// are free: alpha and beta go to the first a register, c to b's.
	s := av(0)
	f.op("FMOVS alpha+72(FP), F%d", s)
	for i := 0; i < r; i++ {
		for u := 0; u < V; u++ {
			f.w(fmulElem(acc(i, u), acc(i, u), s, 0))
		}
	}
	f.op("FMOVS beta+76(FP), F%d", s)
	f.op("FCMPS $(0.0), F%d", s)
	f.op("BEQ %s_b0", pfx)
	n := 4
	if rem > 0 {
		n = rem
	}
	for _, withBeta := range []bool{true, false} {
		if !withBeta {
			f.label(pfx + "_b0")
		}
		f.op("MOVD R7, R12")
		for i := 0; i < r; i++ {
			if i > 0 {
				f.op("ADD R8, R12")
			}
			for u := 0; u < V; u++ {
				if withBeta {
					f.loadN(bv(u), "R12", 16*u, n)
					f.w(fmlaElem(acc(i, u), bv(u), s, 0))
				}
				f.storeN(acc(i, u), "R12", 16*u, n)
			}
		}
		if withBeta {
			f.op("B %s_stored", pfx)
		}
	}
	f.label(pfx + "_stored")
}
