// Command skinny generates the AVX2+FMA and AVX-512 skinny kernels of
// package kernels/amd64 into skinny_amd64.s: the kernels of Gemv and of
// the products with few rows of op(A), which read the large operand once,
// in place (see kernels/internal/gemm/skinny.go for their contracts).
//
// dots<r>: for i < r, j < rows, c[i*ldc+j] = alpha*dot(x_i, w_j) +
// beta*c[i*ldc+j], with x_i = x[i*ldx:][:k] and w_j = w[j*ldw:][:k]. Rows of
// w go R at a time (R from the register budget), then one at a time; each
// pair (i, j) has one vector accumulator, fed along k a vector at a time
// with a masked last step, and reduced across its lanes at the end, so a
// result does not depend on the block its row was in.
//
// axpys<r>: for i < r, j < n, c[i*ldc+j] = alpha*Σ_p a[i*rsa+p*csa]·b[p*ldb+j]
// + beta*c[i*ldc+j]. Columns go V vectors at a time (for one row then
// V/2, V/4, ...), then one vector, then one masked vector; the r×V block
// of C stays in registers while the k rows of b stream past, each a(i, p)
// broadcast. Every column is summed over p in order with FMAs, whatever
// its block.
//
// stream<r>: the result of axpys<r>, bit for bit, with b read row by row:
// the sums of the r×n block of C accumulate in the scratch acc (r rows of
// n, cleared first) while b's rows stream past G at a time (then one at a
// time), each pass reading G whole rows of n elements sequentially; a last
// pass writes c = alpha*acc (+ beta*c). Every column is summed over p in
// order with FMAs from +0, as in axpys, so the two kernels agree exactly
// and the driver may pick either for any block of columns.
//
// Both read c only when beta is not ±0, and never touch memory outside
// the rows×k, k×n and r×n regions given.
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/simdgpt/simdgpt/asm/gen/internal/x86"
)

// maxR is the largest number of rows of the small operand a kernel takes.
const maxR = 8

// dotsRows returns R, the rows of w a dots kernel of r rows of x takes at
// once: r·R accumulators, r vectors of x, a vector of w and a mask fit the
// registers (16 YMM, 32 ZMM) and avo's register allocator.
func dotsRows(s *x86.ISA, r int) int {
	if s.Is512() {
		return map[int]int{1: 8, 2: 8, 3: 8, 4: 4, 5: 4, 6: 3, 7: 3, 8: 2}[r]
	}
	return map[int]int{1: 8, 2: 6, 3: 3, 4: 2, 5: 1, 6: 1, 7: 1, 8: 1}[r]
}

// dotsMax is the largest r of the dots kernels (x rows addressed from one
// pointer per four rows: 0, 1, 2, 3 times ldx).
const dotsMax = 8

// dotsWFirst is the largest r whose dots kernels hold the r vectors of x
// and read the R rows of w one vector at a time; from r = dotsWFirst+1 on
// they hold the R vectors of w and read x's rows a vector at a time (R·r
// accumulators, R vectors of w and one of x fit the registers, and each
// load of x feeds R FMAs, each of w r).
const dotsWFirst = 4

// axpysVecs returns V, the vectors of columns an axpys kernel of r rows
// takes at once: r·V accumulators, V vectors of b and a broadcast fit the
// registers, general-purpose ones included, as avo's allocator assigns
// them.
func axpysVecs(s *x86.ISA, r int) int {
	if s.Is512() {
		return []int{0, 8, 8, 6, 4, 3, 2, 2, 3}[r]
	}
	return []int{0, 8, 4, 3, 2, 2, 2, 1, 1}[r]
}

var masks *x86.Masks

func main() {
	ConstraintExpr("amd64,!purego")
	masks = x86.NewMasks("skinnyMaskAVX2", "skinnyMaskAVX512", x86.MaskForm{})
	for _, s := range x86.Both {
		for r := 1; r <= dotsMax; r++ {
			dots(s, r)
		}
		for r := 1; r <= maxR; r++ {
			axpys(s, r)
		}
		for r := 1; r <= streamMax; r++ {
			stream(s, r)
		}
	}
	x86.Finish()
}

