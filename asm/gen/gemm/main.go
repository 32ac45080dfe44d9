// Command gemm generates the register-blocked GEMM micro-kernels for AVX2
// (YMM, FMA) and AVX-512 (ZMM, opmask edges).
//
// Every micro-kernel computes one tile of C:
//
//	C[i, j] = alpha * sum_p A(i, p) * B[p*ldb + j] + beta * C[i, j]
//
// for i < rows <= MR and j < cols <= NR. A(i, p) is read at
// a[i*rsa + p*csa], so the same kernel serves a row-major A (rsa = lda,
// csa = 1), a transposed one (rsa = 1, csa = lda) and a packed panel; all
// MR rows of A are read, so the caller pads the bottom edge. B is read as
// k rows of NR floats at a stride of ldb floats: a packed panel (ldb = NR)
// or, for a full-width panel, a row-major B in place (all NR floats of
// each row are read). Only the rows×cols corner of C is read or
// written: AVX-512 masks the right edge with opmask registers, AVX2 with
// VMASKMOVPS. When beta is ±0, C is not read.
//
// The accumulators stay in registers for the whole k loop; each step loads
// NR/lanes vectors of B, broadcasts each of the MR values of A once and
// issues MR*NR/lanes FMAs.
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/simdgpt/simdgpt/asm/gen/internal/masks"
)

// isa describes one vector width.
type isa struct {
	name   string // suffix of the kernel names
	req    string // features, for the doc comment
	lanes  int    // float32 lanes per register
	newVec func() reg.VecVirtual
}

var (
	avx2   = isa{"AVX2", "AVX2 and FMA", 8, func() reg.VecVirtual { return YMM() }}
	avx512 = isa{"AVX512", "AVX-512F", 16, func() reg.VecVirtual { return ZMM() }}
)

// unroll is how many k steps one iteration of the main loop performs.
const unroll = 4

func main() {
	ConstraintExpr("amd64,!purego")
	maskAVX2 := masks.LanesAVX2("gemmMaskAVX2")
	maskAVX512 := masks.OpmasksAVX512("gemmMaskAVX512")

	for _, packed := range []bool{false, true} {
		kernel(avx512, 14, 2, maskAVX512, packed, 14)
		kernel(avx512, 14, 1, maskAVX512, packed, 14)
		kernel(avx2, 6, 2, maskAVX2, packed, 6)
		kernel(avx2, 6, 1, maskAVX2, packed, 6)
	}
	// Edge kernels: fewer rows of the same packed panels, for a last row
	// of tiles with fewer than MR rows (about rows/MR of the full
	// kernel's time instead of all of it).
	for mr := 2; mr < 14; mr += 2 {
		kernel(avx512, mr, 2, maskAVX512, true, 14)
		kernel(avx512, mr, 1, maskAVX512, true, 14)
	}
	for mr := 2; mr < 6; mr += 2 {
		kernel(avx2, mr, 2, maskAVX2, true, 6)
		kernel(avx2, mr, 1, maskAVX2, true, 6)
	}
	dotKernel(avx512, 14, maskAVX512)
	dotKernel(avx2, 6, maskAVX2)
	colsKernel(avx512, 14)
	colsKernel(avx2, 6)
	packTransposed(maskAVX2)
	packRows(maskAVX2)
	packPanels(14, maskAVX2)
	packPanels(6, maskAVX2)
	Generate()
}

// rowAddr returns the address of A(i, p) for the current p, given base
// registers for rows 0, 5, 10, ... and the row stride rs (bytes) and 3*rs.
func rowAddr(bases []reg.GPVirtual, rs, rs3 reg.GPVirtual, i int) Mem {
	base := bases[i/5]
	switch i % 5 {
	case 0:
		return Mem{Base: base}
	case 1:
		return Mem{Base: base, Index: rs, Scale: 1}
	case 2:
		return Mem{Base: base, Index: rs, Scale: 2}
	case 3:
		return Mem{Base: base, Index: rs3, Scale: 1}
	default:
		return Mem{Base: base, Index: rs, Scale: 4}
	}
}

// panelStride is the number of floats per k step of a packed A panel of
// mr rows: mr rounded up to a multiple of 8 (the packer's granule).
func panelStride(mr int) int { return (mr + 7) &^ 7 }

