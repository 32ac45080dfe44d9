package main

import (
	"fmt"
	"math/bits"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/simdgpt/simdgpt/asm/gen/internal/x86"
)

// atMost emits r = min(r, n), with label as the join point.
func atMost(r reg.GPVirtual, n int, label string) {
	CMPQ(r, U8(n))
	JLE(LabelRef(label))
	MOVQ(U32(n), r)
	Label(label)
}

// transposer is one instruction set's way of packing a transposed block:
// b rows of b floats a step, loaded under a mask of the step's first qv
// floats and transposed in b vector registers.
type transposer struct {
	name      string
	b         int
	doc       string                                                 // the last line of the doc comment
	vec       func() reg.VecVirtual                                  // a register of b floats
	mask      func(qv reg.GPVirtual) func(src Mem, dst reg.Register) // sets up the mask; returns the masked load
	transpose func(rows []reg.VecVirtual) []reg.VecVirtual           // out[q] holds column q
}

// transposers are the two packers: PackBTransAVX2 with 8×8 blocks (a
// row's 8 floats are half a cache line) and PackBTransAVX512 with 16×16
// blocks (a whole line of each row, each panel row stored as one 64-byte
// vector), for panels whose width is a multiple of 16.
func transposers(maskAVX2, opmasks Mem) []transposer {
	return []transposer{
		{name: packTName, b: 8, doc: "nr is a positive multiple of 8 and w <= nr. Requires AVX2.", vec: YMM,
			mask: func(qv reg.GPVirtual) func(Mem, reg.Register) {
				mask := YMM()
				tbl := GP64()
				LEAQ(maskAVX2, tbl)
				negq := GP64()
				MOVQ(qv, negq)
				NEGQ(negq)
				VMOVUPS(Mem{Base: tbl, Index: negq, Scale: 4, Disp: 32}, mask)
				return func(src Mem, dst reg.Register) { VMASKMOVPS(src, mask, dst) }
			},
			transpose: transpose8x8},
		{name: packT512Name, b: 16, doc: "nr is a positive multiple of 16 and w <= nr. Requires AVX-512F.", vec: ZMM,
			mask: func(qv reg.GPVirtual) func(Mem, reg.Register) {
				k := K()
				tbl := GP64()
				LEAQ(opmasks, tbl)
				KMOVW(Mem{Base: tbl, Index: qv, Scale: 2}, k)
				return func(src Mem, dst reg.Register) { VMOVUPS_Z(src, k, dst) }
			},
			transpose: transpose16x16},
	}
}