// betaZero jumps to label when the parameter beta is ±0.
func betaZero(label string) {
	bits := GP32()
	MOVL(x86.Addr(Param("beta")), bits)
	ANDL(U32(0x7fffffff), bits)
	JZ(LabelRef(label))
}

func dots(s *x86.ISA, r int) {
	name := fmt.Sprintf("skinnyDots%d%s", r, s.Name)
	x86.Func(name, "skinnyDots",
		fmt.Sprintf("%s sets c[i*ldc+j] = alpha*dot(x[i*ldx:][:k], w[j*ldw:][:k]) + beta*c[i*ldc+j]", name),
		fmt.Sprintf("for i < %d, j < rows (rows, k >= 1), not reading c when beta is ±0.", r),
		fmt.Sprintf("Rows of w go %d at a time, then one at a time. Requires %s.", dotsRows(s, r), s.Req))
	wrow := x86.Arg("w")
	ldw := x86.Arg("ldw")
	SHLQ(U8(2), ldw)
	cp := x86.Arg("c")
	rows := x86.Addr(Param("rows"))
	R := dotsRows(s, r)
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
		dotsBlock(s, r, blk, r > dotsWFirst && blk == R, fmt.Sprintf("%s_b%d", name, blk), wrow, ldw, cp)
		// Next block of rows.
		for q := 0; q < blk; q++ {
			ADDQ(ldw, wrow)
		}
		ADDQ(U32(4*blk), cp)
		SUBQ(U32(blk), rows)
		JMP(LabelRef(loop))
	}
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// dotsAhead is how many blocks of rows of w ahead of the block it reads a
// dots kernel of more than dotsWFirst rows of x prefetches (PREFETCHT0,
// the same cache line of each row of the next block): such a kernel
// computes long enough on each line of w that the hardware's prefetchers,
// which follow the few rows it reads at once, fall behind memory's
// latency. One block, not more: each prefetched line lands in L1 beside
// the r rows of x the kernel keeps there, and farther ahead it evicts them
// (measured in PERF.md, "Sampling and many samples at once").
const dotsAhead = 1