// kernel emits one micro-kernel. With packed false it reads A(i, p) at
// a[i*rsa + p*csa] (any layout); with packed true it reads a packed panel
// made for panelMR rows, A(i, p) at a[p*panelStride(panelMR) + i], with
// constant displacements and one pointer increment per unrolled iteration
// (rsa and csa are ignored). panelMR > mr gives an edge kernel, which
// computes the first mr rows of a wider panel.
// rowBases loads the matrix argument a and its row stride (in floats)
// and sets up the registers rowAddr needs for mr rows: a base for rows 0,
// 5, 10, ..., the stride rs in bytes and 3*rs.
func rowBases(mr int, a, stride string) (bases []reg.GPVirtual, rs, rs3 reg.GPVirtual) {
	rs = loadGP(stride)
	SHLQ(U8(2), rs)
	rs3 = GP64()
	LEAQ(Mem{Base: rs, Index: rs, Scale: 2}, rs3)
	bases = make([]reg.GPVirtual, (mr+4)/5)
	bases[0] = loadGP(a)
	five := GP64()
	LEAQ(Mem{Base: rs, Index: rs, Scale: 4}, five) // 5*rs
	for i := 1; i < len(bases); i++ {
		bases[i] = GP64()
		LEAQ(Mem{Base: bases[i-1], Index: five, Scale: 1}, bases[i])
	}
	return bases, rs, rs3
}