// packTransposed generates a transposing packer (see transposers), which
// packs a transposed block of B (or a sliver of an untransposed A) into a
// micro-kernel panel:
//
//	dst[q*nr + j] = src[j*ldb + q]   for j < w, q < kc
//	dst[q*nr + j] = 0                for w <= j < nr, q < kc
//
// Only rows j < w of src, and only their first kc elements, are read
// (masked loads at the end).
func packTransposed(t transposer) {
	name, b := t.name, t.b
	x86.Func(name, "packBTrans",
		name+" packs w rows of a row-major block (leading dimension ldb) transposed into",
		"a panel of kc rows of nr floats: dst[q*nr+j] = src[j*ldb+q] for j < w, q < kc,",
		"and 0 for w <= j < nr. "+t.doc,
	)
	dcol := x86.Arg("dst") // dst + j0 floats
	srow := x86.Arg("src") // src + j0 rows
	ldb := x86.Arg("ldb")
	SHLQ(U8(2), ldb)
	w := x86.Arg("w")
	kc := x86.Arg("kc")
	nrBytes := x86.Arg("nr")
	SHLQ(U8(2), nrBytes)

	// Outer loop over blocks of b columns of the panel (b rows of src).
	j0 := GP64()
	XORQ(j0, j0)
	Label(name + "_jloop")
	CMPQ(j0, w)
	JGE(LabelRef(name + "_zero"))
	wv := GP64() // rows of src in this block: min(w-j0, b)
	MOVQ(w, wv)
	SUBQ(j0, wv)
	atMost(wv, b, name+"_wvok")

	d := GP64() // walks down the panel
	MOVQ(dcol, d)
	q0 := GP64()
	XORQ(q0, q0)
	Label(name + "_qloop")
	CMPQ(q0, kc)
	JGE(LabelRef(name + "_qdone"))
	qv := GP64() // min(b, kc-q0)
	MOVQ(kc, qv)
	SUBQ(q0, qv)
	atMost(qv, b, name+"_qvok")
	load := t.mask(qv)
	// The first wv rows of src from column q0 (row i at srow + q0 floats
	// + i*ldb bytes); the other registers are zero.
	r := make([]reg.VecVirtual, b)
	p := GP64()
	LEAQ(Mem{Base: srow, Index: q0, Scale: 4}, p)
	for i := range r {
		r[i] = t.vec()
		VXORPS(r[i], r[i], r[i])
	}
	for i := range r {
		CMPQ(wv, U32(i))
		JLE(LabelRef(name + "_loaded"))
		load(Mem{Base: p}, r[i])
		if i < b-1 {
			ADDQ(ldb, p)
		}
	}
	Label(name + "_loaded")
	// The first qv columns, down the panel from d.
	for q, v := range t.transpose(r) {
		if q > 0 {
			CMPQ(qv, U32(q))
			JLE(LabelRef(name + "_stored"))
		}
		VMOVUPS(v, Mem{Base: d})
		ADDQ(nrBytes, d)
	}
	Label(name + "_stored")
	ADDQ(U8(b), q0)
	JMP(LabelRef(name + "_qloop"))

	Label(name + "_qdone")
	ADDQ(U8(b), j0)
	ADDQ(U8(4*b), dcol)
	{
		step := GP64()
		MOVQ(ldb, step)
		SHLQ(U8(bits.TrailingZeros(uint(b))), step)
		ADDQ(step, srow)
	}
	JMP(LabelRef(name + "_jloop"))

	// Columns j0..nr-1 past the last row of src, whole blocks of b (a
	// partial block was zero-filled by its loads; blocks start at
	// multiples of b).
	Label(name + "_zero")
	nrCols := GP64()
	MOVQ(nrBytes, nrCols)
	SHRQ(U8(2), nrCols)
	z := t.vec()
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
	ADDQ(U8(b), j0)
	ADDQ(U8(4*b), dcol)
	JMP(LabelRef(name + "_zloop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// transpose8x8 returns the columns of the 8×8 block whose rows are r:
// out[q] holds column q.
func transpose8x8(r []reg.VecVirtual) []reg.VecVirtual {
	u := lanes4x4(r, YMM)
	out := make([]reg.VecVirtual, 8)
	for q := 0; q < 4; q++ {
		out[q], out[q+4] = YMM(), YMM()
		VPERM2F128(U8(0x20), u[q+4], u[q], out[q])
		VPERM2F128(U8(0x31), u[q+4], u[q], out[q+4])
	}
	return out
}

// lanes4x4 transposes each 4×4 block of floats within the 128-bit lanes
// of the rows r (a multiple of 4 of them): u[h+c], lane L, holds rows
// h..h+3 at column 4L+c. vec makes the registers (YMM or ZMM).
func lanes4x4(r []reg.VecVirtual, vec func() reg.VecVirtual) []reg.VecVirtual {
	n := len(r)
	t := make([]reg.VecVirtual, n)
	for i := 0; i < n; i += 2 {
		t[i], t[i+1] = vec(), vec()
		VUNPCKLPS(r[i+1], r[i], t[i])
		VUNPCKHPS(r[i+1], r[i], t[i+1])
	}
	u := make([]reg.VecVirtual, n)
	for h := 0; h < n; h += 4 {
		for x := 0; x < 2; x++ {
			u[h+2*x], u[h+2*x+1] = vec(), vec()
			VSHUFPS(U8(0x44), t[h+2+x], t[h+x], u[h+2*x])
			VSHUFPS(U8(0xEE), t[h+2+x], t[h+x], u[h+2*x+1])
		}
	}
	return u
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
	const name = packNName
	x86.Func(name, "packB",
		name+" copies kc rows of w floats of a row-major block (leading dimension ldb)",
		"into a panel of kc rows of nr floats: dst[q*nr+j] = src[q*ldb+j] for j < w, q < kc,",
		"and 0 for w <= j < nr. nr is a positive multiple of 8 and w <= nr. Requires AVX2.",
	)
	dcol := x86.Arg("dst")
	scol := x86.Arg("src")
	ldb := x86.Arg("ldb")
	SHLQ(U8(2), ldb)
	w := x86.Arg("w")
	kc := x86.Arg("kc")
	nr := x86.Arg("nr")
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
		atMost(wv, 8, name+"_wvok")
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

// panels is the state of one PackPanels routine being emitted.
type panels struct {
	mr, ps     int
	name       string
	drow, srow reg.GPVirtual // the current rows of dst and src
	lda, mB    reg.GPVirtual // lda and m in bytes
	q          reg.GPVirtual // rows left
	panelBytes reg.GPVirtual // kc*ps*4: from one panel to the next
	fastEnd    reg.GPVirtual // see packPanels
	zero       reg.VecVirtual
	maskTable  Mem
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
//
// Rows go packRowsAtOnce at a time: for each panel, those rows' ps floats
// are consecutive in dst (two or four whole cache lines), written in one
// visit. Packing one row at a time wrote each line of a ps = 8 panel in
// two visits, between which the writes to every other panel (kc·ps·4
// bytes apart, often a multiple of 4 KiB: the same L1 set) had evicted
// it. A panel whose ps floats lie inside the row is copied with plain
// loads, the floats past MR cleared by a blend; the last panels of a row,
// whose loads would pass its m floats, use masked loads.
func packPanels(mr int, maskTable Mem) {
	g := &panels{mr: mr, ps: panelStride(mr), name: packPanelsName(mr), maskTable: maskTable}
	name, ps := g.name, g.ps
	x86.Func(name, "packPanels",
		fmt.Sprintf("%s packs kc rows of m floats of a row-major block (leading dimension lda)", name),
		fmt.Sprintf("into ceil(m/%d) panels of kc rows of %d floats: dst[t*kc*%d+q*%d+i] = src[q*lda+t*%d+i]", mr, ps, ps, ps, mr),
		fmt.Sprintf("for i < min(%d, m-t*%d), and 0 for the other i < %d. Only the first m floats of each", mr, mr, ps),
		"of the kc rows are read. Requires AVX2.",
	)
	g.loadArgs()
	g.groups()
	g.lastRows()
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// loadArgs loads the arguments and sets panelBytes, fastEnd and zero.
func (g *panels) loadArgs() {
	g.drow = x86.Arg("dst")
	g.srow = x86.Arg("src")
	g.lda = x86.Arg("lda")
	SHLQ(U8(2), g.lda)
	g.mB = x86.Arg("m")
	SHLQ(U8(2), g.mB)
	g.q = x86.Arg("kc")
	g.panelBytes = GP64()
	MOVQ(g.q, g.panelBytes)
	SHLQ(U8(2), g.panelBytes)
	IMUL3Q(U32(g.ps), g.panelBytes, g.panelBytes)
	// fastEnd: a panel starting at byte i0 < fastEnd loads its ps floats
	// inside the row (i0 + 4·ps <= m·4).
	g.fastEnd = GP64()
	MOVQ(g.mB, g.fastEnd)
	SUBQ(U32(4*g.ps), g.fastEnd)
	g.zero = YMM()
	VXORPS(g.zero, g.zero, g.zero)
}

// copyPanel copies one panel step of the rows at sp (row r at sp +
// r·lda, through sp2 = sp + 2·lda for r >= 2) to dp + r·ps·4.
func (g *panels) copyPanel(sp, sp2 reg.GPVirtual, dp reg.GPVirtual, nrows int) {
	for r := 0; r < nrows; r++ {
		base := Mem{Base: sp}
		switch r {
		case 1:
			base = Mem{Base: sp, Index: g.lda, Scale: 1}
		case 2:
			base = Mem{Base: sp2}
		case 3:
			base = Mem{Base: sp2, Index: g.lda, Scale: 1}
		}
		for c := 0; c < g.ps; c += 8 {
			t := YMM()
			src := base
			src.Disp += 4 * c
			VMOVUPS(src, t)
			if live := g.mr - c; live < 8 {
				// Clear lanes live..7: they belong to the next panel.
				VBLENDPS(U8(0xff<<live&0xff), g.zero, t, t)
			}
			VMOVUPS(t, Mem{Base: dp, Disp: 4 * (r*g.ps + c)})
		}
	}
}

// maskedPanel copies one panel step of one row at srow+i0 (w bytes
// of it, clamped here) to dp, with masked loads.
func (g *panels) maskedPanel(row Mem, i0, dp reg.GPVirtual, disp int, label string) {
	w := GP64() // min(MR, m-i0) in bytes
	MOVQ(g.mB, w)
	SUBQ(i0, w)
	CMPQ(w, U32(4*g.mr))
	JLE(LabelRef(label + "_wok"))
	MOVQ(U32(4*g.mr), w)
	Label(label + "_wok")
	for c := 0; c < g.ps; c += 8 {
		wv := GP64() // clamp(w - 4c, 0, 32) bytes
		MOVQ(w, wv)
		if c > 0 {
			SUBQ(U32(4*c), wv)
			JGE(LabelRef(fmt.Sprintf("%s_pos%d", label, c)))
			XORQ(wv, wv)
			Label(fmt.Sprintf("%s_pos%d", label, c))
		}
		CMPQ(wv, U8(32))
		JLE(LabelRef(fmt.Sprintf("%s_wv%d", label, c)))
		MOVQ(U32(32), wv)
		Label(fmt.Sprintf("%s_wv%d", label, c))
		tbl := GP64()
		LEAQ(g.maskTable, tbl)
		NEGQ(wv)
		mask := YMM()
		VMOVUPS(Mem{Base: tbl, Index: wv, Scale: 1, Disp: 32}, mask)
		t := YMM()
		src := row
		src.Index, src.Scale = i0, 1
		src.Disp += 4 * c
		VMASKMOVPS(src, mask, t)
		VMOVUPS(t, Mem{Base: dp, Disp: disp + 4*c})
	}
}

// groups packs the rows packRowsAtOnce at a time while that many are
// left: plain copies while the panel lies inside the rows, then masked
// ones.
func (g *panels) groups() {
	const rows = packRowsAtOnce
	name := g.name
	Label(name + "_gloop")
	CMPQ(g.q, U8(rows))
	JL(LabelRef(name + "_qloop"))
	i0 := GP64() // bytes into the rows
	XORQ(i0, i0)
	dp := GP64()
	MOVQ(g.drow, dp)
	sp, sp2 := GP64(), GP64()
	MOVQ(g.srow, sp)
	LEAQ(Mem{Base: g.srow, Index: g.lda, Scale: 2}, sp2)
	Label(name + "_gfast")
	CMPQ(i0, g.fastEnd)
	JG(LabelRef(name + "_gtail"))
	g.copyPanel(sp, sp2, dp, rows)
	ADDQ(U32(4*g.mr), i0)
	ADDQ(U32(4*g.mr), sp)
	ADDQ(U32(4*g.mr), sp2)
	ADDQ(g.panelBytes, dp)
	JMP(LabelRef(name + "_gfast"))
	Label(name + "_gtail")
	CMPQ(i0, g.mB)
	JGE(LabelRef(name + "_gdone"))
	rp := GP64()
	MOVQ(g.srow, rp)
	for r := 0; r < rows; r++ {
		if r > 0 {
			ADDQ(g.lda, rp)
		}
		g.maskedPanel(Mem{Base: rp}, i0, dp, 4*r*g.ps, fmt.Sprintf("%s_g%d", name, r))
	}
	ADDQ(U32(4*g.mr), i0)
	ADDQ(g.panelBytes, dp)
	JMP(LabelRef(name + "_gtail"))
	Label(name + "_gdone")
	SUBQ(U8(rows), g.q)
	for r := 0; r < rows; r++ {
		ADDQ(g.lda, g.srow)
	}
	ADDQ(U32(4*rows*g.ps), g.drow)
	JMP(LabelRef(name + "_gloop"))
}

// lastRows packs the last rows, one at a time, with masked loads.
func (g *panels) lastRows() {
	name := g.name
	Label(name + "_qloop")
	TESTQ(g.q, g.q)
	JZ(LabelRef(name + "_done"))
	i0 := GP64()
	XORQ(i0, i0)
	dp := GP64()
	MOVQ(g.drow, dp)
	Label(name + "_tloop")
	CMPQ(i0, g.mB)
	JGE(LabelRef(name + "_tdone"))
	g.maskedPanel(Mem{Base: g.srow}, i0, dp, 0, name+"_t")
	ADDQ(U32(4*g.mr), i0)
	ADDQ(g.panelBytes, dp)
	JMP(LabelRef(name + "_tloop"))
	Label(name + "_tdone")
	DECQ(g.q)
	ADDQ(g.lda, g.srow)
	ADDQ(U32(4*g.ps), g.drow)
	JMP(LabelRef(name + "_qloop"))
}

// packRowsAtOnce is how many stored rows PackPanels packs together.
const packRowsAtOnce = 4

// transpose16x16 returns the columns of the 16×16 block whose rows are r
// (ZMM): out[q] holds column q. After lanes4x4 (as in transpose8x8) the
// last two stages move whole lanes (VSHUFF32X4), a 4×4 transpose of
// lanes across each group of four registers.
func transpose16x16(r []reg.VecVirtual) []reg.VecVirtual {
	u := lanes4x4(r, ZMM)
	out := make([]reg.VecVirtual, 16)
	for c := 0; c < 4; c++ {
		a := []reg.VecVirtual{u[c], u[4+c], u[8+c], u[12+c]} // rows 0-3, 4-7, 8-11, 12-15
		p := make([]reg.VecVirtual, 4)
		for i := range p {
			p[i] = ZMM()
		}
		VSHUFF32X4(U8(0x44), a[1], a[0], p[0]) // a0.0 a0.1 a1.0 a1.1
		VSHUFF32X4(U8(0xEE), a[1], a[0], p[1]) // a0.2 a0.3 a1.2 a1.3
		VSHUFF32X4(U8(0x44), a[3], a[2], p[2])
		VSHUFF32X4(U8(0xEE), a[3], a[2], p[3])
		for l := 0; l < 4; l++ {
			out[4*l+c] = ZMM()
		}
		VSHUFF32X4(U8(0x88), p[2], p[0], out[c])    // lane 0 of each
		VSHUFF32X4(U8(0xDD), p[2], p[0], out[4+c])  // lane 1
		VSHUFF32X4(U8(0x88), p[3], p[1], out[8+c])  // lane 2
		VSHUFF32X4(U8(0xDD), p[3], p[1], out[12+c]) // lane 3
	}
	return out
}