// dotsBlock computes the r×R block of c at cp from R rows of w at wrow,
// prefetching (pf) the rows dotsAhead blocks on.
func dotsBlock(s *x86.ISA, r, R int, pf bool, name string, wrow, ldw, cp reg.GPVirtual) {
	acc := make([][]reg.VecVirtual, R) // acc[j][i]: row j of w, row i of x
	for j := range acc {
		acc[j] = s.Zeros(r)
	}
	// Row j of w at wAt(j) + the k offset: rows 0..3 from p0, 4..7 from p4.
	p0 := GP64()
	MOVQ(wrow, p0)
	var p4, ldw3 reg.GPVirtual
	if R > 2 {
		ldw3 = GP64()
		LEAQ(Mem{Base: ldw, Index: ldw, Scale: 2}, ldw3)
	}
	if R > 4 {
		p4 = GP64()
		LEAQ(Mem{Base: p0, Index: ldw, Scale: 4}, p4)
	}
	wAt := func(j int) Mem {
		if j >= 4 {
			return x86.RowAt(p4, ldw, ldw3, j-4, 0)
		}
		return x86.RowAt(p0, ldw, ldw3, j, 0)
	}
	var pfp reg.GPVirtual
	if pf {
		if R > 4 {
			panic("dots: prefetching blocks of more than 4 rows")
		}
		pfp = GP64()
		IMUL3Q(U32(dotsAhead*R), ldw, pfp)
		ADDQ(p0, pfp)
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
	xAt := func(i int) Mem {
		if i >= 4 {
			return x86.RowAt(xp4, ldx, ldx3, i-4, 0)
		}
		return x86.RowAt(xp, ldx, ldx3, i, 0)
	}
	advance := func(bytes int) {
		for _, p := range []reg.GPVirtual{p0, p4, xp, xp4, pfp} {
			if p != nil {
				ADDQ(U32(bytes), p)
			}
		}
	}
	kc := x86.Arg("k")
	// step emits one vector of k, disp bytes on from the pointers.
	step := func(t *x86.Tail, disp int) {
		at := func(m Mem) Mem { m.Disp += disp; return m }
		if pfp != nil {
			for j := 0; j < R; j++ {
				PREFETCHT0(at(x86.RowAt(pfp, ldw, ldw3, j, 0)))
			}
		}
		if r > dotsWFirst {
			wv := make([]reg.VecVirtual, R)
			for j := range wv {
				wv[j] = s.Load(at(wAt(j)), t)
			}
			for i := 0; i < r; i++ {
				xv := s.Load(at(xAt(i)), t)
				for j := 0; j < R; j++ {
					VFMADD231PS(wv[j], xv, acc[j][i])
				}
			}
			return
		}
		xv := make([]reg.VecVirtual, r)
		for i := range xv {
			xv[i] = s.Load(at(xAt(i)), t)
		}
		for j := 0; j < R; j++ {
			if r == 1 && t == nil {
				VFMADD231PS(at(wAt(j)), xv[0], acc[j][0])
				continue
			}
			wv := s.Load(at(wAt(j)), t)
			for i := 0; i < r; i++ {
				VFMADD231PS(wv, xv[i], acc[j][i])
			}
		}
	}
	if r == 1 && !s.Is512() {
		// Two vectors of k an iteration: a whole cache line of each row
		// of w, as one ZMM step reads. Each accumulator takes its FMAs in
		// the same order as one vector an iteration, so the sums are the
		// same.
		Label(name + "_k2")
		CMPQ(kc, U32(2*s.Lanes))
		JB(LabelRef(name + "_k"))
		step(nil, 0)
		step(nil, s.Bytes())
		advance(2 * s.Bytes())
		SUBQ(U32(2*s.Lanes), kc)
		JMP(LabelRef(name + "_k2"))
	}
	Label(name + "_k")
	CMPQ(kc, U32(s.Lanes))
	JB(LabelRef(name + "_tail"))
	step(nil, 0)
	advance(s.Bytes())
	SUBQ(U32(s.Lanes), kc)
	JMP(LabelRef(name + "_k"))
	Label(name + "_tail")
	TESTQ(kc, kc)
	JZ(LabelRef(name + "_reduce"))
	step(masks.Tail(s, kc), 0)
	Label(name + "_reduce")

	// Reduce each accumulator into its lane 0, scale by alpha, and store
	// c[i*ldc+j] (+ beta*c when beta is not ±0).
	var res []reg.VecVirtual
	for j := 0; j < R; j++ {
		for i := 0; i < r; i++ {
			res = append(res, acc[j][i])
		}
	}
	if s.Is512() {
		// In ZMM operations only: the XMM forms of registers 16 to 31
		// would need AVX-512VL.
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
	cAt := func(row reg.GPVirtual, j int) Mem { return Mem{Base: row, Disp: 4 * j} }
	store := func(withBeta bool) {
		var beta reg.VecVirtual
		if withBeta {
			beta = XMM()
			VMOVSS(x86.Addr(Param("beta")), beta)
		}
		row := GP64()
		MOVQ(cp, row)
		for i := 0; i < r; i++ {
			if i > 0 {
				ADDQ(ldc, row)
			}
			for j := 0; j < R; j++ {
				v := acc[j][i].AsX()
				if withBeta {
					VFMADD231SS(cAt(row, j), beta, v)
				}
				VMOVSS(v, cAt(row, j))
			}
		}
	}
	betaZero(name + "_beta0")
	store(true)
	JMP(LabelRef(name + "_stored"))
	Label(name + "_beta0")
	store(false)
	Label(name + "_stored")
}

func axpys(s *x86.ISA, r int) {
	name := fmt.Sprintf("skinnyAxpys%d%s", r, s.Name)
	V := axpysVecs(s, r)
	x86.Func(name, "skinnyAxpys",
		fmt.Sprintf("%s sets c[i*ldc+j] = alpha*Σ_p a[i*rsa+p*csa]*b[p*ldb+j] + beta*c[i*ldc+j]", name),
		fmt.Sprintf("for i < %d, j < n, p < k (k, n >= 1), not reading c when beta is ±0.", r),
		fmt.Sprintf("Columns go %v vectors at a time, then a masked one. Requires %s.", axpysBlocks(r, V), s.Req))
	// The column blocks' pointers: in registers, or, for the most rows
	// (whose blocks need every general register), in the arguments.
	var b0, c0 Op = x86.Addr(Param("b")), x86.Addr(Param("c"))
	if r < maxR {
		b0, c0 = x86.Arg("b"), x86.Arg("c")
	}
	n := x86.Addr(Param("n"))
	blocks := axpysBlocks(r, V)
	for bi, blk := range blocks {
		loop := fmt.Sprintf("%s_cols%d", name, blk)
		next := name + "_tail"
		if bi+1 < len(blocks) {
			next = fmt.Sprintf("%s_cols%d", name, blocks[bi+1])
		}
		Label(loop)
		CMPQ(n, U32(blk*s.Lanes))
		JB(LabelRef(next))
		axpysBlock(s, r, blk, nil, fmt.Sprintf("%s_b%d", name, blk), b0, c0)
		ADDQ(U32(blk*s.Bytes()), b0)
		ADDQ(U32(blk*s.Bytes()), c0)
		SUBQ(U32(blk*s.Lanes), n)
		JMP(LabelRef(loop))
	}
	Label(name + "_tail")
	rem := GP64()
	MOVQ(n, rem)
	TESTQ(rem, rem)
	JZ(LabelRef(name + "_done"))
	axpysBlock(s, r, 1, masks.Tail(s, rem), name+"_bt", b0, c0)
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// axpysBlocks returns the widths, in vectors, of the column blocks of an
// axpys kernel of r rows: V, then for one row V/2, V/4, ... (the columns
// left after the wide blocks, 64 of a decoder head's 64-float rows on
// AVX-512, still go several vectors, independent FMA chains down the k
// rows, at a time; for more rows avo's register allocator fails on the
// extra blocks), and 1.
func axpysBlocks(r, V int) []int {
	blocks := []int{V}
	for blk := V / 2; blk >= 1 && r == 1; blk /= 2 {
		blocks = append(blocks, blk)
	}
	if blocks[len(blocks)-1] != 1 {
		blocks = append(blocks, 1)
	}
	return blocks
}

// vecReg is a vector register, virtual or physical.
type vecReg interface {
	reg.Register
	reg.Vec
}

// axpysAhead is how many rows of b ahead the axpys kernel of the most
// rows prefetches, into L2 (PREFETCHT1): far enough to cover memory's
// latency over the few lines of each row it reads, and not into L1, where
// that many rows' lines would crowd out the column block's (measured in
// PERF.md, "Sampling and many samples at once").
const axpysAhead = 64

// zmm are the vector registers by number, for kernels that place their
// own.
var zmm = []reg.VecPhysical{
	reg.Z0, reg.Z1, reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7,
	reg.Z8, reg.Z9, reg.Z10, reg.Z11, reg.Z12, reg.Z13, reg.Z14, reg.Z15,
	reg.Z16, reg.Z17, reg.Z18, reg.Z19, reg.Z20, reg.Z21, reg.Z22, reg.Z23,
	reg.Z24, reg.Z25, reg.Z26, reg.Z27, reg.Z28, reg.Z29, reg.Z30, reg.Z31,
}

// axpysBlock computes the r×V vectors of c at c0 (the lanes of t when t is
// not nil, V = 1) from the k rows of b at b0.
func axpysBlock(s *x86.ISA, r, V int, t *x86.Tail, name string, b0, c0 Op) {
	// phys: every vector register of the kernel placed by hand (the r·V
	// accumulators from Z0 on, then the V vectors of b, the broadcast,
	// and zero, alpha and beta in Z29 to Z31), for the kernel of the most
	// rows, where avo's allocator fails.
	phys := s.Is512() && r == maxR
	acc := make([][]vecReg, r)
	var zero vecReg
	if phys {
		zero = zmm[29]
		VPXORD(zero, zero, zero)
	}
	for i := range acc {
		acc[i] = make([]vecReg, V)
		if phys {
			for u := range acc[i] {
				acc[i][u] = zmm[i*V+u]
				VMOVAPS(zero, acc[i][u])
			}
			continue
		}
		for u, v := range s.Zeros(V) {
			acc[i][u] = v
		}
	}
	ap := x86.Arg("a")
	rsa := x86.Arg("rsa")
	SHLQ(U8(2), rsa)
	csa := x86.Arg("csa")
	SHLQ(U8(2), csa)
	var rsa3, ap4 reg.GPVirtual
	if r > 3 {
		rsa3 = GP64()
		LEAQ(Mem{Base: rsa, Index: rsa, Scale: 2}, rsa3)
	}
	if r > 5 {
		ap4 = GP64()
		LEAQ(Mem{Base: ap, Index: rsa, Scale: 4}, ap4)
	}
	aAt := func(i int) Mem {
		switch i {
		case 0:
			return Mem{Base: ap}
		case 1:
			return Mem{Base: ap, Index: rsa, Scale: 1}
		case 2:
			return Mem{Base: ap, Index: rsa, Scale: 2}
		case 3:
			return Mem{Base: ap, Index: rsa3, Scale: 1}
		case 4:
			return Mem{Base: ap, Index: rsa, Scale: 4}
		case 5:
			if ap4 == nil {
				panic("unreachable")
			}
			return Mem{Base: ap4, Index: rsa, Scale: 1}
		case 6:
			return Mem{Base: ap4, Index: rsa, Scale: 2}
		}
		return Mem{Base: ap4, Index: rsa3, Scale: 1}
	}
	bp := GP64()
	MOVQ(b0, bp)
	ldb := x86.Arg("ldb")
	SHLQ(U8(2), ldb)
	var pf reg.GPVirtual
	if phys && t == nil {
		pf = GP64()
		IMUL3Q(U32(axpysAhead), ldb, pf)
		ADDQ(bp, pf)
	}
	kc := x86.Arg("k")
	Label(name + "_k")
	if pf != nil {
		// The same lines of b axpysAhead rows on: this kernel computes
		// long enough on each row's few lines that the hardware's
		// prefetchers, following the column block down b, fall behind.
		for u := 0; u < V; u++ {
			PREFETCHT1(s.At(pf, u))
		}
		ADDQ(ldb, pf)
	}
	if r == 1 && t == nil {
		av := s.Vec()
		VBROADCASTSS(aAt(0), av)
		for u := 0; u < V; u++ {
			VFMADD231PS(s.At(bp, u), av, acc[0][u])
		}
	} else {
		bv := make([]vecReg, V)
		for u := range bv {
			if phys {
				bv[u] = zmm[r*V+u]
				if t == nil {
					VMOVUPS(s.At(bp, u), bv[u])
				} else {
					VMOVUPS_Z(s.At(bp, u), t.K, bv[u])
				}
				continue
			}
			bv[u] = s.Load(s.At(bp, u), t)
		}
		for i := 0; i < r; i++ {
			var av vecReg = s.Vec()
			if phys {
				av = zmm[r*V+V]
			}
			VBROADCASTSS(aAt(i), av)
			for u := 0; u < V; u++ {
				VFMADD231PS(bv[u], av, acc[i][u])
			}
		}
	}
	ADDQ(ldb, bp)
	ADDQ(csa, ap)
	if ap4 != nil {
		ADDQ(csa, ap4)
	}
	DECQ(kc)
	JNZ(LabelRef(name + "_k"))

	// c = alpha*acc (+ beta*c when beta is not ±0).
	var alpha vecReg = s.Vec()
	if phys {
		alpha = zmm[30]
	}
	VBROADCASTSS(x86.Addr(Param("alpha")), alpha)
	for i := range acc {
		for _, v := range acc[i] {
			VMULPS(alpha, v, v)
		}
	}
	ldc := x86.Arg("ldc")
	SHLQ(U8(2), ldc)
	store := func(withBeta bool) {
		var beta vecReg
		if withBeta {
			beta = s.Vec()
			if phys {
				beta = zmm[31]
			}
			VBROADCASTSS(x86.Addr(Param("beta")), beta)
		}
		row := GP64()
		MOVQ(c0, row)
		for i := range acc {
			if i > 0 {
				ADDQ(ldc, row)
			}
			for u, v := range acc[i] {
				if withBeta {
					if t == nil {
						VFMADD231PS(s.At(row, u), beta, v)
					} else {
						var cv vecReg
						if phys {
							cv = zmm[r*V]
							VMOVUPS_Z(s.At(row, u), t.K, cv)
						} else {
							cv = s.Load(s.At(row, u), t)
						}
						VFMADD231PS(cv, beta, v)
					}
				}
				switch {
				case t == nil:
					VMOVUPS(v, s.At(row, u))
				case phys:
					VMOVUPS(v, t.K, s.At(row, u))
				default:
					s.Store(v.(reg.VecVirtual), s.At(row, u), t)
				}
			}
		}
	}
	betaZero(name + "_beta0")
	store(true)
	JMP(LabelRef(name + "_stored"))
	Label(name + "_beta0")
	store(false)
	Label(name + "_stored")
}

// streamMax is the largest r of the stream kernels (rows of acc and c
// addressed from one pointer: 0, 1, 2, 3 times their stride).
const streamMax = 4

// streamRows returns G, the rows of b a stream kernel of r rows reads per
// pass: r·G broadcasts of a, G vectors of b (one for r = 1, which takes
// each row's vector into its FMA) and a sum fit the registers. More rows
// a pass mean fewer trips of the sums through the scratch buffer.
func streamRows(s *x86.ISA, r int) int {
	if s.Is512() {
		return []int{0, 8, 4, 4, 4}[r]
	}
	return []int{0, 8, 4, 3, 2}[r]
}

// streamUnroll is the vectors of columns a stream pass takes per step.
const streamUnroll = 4

func stream(s *x86.ISA, r int) {
	name := fmt.Sprintf("skinnyStream%d%s", r, s.Name)
	G := streamRows(s, r)
	x86.Func(name, "skinnyStream",
		fmt.Sprintf("%s sets c[i*ldc+j] = alpha*Σ_p a[i*rsa+p*csa]*b[p*ldb+j] + beta*c[i*ldc+j]", name),
		fmt.Sprintf("for i < %d, j < n, p < k (k, n >= 1), not reading c when beta is ±0, as", r),
		fmt.Sprintf("skinnyAxpys%d%s does, bit for bit, reading b row by row: %d rows per pass over", r, s.Name, G),
		fmt.Sprintf("the n columns, then one; acc is scratch of %d×n elements. Requires %s.", r, s.Req))

	// acc = 0.
	{
		cnt := x86.Arg("n")
		if r > 1 {
			IMUL3Q(U32(r), cnt, cnt)
		}
		p := x86.Arg("acc")
		zero := s.Zeros(1)[0]
		s.Loops(name+"_clr", cnt, []reg.GPVirtual{p}, streamUnroll, masks, func(k int, t *x86.Tail) {
			for u := 0; u < k; u++ {
				s.Store(zero, s.At(p, u), t)
			}
		})
		Label(name + "_clr_done")
	}

	// Passes of G rows of b, then of one.
	k := x86.Addr(Param("k"))
	passes := []int{G, 1}
	if G == 1 {
		passes = passes[1:]
	}
	for i, g := range passes {
		loop := fmt.Sprintf("%s_pass%d", name, g)
		next := name + "_final"
		if i+1 < len(passes) {
			next = fmt.Sprintf("%s_pass%d", name, passes[i+1])
		}
		Label(loop)
		CMPQ(k, U32(g))
		JB(LabelRef(next))
		streamPass(s, r, g, fmt.Sprintf("%s_p%d", name, g))
		// Next g rows: a by g columns, b by g rows.
		for _, adv := range [][2]string{{"csa", "a"}, {"ldb", "b"}} {
			d := x86.Arg(adv[0])
			SHLQ(U8(2), d)
			if g > 1 {
				IMUL3Q(U32(g), d, d)
			}
			ADDQ(d, x86.Addr(Param(adv[1])))
		}
		SUBQ(U32(g), k)
		JMP(LabelRef(loop))
	}

	// c = alpha*acc (+ beta*c when beta is not ±0).
	Label(name + "_final")
	final := func(withBeta bool) {
		alpha := s.Broadcast("alpha")
		var beta reg.VecVirtual
		if withBeta {
			beta = s.Broadcast("beta")
		}
		for i := 0; i < r; i++ {
			cp, ap := x86.Arg("c"), x86.Arg("acc")
			if i > 0 {
				for _, adv := range [][2]reg.GPVirtual{{x86.Arg("ldc"), cp}, {x86.Arg("n"), ap}} {
					IMUL3Q(U32(4*i), adv[0], adv[0])
					ADDQ(adv[0], adv[1])
				}
			}
			cnt := x86.Arg("n")
			lbl := fmt.Sprintf("%s_f%v%d", name, withBeta, i)
			s.Loops(lbl, cnt, []reg.GPVirtual{cp, ap}, streamUnroll, masks, func(k int, t *x86.Tail) {
				for u := 0; u < k; u++ {
					v := s.Load(s.At(ap, u), t)
					VMULPS(alpha, v, v)
					if withBeta {
						if t == nil {
							VFMADD231PS(s.At(cp, u), beta, v)
						} else {
							VFMADD231PS(s.Load(s.At(cp, u), t), beta, v)
						}
					}
					s.Store(v, s.At(cp, u), t)
				}
			})
			Label(lbl + "_done")
		}
	}
	betaZero(name + "_beta0")
	final(true)
	JMP(LabelRef(name + "_done"))
	Label(name + "_beta0")
	final(false)
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// streamPass adds to the r rows of acc the g rows of b at b, scaled by the
// a(i, p) at a: acc[i*n+j] = fma(b[q*ldb+j], a[i*rsa+q*csa], acc[i*n+j]) for
// q = 0..g-1 in order.
func streamPass(s *x86.ISA, r, g int, name string) {
	// The r·g broadcasts of a.
	av := make([][]reg.VecVirtual, r)
	{
		row := x86.Arg("a")
		var rsa, csa reg.GPVirtual
		if r > 1 {
			rsa = x86.Arg("rsa")
			SHLQ(U8(2), rsa)
		}
		if g > 1 {
			csa = x86.Arg("csa")
			SHLQ(U8(2), csa)
		}
		for i := range av {
			if i > 0 {
				ADDQ(rsa, row)
			}
			col := GP64()
			MOVQ(row, col)
			av[i] = make([]reg.VecVirtual, g)
			for q := range av[i] {
				if q > 0 {
					ADDQ(csa, col)
				}
				av[i][q] = s.Vec()
				VBROADCASTSS(Mem{Base: col}, av[i][q])
			}
		}
	}
	// Rows of b and of acc from one pointer per four rows: 0, 1, 2 times
	// the stride, or its triple, on.
	bp := x86.Arg("b")
	var ldb, ldb3 reg.GPVirtual
	if g > 1 {
		ldb = x86.Arg("ldb")
		SHLQ(U8(2), ldb)
	}
	if g > 3 {
		ldb3 = GP64()
		LEAQ(Mem{Base: ldb, Index: ldb, Scale: 2}, ldb3)
	}
	ap := x86.Arg("acc")
	var lda, lda3 reg.GPVirtual
	if r > 1 {
		lda = x86.Arg("n")
		SHLQ(U8(2), lda)
	}
	if r > 3 {
		lda3 = GP64()
		LEAQ(Mem{Base: lda, Index: lda, Scale: 2}, lda3)
	}
	bRows := x86.NewRows(bp, ldb, ldb3, g)
	bAt := func(q, u int) Mem { return bRows.At(q, u*s.Bytes()) }
	accRows := x86.NewRows(ap, lda, lda3, r)
	accAt := func(i, u int) Mem { return accRows.At(i, u*s.Bytes()) }
	ptrs := append(bRows.Bases, accRows.Bases...)
	cnt := x86.Arg("n")
	s.Loops(name, cnt, ptrs, streamUnroll, masks, func(k int, t *x86.Tail) {
		for u := 0; u < k; u++ {
			if r == 1 {
				// One vector of b at a time: g broadcasts, the sum and
				// one row's vector in registers.
				v := s.Load(accAt(0, u), t)
				for q := 0; q < g; q++ {
					if t == nil {
						VFMADD231PS(bAt(q, u), av[0][q], v)
					} else {
						VFMADD231PS(s.Load(bAt(q, u), t), av[0][q], v)
					}
				}
				s.Store(v, accAt(0, u), t)
				continue
			}
			bv := make([]reg.VecVirtual, g)
			for q := range bv {
				bv[q] = s.Load(bAt(q, u), t)
			}
			for i := 0; i < r; i++ {
				v := s.Load(accAt(i, u), t)
				for q := 0; q < g; q++ {
					VFMADD231PS(bv[q], av[i][q], v)
				}
				s.Store(v, accAt(i, u), t)
			}
		}
	})
	Label(name + "_done")
}