func kernel(s isa, mr, nv int, maskTable Mem, packed bool, panelMR int) {
	nr := nv * s.lanes
	name := fmt.Sprintf("GemmKernel%dx%d%s", mr, nr, s.name)
	layout := fmt.Sprintf("A(i,p) at a[i*rsa+p*csa] for all %d rows and p < k", mr)
	if packed {
		name = fmt.Sprintf("GemmKernel%dx%dPacked%s", mr, nr, s.name)
		if panelMR != mr {
			name = fmt.Sprintf("GemmKernel%dx%dPacked%dRows%s", mr, nr, panelMR, s.name)
		}
		layout = fmt.Sprintf("A a packed panel, A(i,p) at a[p*%d+i] for all %d rows and p < k (rsa, csa unused)", panelStride(panelMR), mr)
	}
	TEXT(name, NOSPLIT, "func(k int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, rows, cols int, alpha, beta float32)")
	Pragma("noescape")
	Doc(
		fmt.Sprintf("%s computes one %d×%d tile, C = alpha*A*B + beta*C, with", name, mr, nr),
		layout+",",
		fmt.Sprintf("B k rows of %d floats at a stride of ldb floats (all %d read), and only the first rows×cols corner of C", nr, nr),
		fmt.Sprintf("(leading dimension ldc) read or written; C is not read when beta is ±0. Requires %s.", s.req),
	)

	// Accumulators.
	acc := make([][]reg.VecVirtual, mr)
	for i := range acc {
		acc[i] = make([]reg.VecVirtual, nv)
		for v := range acc[i] {
			acc[i][v] = s.newVec()
			VXORPS(acc[i][v], acc[i][v], acc[i][v])
		}
	}

	k := loadGP("k")
	// B row p+u of the current step is at b + u*ldb (u < 4); bpf runs
	// unroll rows ahead of b for the prefetches.
	b := loadGP("b")
	ldb := loadGP("ldb")
	SHLQ(U8(2), ldb)
	ldb3 := GP64()
	LEAQ(Mem{Base: ldb, Index: ldb, Scale: 2}, ldb3)
	bpf := GP64()
	LEAQ(Mem{Base: b, Index: ldb, Scale: 4}, bpf)
	bRow := func(base reg.GPVirtual, u, disp int) Mem {
		switch u {
		case 0:
			return Mem{Base: base, Disp: disp}
		case 1:
			return Mem{Base: base, Index: ldb, Scale: 1, Disp: disp}
		case 2:
			return Mem{Base: base, Index: ldb, Scale: 2, Disp: disp}
		default:
			return Mem{Base: base, Index: ldb3, Scale: 1, Disp: disp}
		}
	}
	// aAddr(i, u) addresses A(i, p+u) for the current p; aNext(u) moves
	// the A pointers on by u steps of p.
	var aAddr func(i, u int) Mem
	var aNext func(u int)
	if packed {
		a := loadGP("a")
		ps := panelStride(panelMR)
		aAddr = func(i, u int) Mem { return Mem{Base: a, Disp: 4 * (u*ps + i)} }
		aNext = func(u int) { ADDQ(U32(4*u*ps), a) }
	} else {
		bases, rs, rs3 := rowBases(mr, "a", "rsa")
		cs := loadGP("csa")
		SHLQ(U8(2), cs)
		// The strided layout has no constant displacement per step: the
		// bases move after every step.
		aAddr = func(i, u int) Mem { return rowAddr(bases, rs, rs3, i) }
		aNext = func(int) {
			for _, base := range bases {
				ADDQ(cs, base)
			}
		}
	}

	// Prefetch the rows of the C tile so that they arrive during the k
	// loop instead of stalling the stores at its end.
	{
		p := loadGP("c")
		ldc := loadGP("ldc")
		SHLQ(U8(2), ldc)
		rows := loadGP("rows")
		for i := 0; i < mr; i++ {
			if i > 0 {
				CMPQ(rows, U32(i))
				JLE(LabelRef(name + "_prefetched"))
				ADDQ(ldc, p)
			}
			for off := 0; off < 4*nr; off += 64 {
				PREFETCHT0(Mem{Base: p, Disp: off})
			}
		}
		Label(name + "_prefetched")
	}

	bv := make([]reg.VecVirtual, nv)
	for v := range bv {
		bv[v] = s.newVec()
	}
	step := func(u int) {
		for v := 0; v < nv; v++ {
			VMOVUPS(bRow(b, u, 4*v*s.lanes), bv[v])
		}
		for i := 0; i < mr; i++ {
			t := s.newVec()
			VBROADCASTSS(aAddr(i, u), t)
			for v := 0; v < nv; v++ {
				VFMADD231PS(t, bv[v], acc[i][v])
			}
		}
		if !packed {
			aNext(1)
		}
	}

	n4 := GP64()
	MOVQ(k, n4)
	SHRQ(U8(2), n4)
	ANDQ(U8(unroll-1), k)
	TESTQ(n4, n4)
	JZ(LabelRef(name + "_tail"))
	Label(name + "_loop")
	for u := 0; u < unroll; u++ {
		for off := 0; off < 4*nr; off += 64 {
			PREFETCHT0(bRow(bpf, u, off))
		}
		step(u)
	}
	if packed {
		aNext(unroll)
	}
	LEAQ(Mem{Base: b, Index: ldb, Scale: 4}, b)
	LEAQ(Mem{Base: bpf, Index: ldb, Scale: 4}, bpf)
	DECQ(n4)
	JNZ(LabelRef(name + "_loop"))

	Label(name + "_tail")
	TESTQ(k, k)
	JZ(LabelRef(name + "_store"))
	Label(name + "_tailloop")
	step(0)
	if packed {
		aNext(1)
	}
	ADDQ(ldb, b)
	DECQ(k)
	JNZ(LabelRef(name + "_tailloop"))

	Label(name + "_store")
	alpha := s.newVec()
	VBROADCASTSS(NewParamAddr("alpha", 80), alpha)
	for i := range acc {
		for v := range acc[i] {
			VMULPS(alpha, acc[i][v], acc[i][v])
		}
	}

	c := loadGP("c")
	ldc := loadGP("ldc")
	SHLQ(U8(2), ldc)
	rows := loadGP("rows")
	cols := loadGP("cols")

	// Edge masks for the nv vectors of a row: lanes w_v = clamp(cols - v*lanes, 0, lanes).
	masks := make([]mask, nv)
	for v := 0; v < nv; v++ {
		w := GP64()
		MOVQ(cols, w)
		if v > 0 {
			SUBQ(U32(v*s.lanes), w)
			zero := GP64()
			XORQ(zero, zero)
			CMPQ(w, zero)
			CMOVQLT(zero, w)
		}
		lim := GP64()
		MOVQ(U32(s.lanes), lim)
		CMPQ(w, lim)
		CMOVQGT(lim, w)
		tbl := GP64()
		LEAQ(maskTable, tbl)
		if s.lanes == 16 {
			masks[v].k = K()
			KMOVW(Mem{Base: tbl, Index: w, Scale: 2}, masks[v].k)
		} else {
			// First w lanes: the 8 words at index 8-w.
			NEGQ(w)
			masks[v].y = s.newVec()
			VMOVUPS(Mem{Base: tbl, Index: w, Scale: 4, Disp: 32}, masks[v].y)
		}
	}

	// Store through the masks; AVX2 first takes a plain path for full
	// tiles, as VMASKMOVPS stores are slower than plain ones.
	stores := func(prefix string, masked bool) {
		betaBits := GP32()
		MOVL(NewParamAddr("beta", 84), betaBits)
		ANDL(U32(0x7fffffff), betaBits)
		JZ(LabelRef(prefix + "_beta0"))
		beta := s.newVec()
		VBROADCASTSS(NewParamAddr("beta", 84), beta)
		storeRows(s, prefix+"_betaN", acc, c, ldc, rows, masks, masked, func(i, v int, m Mem) {
			if !masked {
				VFMADD231PS(m, beta, acc[i][v])
				return
			}
			t := s.newVec()
			if s.lanes == 16 {
				VMOVUPS_Z(m, masks[v].k, t)
			} else {
				VMASKMOVPS(m, masks[v].y, t)
			}
			VFMADD231PS(t, beta, acc[i][v])
		})
		JMP(LabelRef(name + "_done"))
		Label(prefix + "_beta0")
		storeRows(s, prefix+"_beta0", acc, c, ldc, rows, masks, masked, nil)
		JMP(LabelRef(name + "_done"))
	}
	if s.lanes == 8 {
		CMPQ(cols, U32(nr))
		JNE(LabelRef(name + "_edge"))
		stores(name+"_full", false)
		Label(name + "_edge")
	}
	stores(name+"_masked", true)

	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// mask is the edge mask of one vector column of a tile: an opmask
// register for AVX-512, a lane-mask vector for AVX2.
type mask struct {
	k reg.Register
	y reg.VecVirtual
}

// storeRows writes the accumulators of rows i < rows to C through the edge
// masks, first calling update (if not nil) to fold in beta*C.
func storeRows(s isa, prefix string, acc [][]reg.VecVirtual, c, ldc, rows reg.GPVirtual, masks []mask, masked bool, update func(i, v int, m Mem)) {
	p := GP64()
	MOVQ(c, p)
	for i := range acc {
		if i > 0 {
			CMPQ(rows, U32(i))
			JLE(LabelRef(prefix + "_end"))
			ADDQ(ldc, p)
		}
		for v := range acc[i] {
			m := Mem{Base: p, Disp: 4 * v * s.lanes}
			if update != nil {
				update(i, v, m)
			}
			switch {
			case !masked:
				VMOVUPS(acc[i][v], m)
			case s.lanes == 16:
				VMOVUPS(acc[i][v], masks[v].k, m)
			default:
				VMASKMOVPS(acc[i][v], masks[v].y, m)
			}
		}
	}
	Label(prefix + "_end")
}

// loadGP loads an integer or pointer argument into a new register.
func loadGP(name string) reg.GPVirtual {
	r := GP64()
	Load(Param(name), r)
	return r
}

// packTransposed generates PackBTransAVX2, which packs a transposed block
// of B into a micro-kernel panel with 8×8 transposes:
//
//	dst[q*nr + j] = src[j*ldb + q]   for j < w, q < kc
//	dst[q*nr + j] = 0                for w <= j < nr, q < kc
//
// nr must be a positive multiple of 8 and w <= nr. Only rows j < w of src,
// and only their first kc elements, are read (masked loads at the end).
func packTransposed(maskTable Mem) {
	const name = "PackBTransAVX2"
	TEXT(name, NOSPLIT, "func(dst *float32, src *float32, ldb int, w int, kc int, nr int)")
	Pragma("noescape")
	Doc(
		name+" packs w rows of a row-major block (leading dimension ldb) transposed into",
		"a panel of kc rows of nr floats: dst[q*nr+j] = src[j*ldb+q] for j < w, q < kc,",
		"and 0 for w <= j < nr. nr is a positive multiple of 8 and w <= nr. Requires AVX2.",
	)
	dcol := loadGP("dst") // dst + j0 floats
	srow := loadGP("src") // src + j0 rows
	ldb := loadGP("ldb")
	SHLQ(U8(2), ldb)
	w := loadGP("w")
	kc := loadGP("kc")
	nrBytes := loadGP("nr")
	SHLQ(U8(2), nrBytes)

	// Outer loop over blocks of 8 columns of the panel (8 rows of src).
	j0 := GP64()
	XORQ(j0, j0)
	Label(name + "_jloop")
	CMPQ(j0, w)
	JGE(LabelRef(name + "_zero"))
	wv := GP64() // rows of src in this block: min(w-j0, 8)
	MOVQ(w, wv)
	SUBQ(j0, wv)
	CMPQ(wv, U8(8))
	JLE(LabelRef(name + "_wvok"))
	MOVQ(U32(8), wv)
	Label(name + "_wvok")

	d := GP64() // walks down the panel
	MOVQ(dcol, d)
	q0 := GP64()
	XORQ(q0, q0)
	Label(name + "_qloop")
	CMPQ(q0, kc)
	JGE(LabelRef(name + "_qdone"))
	qv := GP64() // min(8, kc-q0)
	MOVQ(kc, qv)
	SUBQ(q0, qv)
	CMPQ(qv, U8(8))
	JLE(LabelRef(name + "_qvok"))
	MOVQ(U32(8), qv)
	Label(name + "_qvok")
	mask := YMM()
	{
		tbl := GP64()
		LEAQ(maskTable, tbl)
		negq := GP64()
		MOVQ(qv, negq)
		NEGQ(negq)
		VMOVUPS(Mem{Base: tbl, Index: negq, Scale: 4, Disp: 32}, mask)
	}

	r := make([]reg.VecVirtual, 8)
	p := GP64()
	LEAQ(Mem{Base: srow, Index: q0, Scale: 4}, p)
	for i := range r {
		r[i] = YMM()
		VXORPS(r[i], r[i], r[i])
	}
	for i := range r {
		CMPQ(wv, U32(i))
		JLE(LabelRef(name + "_loaded"))
		VMASKMOVPS(Mem{Base: p}, mask, r[i])
		if i < 7 {
			ADDQ(ldb, p)
		}
	}
	Label(name + "_loaded")

	// 8×8 transpose: r[i] holds src row i; out[q] gets column q.
	t := make([]reg.VecVirtual, 8)
	for i := 0; i < 8; i += 2 {
		t[i], t[i+1] = YMM(), YMM()
		VUNPCKLPS(r[i+1], r[i], t[i])
		VUNPCKHPS(r[i+1], r[i], t[i+1])
	}
	u := make([]reg.VecVirtual, 8)
	for h := 0; h < 8; h += 4 {
		for x := 0; x < 2; x++ {
			u[h+2*x], u[h+2*x+1] = YMM(), YMM()
			VSHUFPS(U8(0x44), t[h+2+x], t[h+x], u[h+2*x])
			VSHUFPS(U8(0xEE), t[h+2+x], t[h+x], u[h+2*x+1])
		}
	}
	out := make([]reg.VecVirtual, 8)
	for q := 0; q < 4; q++ {
		out[q], out[q+4] = YMM(), YMM()
		VPERM2F128(U8(0x20), u[q+4], u[q], out[q])
		VPERM2F128(U8(0x31), u[q+4], u[q], out[q+4])
	}
	for q := range out {
		if q > 0 {
			CMPQ(qv, U32(q))
			JLE(LabelRef(name + "_stored"))
		}
		VMOVUPS(out[q], Mem{Base: d})
		ADDQ(nrBytes, d)
	}
	Label(name + "_stored")
	ADDQ(U8(8), q0)
	JMP(LabelRef(name + "_qloop"))

	Label(name + "_qdone")
	ADDQ(U8(8), j0)
	ADDQ(U8(32), dcol)
	{
		step := GP64()
		MOVQ(ldb, step)
		SHLQ(U8(3), step)
		ADDQ(step, srow)
	}
	JMP(LabelRef(name + "_jloop"))

	// Columns w..nr-1 of the panel (whole blocks of 8 past the last row of
	// src) are zero. A partial block was zero-filled by its loads.
	Label(name + "_zero")
	nrCols := GP64()
	MOVQ(nrBytes, nrCols)
	SHRQ(U8(2), nrCols)
	// Round j0 up: blocks start at multiples of 8 already.
	z := YMM()
	VXORPS(z, z, z)
	Label(name + "_zloop")
	CMPQ(j0, nrCols)
	JGE(LabelRef(name + "_done"))
	MOVQ(dcol, d)
	MOVQ(kc, q0)
	Label(name + "_zq")
	TESTQ(q0, q0)
	JZ(LabelRef(name + "_znext"))
	VMOVUPS(z, Mem{Base: d})
	ADDQ(nrBytes, d)
	DECQ(q0)
	JMP(LabelRef(name + "_zq"))
	Label(name + "_znext")
	ADDQ(U8(8), j0)
	ADDQ(U8(32), dcol)
	JMP(LabelRef(name + "_zloop"))

	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// packRows generates PackBAVX2, which copies a row-major block into a
// panel, zero padding each row:
//
//	dst[q*nr + j] = src[q*ldb + j]   for j < w, q < kc
//	dst[q*nr + j] = 0                for w <= j < nr, q < kc
//
// nr must be a positive multiple of 8 and w <= nr. Only the first w
// elements of each of the kc rows of src are read (VMASKMOVPS does not
// touch masked-off lanes).
func packRows(maskTable Mem) {
	const name = "PackBAVX2"
	TEXT(name, NOSPLIT, "func(dst *float32, src *float32, ldb int, w int, kc int, nr int)")
	Pragma("noescape")
	Doc(
		name+" copies kc rows of w floats of a row-major block (leading dimension ldb)",
		"into a panel of kc rows of nr floats: dst[q*nr+j] = src[q*ldb+j] for j < w, q < kc,",
		"and 0 for w <= j < nr. nr is a positive multiple of 8 and w <= nr. Requires AVX2.",
	)
	dcol := loadGP("dst")
	scol := loadGP("src")
	ldb := loadGP("ldb")
	SHLQ(U8(2), ldb)
	w := loadGP("w")
	kc := loadGP("kc")
	nr := loadGP("nr")
	nrBytes := GP64()
	MOVQ(nr, nrBytes)
	SHLQ(U8(2), nrBytes)

	// One column block of 8 at a time, with a fixed lane mask.
	j0 := GP64()
	XORQ(j0, j0)
	Label(name + "_jloop")
	CMPQ(j0, nr)
	JGE(LabelRef(name + "_done"))
	mask := YMM()
	{
		wv := GP64() // clamp(w-j0, 0, 8)
		MOVQ(w, wv)
		SUBQ(j0, wv)
		JGE(LabelRef(name + "_pos"))
		XORQ(wv, wv)
		Label(name + "_pos")
		CMPQ(wv, U8(8))
		JLE(LabelRef(name + "_wvok"))
		MOVQ(U32(8), wv)
		Label(name + "_wvok")
		tbl := GP64()
		LEAQ(maskTable, tbl)
		NEGQ(wv)
		VMOVUPS(Mem{Base: tbl, Index: wv, Scale: 4, Disp: 32}, mask)
	}
	sp, dp, q := GP64(), GP64(), GP64()
	MOVQ(scol, sp)
	MOVQ(dcol, dp)
	MOVQ(kc, q)
	Label(name + "_qloop")
	TESTQ(q, q)
	JZ(LabelRef(name + "_qdone"))
	t := YMM()
	VMASKMOVPS(Mem{Base: sp}, mask, t)
	VMOVUPS(t, Mem{Base: dp})
	ADDQ(ldb, sp)
	ADDQ(nrBytes, dp)
	DECQ(q)
	JMP(LabelRef(name + "_qloop"))
	Label(name + "_qdone")
	ADDQ(U8(8), j0)
	ADDQ(U8(32), scol)
	ADDQ(U8(32), dcol)
	JMP(LabelRef(name + "_jloop"))

	Label(name + "_done")
	VZEROUPPER()
	RET()
}

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
func colsKernel(s isa, mr int) {
	ps := panelStride(mr)
	if ps != s.lanes {
		panic("colsKernel: a panel row must be one vector")
	}
	name := fmt.Sprintf("GemmColsKernel%d%s", mr, s.name)
	TEXT(name, NOSPLIT, "func(k int, a *float32, b *float32, cols int, dst *float32)")
	Pragma("noescape")
	Doc(
		fmt.Sprintf("%s sets dst[j*%d+i] = sum over p < k of a[p*%d+i]*b[j*k+p], for i < %d and", name, ps, ps, ps),
		fmt.Sprintf("j < cols (1 <= cols <= %d): columns of C from a packed A panel. Requires %s.", colsMax, s.req),
	)
	k := loadGP("k")
	a := loadGP("a")
	cols := loadGP("cols")
	dst := loadGP("dst")
	// Column pointers: b, b + 4k, b + 8k.
	kb := GP64()
	MOVQ(k, kb)
	SHLQ(U8(2), kb)
	bp := make([]reg.GPVirtual, colsMax)
	bp[0] = loadGP("b")
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
		pre := fmt.Sprintf("%s_cols%d", name, nc)
		Label(pre)
		acc := make([][unroll]reg.VecVirtual, nc)
		for j := range acc {
			for u := range acc[j] {
				acc[j][u] = s.newVec()
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
			av := s.newVec()
			VMOVUPS(Mem{Base: pa, Disp: 4 * u * ps}, av)
			for j := 0; j < nc; j++ {
				t := s.newVec()
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
		av := s.newVec()
		VMOVUPS(Mem{Base: pa}, av)
		for j := 0; j < nc; j++ {
			t := s.newVec()
			VBROADCASTSS(Mem{Base: bp[j], Index: q, Scale: 1}, t)
			VFMADD231PS(av, t, acc[j][0])
		}
		ADDQ(U32(4*ps), pa)
		ADDQ(U8(4), q)
		DECQ(rem)
		JNZ(LabelRef(pre + "_tailloop"))
		Label(pre + "_store")
		for j := range acc {
			VADDPS(acc[j][1], acc[j][0], acc[j][0])
			VADDPS(acc[j][3], acc[j][2], acc[j][2])
			VADDPS(acc[j][2], acc[j][0], acc[j][0])
			VMOVUPS(acc[j][0], Mem{Base: dst, Disp: 4 * j * ps})
		}
		VZEROUPPER()
		RET()
	}
}

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
func dotKernel(s isa, mr int, maskTable Mem) {
	name := fmt.Sprintf("GemmDotKernel%d%s", mr, s.name)
	TEXT(name, NOSPLIT, "func(k int, a *float32, lda int, b *float32, c *float32, ldc int, alpha, beta float32)")
	Pragma("noescape")
	Doc(
		fmt.Sprintf("%s sets c[i*ldc] = alpha*dot(a[i*lda:i*lda+k], b[:k]) + beta*c[i*ldc] for i < %d,", name, mr),
		fmt.Sprintf("reading exactly k floats of each row; c is not read when beta is ±0. Requires %s.", s.req),
	)
	acc := make([]reg.VecVirtual, mr)
	for i := range acc {
		acc[i] = s.newVec()
		VXORPS(acc[i], acc[i], acc[i])
	}
	k := loadGP("k")
	bases, rs, rs3 := rowBases(mr, "a", "lda")
	b := loadGP("b")
	bytes := 4 * s.lanes

	n := GP64()
	MOVQ(k, n)
	SHRQ(U8(map[int]int{8: 3, 16: 4}[s.lanes]), n)
	ANDQ(U8(s.lanes-1), k)
	TESTQ(n, n)
	JZ(LabelRef(name + "_tail"))
	Label(name + "_loop")
	bv := s.newVec()
	VMOVUPS(Mem{Base: b}, bv)
	for i := range acc {
		VFMADD231PS(rowAddr(bases, rs, rs3, i), bv, acc[i])
	}
	ADDQ(U32(bytes), b)
	for _, base := range bases {
		ADDQ(U32(bytes), base)
	}
	DECQ(n)
	JNZ(LabelRef(name + "_loop"))

	Label(name + "_tail")
	TESTQ(k, k)
	JZ(LabelRef(name + "_reduce"))
	tbl := GP64()
	LEAQ(maskTable, tbl)
	if s.lanes == 16 {
		km := K()
		KMOVW(Mem{Base: tbl, Index: k, Scale: 2}, km)
		VMOVUPS_Z(Mem{Base: b}, km, bv)
		for i := range acc {
			t := s.newVec()
			VMOVUPS_Z(rowAddr(bases, rs, rs3, i), km, t)
			VFMADD231PS(t, bv, acc[i])
		}
	} else {
		NEGQ(k)
		m := s.newVec()
		VMOVUPS(Mem{Base: tbl, Index: k, Scale: 4, Disp: 32}, m)
		VMASKMOVPS(Mem{Base: b}, m, bv)
		for i := range acc {
			t := s.newVec()
			VMASKMOVPS(rowAddr(bases, rs, rs3, i), m, t)
			VFMADD231PS(t, bv, acc[i])
		}
	}

	// Horizontal sums: each acc[i] ends with its total in lane 0.
	Label(name + "_reduce")
	for _, v := range acc {
		if s.lanes == 16 {
			hi := YMM()
			VEXTRACTF64X4(U8(1), v, hi)
			VADDPS(hi, v.AsY(), v.AsY())
		}
		x := XMM()
		VEXTRACTF128(U8(1), v.AsY(), x)
		VADDPS(x, v.AsX(), v.AsX())
		VMOVHLPS(v.AsX(), v.AsX(), x)
		VADDPS(x, v.AsX(), v.AsX())
		VMOVSHDUP(v.AsX(), x)
		VADDSS(x, v.AsX(), v.AsX())
	}

	alpha := XMM()
	MOVSS(NewParamAddr("alpha", 48), alpha)
	for _, v := range acc {
		VMULSS(alpha, v.AsX(), v.AsX())
	}
	c := loadGP("c")
	ldc := loadGP("ldc")
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
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// packPanels generates PackPanels{MR}AVX2, which packs a block of a
// transposed A (stored k×m, row q holding A(·, q)) into consecutive MR-row
// panels of ps = panelStride(MR) floats per step, reading each stored row
// once, front to back:
//
//	dst[t*kc*ps + q*ps + i] = src[q*lda + t*MR + i]   for i < min(MR, m-t*MR), q < kc
//	dst[t*kc*ps + q*ps + i] = 0                       for the other i < ps
//
// for every panel t < ceil(m/MR). Packing panel by panel instead reads
// the block in columns, a new line at a stride of lda per step, which the
// caches serve badly.
func packPanels(mr int, maskTable Mem) {
	ps := panelStride(mr)
	name := fmt.Sprintf("PackPanels%dAVX2", mr)
	TEXT(name, NOSPLIT, "func(dst *float32, src *float32, lda int, m int, kc int)")
	Pragma("noescape")
	Doc(
		fmt.Sprintf("%s packs kc rows of m floats of a row-major block (leading dimension lda)", name),
		fmt.Sprintf("into ceil(m/%d) panels of kc rows of %d floats: dst[t*kc*%d+q*%d+i] = src[q*lda+t*%d+i]", mr, ps, ps, ps, mr),
		fmt.Sprintf("for i < min(%d, m-t*%d), and 0 for the other i < %d. Only the first m floats of each", mr, mr, ps),
		"of the kc rows are read. Requires AVX2.",
	)
	drow := loadGP("dst")
	srow := loadGP("src")
	lda := loadGP("lda")
	SHLQ(U8(2), lda)
	mB := loadGP("m")
	SHLQ(U8(2), mB)
	q := loadGP("kc")
	panelBytes := GP64()
	MOVQ(q, panelBytes)
	SHLQ(U8(2), panelBytes)
	IMUL3Q(U32(ps), panelBytes, panelBytes)

	Label(name + "_qloop")
	TESTQ(q, q)
	JZ(LabelRef(name + "_done"))
	i0 := GP64() // bytes into the row
	XORQ(i0, i0)
	dp := GP64()
	MOVQ(drow, dp)
	Label(name + "_tloop")
	CMPQ(i0, mB)
	JGE(LabelRef(name + "_tdone"))
	w := GP64() // min(MR, m-i0) in bytes
	MOVQ(mB, w)
	SUBQ(i0, w)
	CMPQ(w, U32(4*mr))
	JLE(LabelRef(name + "_wok"))
	MOVQ(U32(4*mr), w)
	Label(name + "_wok")
	for c := 0; c < ps; c += 8 {
		wv := GP64() // clamp(w - 4c, 0, 32) bytes
		MOVQ(w, wv)
		if c > 0 {
			SUBQ(U32(4*c), wv)
			JGE(LabelRef(fmt.Sprintf("%s_pos%d", name, c)))
			XORQ(wv, wv)
			Label(fmt.Sprintf("%s_pos%d", name, c))
		}
		CMPQ(wv, U8(32))
		JLE(LabelRef(fmt.Sprintf("%s_wv%d", name, c)))
		MOVQ(U32(32), wv)
		Label(fmt.Sprintf("%s_wv%d", name, c))
		tbl := GP64()
		LEAQ(maskTable, tbl)
		NEGQ(wv)
		mask := YMM()
		VMOVUPS(Mem{Base: tbl, Index: wv, Scale: 1, Disp: 32}, mask)
		t := YMM()
		VMASKMOVPS(Mem{Base: srow, Index: i0, Scale: 1, Disp: 4 * c}, mask, t)
		VMOVUPS(t, Mem{Base: dp, Disp: 4 * c})
	}
	ADDQ(U32(4*mr), i0)
	ADDQ(panelBytes, dp)
	JMP(LabelRef(name + "_tloop"))
	Label(name + "_tdone")
	DECQ(q)
	ADDQ(lda, srow)
	ADDQ(U32(4*ps), drow)
	JMP(LabelRef(name + "_qloop"))

	Label(name + "_done")
	VZEROUPPER()
	RET()
}
