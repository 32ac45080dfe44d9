package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/simdgpt/simdgpt/asm/gen/internal/x86"
)

// atMost8 emits r = min(r, 8), with label as the join point.
func atMost8(r reg.GPVirtual, label string) {
	CMPQ(r, U8(8))
	JLE(LabelRef(label))
	MOVQ(U32(8), r)
	Label(label)
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
	const name = packTName
	x86.Func(name, "func(dst *float32, src *float32, ldb int, w int, kc int, nr int)",
		name+" packs w rows of a row-major block (leading dimension ldb) transposed into",
		"a panel of kc rows of nr floats: dst[q*nr+j] = src[j*ldb+q] for j < w, q < kc,",
		"and 0 for w <= j < nr. nr is a positive multiple of 8 and w <= nr. Requires AVX2.",
	)
	dcol := x86.Arg("dst") // dst + j0 floats
	srow := x86.Arg("src") // src + j0 rows
	ldb := x86.Arg("ldb")
	SHLQ(U8(2), ldb)
	w := x86.Arg("w")
	kc := x86.Arg("kc")
	nrBytes := x86.Arg("nr")
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
	atMost8(wv, name+"_wvok")

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
	atMost8(qv, name+"_qvok")
	mask := YMM()
	{
		tbl := GP64()
		LEAQ(maskTable, tbl)
		negq := GP64()
		MOVQ(qv, negq)
		NEGQ(negq)
		VMOVUPS(Mem{Base: tbl, Index: negq, Scale: 4, Disp: 32}, mask)
	}
	r := loadRows8(name, srow, q0, wv, ldb, mask)
	storeCols8(name, transpose8x8(r), qv, d, nrBytes)
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

	zeroColumns(name, j0, dcol, d, q0, kc, nrBytes)
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// loadRows8 loads, under mask, the first wv (<= 8) rows of src from
// column q0 (row i at srow + q0 floats + i*ldb bytes); the other
// registers are zero.
func loadRows8(name string, srow, q0, wv, ldb reg.GPVirtual, mask reg.VecVirtual) []reg.VecVirtual {
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
	return r
}

// transpose8x8 returns the columns of the 8×8 block whose rows are r:
// out[q] holds column q.
func transpose8x8(r []reg.VecVirtual) []reg.VecVirtual {
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
	return out
}

// storeCols8 stores the first qv (1..8) of out down the panel from d, a
// row of nrBytes each.
func storeCols8(name string, out []reg.VecVirtual, qv, d, nrBytes reg.GPVirtual) {
	for q := range out {
		if q > 0 {
			CMPQ(qv, U32(q))
			JLE(LabelRef(name + "_stored"))
		}
		VMOVUPS(out[q], Mem{Base: d})
		ADDQ(nrBytes, d)
	}
	Label(name + "_stored")
}

// zeroColumns zeroes columns j0..nr-1 of the panel (whole blocks of 8
// past the last row of src; a partial block was zero-filled by its
// loads). Blocks start at multiples of 8 already.
func zeroColumns(name string, j0, dcol, d, q0, kc, nrBytes reg.GPVirtual) {
	Label(name + "_zero")
	nrCols := GP64()
	MOVQ(nrBytes, nrCols)
	SHRQ(U8(2), nrCols)
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
	x86.Func(name, "func(dst *float32, src *float32, ldb int, w int, kc int, nr int)",
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
		atMost8(wv, name+"_wvok")
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
	x86.Func(name, "func(dst *float32, src *float32, lda int, m int, kc int)",
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

// packTransposed512 generates PackBTransAVX512, packBTransAVX2's work
// (dst[q*nr+j] = src[j*ldb+q] for j < w, q < kc; 0 for w <= j < nr) for
// panels whose width nr is a multiple of 16, in ZMM registers: it reads
// 16 floats of up to 16 rows at a time (a whole cache line of each row
// when src is 64-byte aligned, where the AVX2 packer reads half lines),
// transposes the 16×16 block in registers and stores each of its 16 rows
// as one 64-byte vector (a whole line of the panel).
func packTransposed512(opmasks Mem) {
	const name = packT512Name
	x86.Func(name, "func(dst *float32, src *float32, ldb int, w int, kc int, nr int)",
		name+" packs w rows of a row-major block (leading dimension ldb) transposed into",
		"a panel of kc rows of nr floats: dst[q*nr+j] = src[j*ldb+q] for j < w, q < kc,",
		"and 0 for w <= j < nr. nr is a positive multiple of 16 and w <= nr. Requires AVX-512F.",
	)
	dcol := x86.Arg("dst") // dst + j0 floats
	srow := x86.Arg("src") // src + j0 rows
	ldb := x86.Arg("ldb")
	SHLQ(U8(2), ldb)
	w := x86.Arg("w")
	kc := x86.Arg("kc")
	nrBytes := x86.Arg("nr")
	SHLQ(U8(2), nrBytes)

	j0 := GP64()
	XORQ(j0, j0)
	Label(name + "_jloop")
	CMPQ(j0, w)
	JGE(LabelRef(name + "_zero"))
	wv := GP64() // rows of src in this block: min(w-j0, 16)
	MOVQ(w, wv)
	SUBQ(j0, wv)
	atMost(wv, 16, name+"_wvok")

	d := GP64() // walks down the panel
	MOVQ(dcol, d)
	q0 := GP64()
	XORQ(q0, q0)
	Label(name + "_qloop")
	CMPQ(q0, kc)
	JGE(LabelRef(name + "_qdone"))
	qv := GP64() // min(16, kc-q0)
	MOVQ(kc, qv)
	SUBQ(q0, qv)
	atMost(qv, 16, name+"_qvok")
	k := K()
	{
		tbl := GP64()
		LEAQ(opmasks, tbl)
		KMOVW(Mem{Base: tbl, Index: qv, Scale: 2}, k)
	}
	r := make([]reg.VecVirtual, 16)
	p := GP64()
	LEAQ(Mem{Base: srow, Index: q0, Scale: 4}, p)
	for i := range r {
		r[i] = ZMM()
		VXORPS(r[i], r[i], r[i])
	}
	for i := range r {
		CMPQ(wv, U32(i))
		JLE(LabelRef(name + "_loaded"))
		VMOVUPS_Z(Mem{Base: p}, k, r[i])
		if i < 15 {
			ADDQ(ldb, p)
		}
	}
	Label(name + "_loaded")
	out := transpose16x16(r)
	for q := range out {
		if q > 0 {
			CMPQ(qv, U32(q))
			JLE(LabelRef(name + "_stored"))
		}
		VMOVUPS(out[q], Mem{Base: d})
		ADDQ(nrBytes, d)
	}
	Label(name + "_stored")
	ADDQ(U8(16), q0)
	JMP(LabelRef(name + "_qloop"))

	Label(name + "_qdone")
	ADDQ(U8(16), j0)
	ADDQ(U8(64), dcol)
	{
		step := GP64()
		MOVQ(ldb, step)
		SHLQ(U8(4), step)
		ADDQ(step, srow)
	}
	JMP(LabelRef(name + "_jloop"))

	// Columns j0..nr-1 past the last row of src, in blocks of 16 (a
	// partial block was zero-filled by its loads).
	Label(name + "_zero")
	nrCols := GP64()
	MOVQ(nrBytes, nrCols)
	SHRQ(U8(2), nrCols)
	z := ZMM()
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
	ADDQ(U8(16), j0)
	ADDQ(U8(64), dcol)
	JMP(LabelRef(name + "_zloop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// atMost clamps the register v to at most n.
func atMost(v reg.GPVirtual, n int, label string) {
	CMPQ(v, U32(n))
	JLE(LabelRef(label))
	MOVQ(U32(n), v)
	Label(label)
}

// transpose16x16 returns the columns of the 16×16 block whose rows are r
// (ZMM): out[q] holds column q. Within each 128-bit lane the first two
// stages are transpose8x8's; the last two move whole lanes
// (VSHUFF32X4), a 4×4 transpose of lanes across each group of four.
func transpose16x16(r []reg.VecVirtual) []reg.VecVirtual {
	t := make([]reg.VecVirtual, 16)
	for i := 0; i < 16; i += 2 {
		t[i], t[i+1] = ZMM(), ZMM()
		VUNPCKLPS(r[i+1], r[i], t[i])
		VUNPCKHPS(r[i+1], r[i], t[i+1])
	}
	// u[h+c], lane L: rows h..h+3 at column 4L+c.
	u := make([]reg.VecVirtual, 16)
	for h := 0; h < 16; h += 4 {
		for x := 0; x < 2; x++ {
			u[h+2*x], u[h+2*x+1] = ZMM(), ZMM()
			VSHUFPS(U8(0x44), t[h+2+x], t[h+x], u[h+2*x])
			VSHUFPS(U8(0xEE), t[h+2+x], t[h+x], u[h+2*x+1])
		}
	}
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
