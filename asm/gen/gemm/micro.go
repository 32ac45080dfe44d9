package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/simdgpt/simdgpt/asm/gen/internal/x86"
)

// micro is the state of one micro-kernel being emitted (see kernel).
type micro struct {
	s       *x86.ISA
	mr, nv  int // rows, and vectors per row
	nr      int // columns: nv*lanes
	packed  bool
	panelMR int
	name    string
	acc     [][]reg.VecVirtual // acc[i][v]: row i, vector v of the tile
	bv      []reg.VecVirtual   // the current row of B
	// B row p+u of the current step is at b + u*ldb (u < 4); bpf runs
	// unroll rows ahead of b for the prefetches.
	b, bpf, ldb, ldb3 reg.GPVirtual
	// aAddr(i, u) addresses A(i, p+u) for the current p; aNext(u) moves
	// the A pointers on by u steps of p.
	aAddr func(i, u int) Mem
	aNext func(u int)
}

// kernel emits one micro-kernel. With packed false it reads A(i, p) at
// a[i*rsa + p*csa] (any layout); with packed true it reads a packed panel
// made for panelMR rows, A(i, p) at a[p*panelStride(panelMR) + i], with
// constant displacements and one pointer increment per unrolled iteration
// (rsa and csa are ignored). panelMR > mr gives an edge kernel, which
// computes the first mr rows of a wider panel.
func kernel(s *x86.ISA, mr, nv int, maskTable Mem, packed bool, panelMR int) {
	g := &micro{s: s, mr: mr, nv: nv, nr: nv * s.Lanes, packed: packed, panelMR: panelMR}
	g.name = kernelName(s, mr, g.nr, packed, panelMR)
	g.header()
	g.zeroAcc()
	k := x86.Arg("k")
	g.setupB()
	if packed {
		g.setupPackedA()
	} else {
		g.setupStridedA()
	}
	g.prefetchC()
	g.kLoop(k)
	g.storeTile(maskTable)
	Label(g.name + "_done")
	VZEROUPPER()
	RET()
}

func (g *micro) header() {
	layout := fmt.Sprintf("A(i,p) at a[i*rsa+p*csa] for all %d rows and p < k", g.mr)
	if g.packed {
		layout = fmt.Sprintf("A a packed panel, A(i,p) at a[p*%d+i] for all %d rows and p < k (rsa, csa unused)", panelStride(g.panelMR), g.mr)
	}
	x86.Func(g.name, "gemmKernel",
		fmt.Sprintf("%s computes one %d×%d tile, C = alpha*A*B + beta*C, with", g.name, g.mr, g.nr),
		layout+",",
		fmt.Sprintf("B k rows of %d floats at a stride of ldb floats (all %d read), and only the first rows×cols corner of C", g.nr, g.nr),
		fmt.Sprintf("(leading dimension ldc) read or written; C is not read when beta is ±0. Requires %s.", g.s.Req),
	)
}

// zeroAcc allocates and zeroes the accumulators.
func (g *micro) zeroAcc() {
	g.acc = make([][]reg.VecVirtual, g.mr)
	for i := range g.acc {
		g.acc[i] = make([]reg.VecVirtual, g.nv)
		for v := range g.acc[i] {
			g.acc[i][v] = g.s.Vec()
			VXORPS(g.acc[i][v], g.acc[i][v], g.acc[i][v])
		}
	}
}

// setupB loads b and ldb (as bytes), and sets 3*ldb and bpf.
func (g *micro) setupB() {
	g.b = x86.Arg("b")
	g.ldb = x86.Arg("ldb")
	SHLQ(U8(2), g.ldb)
	g.ldb3 = GP64()
	LEAQ(Mem{Base: g.ldb, Index: g.ldb, Scale: 2}, g.ldb3)
	g.bpf = GP64()
	LEAQ(Mem{Base: g.b, Index: g.ldb, Scale: 4}, g.bpf)
}

// bRow addresses row u (< 4) of B past base, at byte disp of the row.
func (g *micro) bRow(base reg.GPVirtual, u, disp int) Mem {
	switch u {
	case 0:
		return Mem{Base: base, Disp: disp}
	case 1:
		return Mem{Base: base, Index: g.ldb, Scale: 1, Disp: disp}
	case 2:
		return Mem{Base: base, Index: g.ldb, Scale: 2, Disp: disp}
	}
	return Mem{Base: base, Index: g.ldb3, Scale: 1, Disp: disp}
}

// setupPackedA addresses a packed panel: constant displacements from one
// pointer.
func (g *micro) setupPackedA() {
	a := x86.Arg("a")
	ps := panelStride(g.panelMR)
	g.aAddr = func(i, u int) Mem { return Mem{Base: a, Disp: 4 * (u*ps + i)} }
	g.aNext = func(u int) { ADDQ(U32(4*u*ps), a) }
}

// setupStridedA addresses A(i, p) at a[i*rsa + p*csa]. This layout has no
// constant displacement per step: the row bases move after every step.
func (g *micro) setupStridedA() {
	bases, rs, rs3 := rowBases(g.mr, "a", "rsa")
	cs := x86.Arg("csa")
	SHLQ(U8(2), cs)
	g.aAddr = func(i, u int) Mem { return rowAddr(bases, rs, rs3, i) }
	g.aNext = func(int) {
		for _, base := range bases {
			ADDQ(cs, base)
		}
	}
}

// prefetchC prefetches the rows of the C tile so that they arrive during
// the k loop instead of stalling the stores at its end.
func (g *micro) prefetchC() {
	p := x86.Arg("c")
	ldc := x86.Arg("ldc")
	SHLQ(U8(2), ldc)
	rows := x86.Arg("rows")
	for i := 0; i < g.mr; i++ {
		if i > 0 {
			CMPQ(rows, U32(i))
			JLE(LabelRef(g.name + "_prefetched"))
			ADDQ(ldc, p)
		}
		for off := 0; off < 4*g.nr; off += 64 {
			PREFETCHT0(Mem{Base: p, Disp: off})
		}
	}
	Label(g.name + "_prefetched")
}

// step emits one k step, row u of the current B rows: nv loads of B, and
// for each row of A one broadcast and nv FMAs.
func (g *micro) step(u int) {
	for v := 0; v < g.nv; v++ {
		VMOVUPS(g.bRow(g.b, u, 4*v*g.s.Lanes), g.bv[v])
	}
	for i := 0; i < g.mr; i++ {
		t := g.s.Vec()
		VBROADCASTSS(g.aAddr(i, u), t)
		for v := 0; v < g.nv; v++ {
			VFMADD231PS(t, g.bv[v], g.acc[i][v])
		}
	}
	if !g.packed {
		g.aNext(1)
	}
}

// kLoop emits the k loop: unroll steps an iteration (with prefetches of
// B's rows ahead), then the k%unroll steps left.
func (g *micro) kLoop(k reg.GPVirtual) {
	name := g.name
	g.bv = make([]reg.VecVirtual, g.nv)
	for v := range g.bv {
		g.bv[v] = g.s.Vec()
	}
	n4 := GP64()
	MOVQ(k, n4)
	SHRQ(U8(2), n4)
	ANDQ(U8(unroll-1), k)
	TESTQ(n4, n4)
	JZ(LabelRef(name + "_tail"))
	Label(name + "_loop")
	for u := 0; u < unroll; u++ {
		for off := 0; off < 4*g.nr; off += 64 {
			PREFETCHT0(g.bRow(g.bpf, u, off))
		}
		g.step(u)
	}
	if g.packed {
		g.aNext(unroll)
	}
	LEAQ(Mem{Base: g.b, Index: g.ldb, Scale: 4}, g.b)
	LEAQ(Mem{Base: g.bpf, Index: g.ldb, Scale: 4}, g.bpf)
	DECQ(n4)
	JNZ(LabelRef(name + "_loop"))

	Label(name + "_tail")
	TESTQ(k, k)
	JZ(LabelRef(name + "_store"))
	Label(name + "_tailloop")
	g.step(0)
	if g.packed {
		g.aNext(1)
	}
	ADDQ(g.ldb, g.b)
	DECQ(k)
	JNZ(LabelRef(name + "_tailloop"))
}

// mask is the edge mask of one vector column of a tile: an opmask
// register for AVX-512, a lane-mask vector for AVX2.
type mask struct {
	k reg.Register
	y reg.VecVirtual
	// addr, when y is nil, points at the lane mask in the table: with
	// three or more vectors of AVX2 columns the masks do not fit in the
	// registers beside the accumulators, and each use loads its own.
	addr reg.GPVirtual
}

// laneMask returns the AVX2 lane mask of vector column v.
func (g *micro) laneMask(t *tileC, v int) reg.VecVirtual {
	m := t.masks[v]
	if m.y != nil {
		return m.y
	}
	y := g.s.Vec()
	VMOVUPS(Mem{Base: m.addr}, y)
	return y
}

// tileC holds the registers of the stores into C.
type tileC struct {
	c, ldc, rows reg.GPVirtual
	masks        []mask
}

// storeTile scales the accumulators by alpha and stores them into C
// through the edge masks; AVX2 first takes a plain path for full tiles,
// as VMASKMOVPS stores are slower than plain ones.
func (g *micro) storeTile(maskTable Mem) {
	Label(g.name + "_store")
	alpha := g.s.Vec()
	VBROADCASTSS(NewParamAddr("alpha", 80), alpha)
	for i := range g.acc {
		for v := range g.acc[i] {
			VMULPS(alpha, g.acc[i][v], g.acc[i][v])
		}
	}
	t := &tileC{c: x86.Arg("c"), ldc: x86.Arg("ldc")}
	SHLQ(U8(2), t.ldc)
	t.rows = x86.Arg("rows")
	cols := x86.Arg("cols")
	t.masks = g.edgeMasks(cols, maskTable)
	if g.s.Lanes == 8 {
		CMPQ(cols, U32(g.nr))
		JNE(LabelRef(g.name + "_edge"))
		g.stores(t, g.name+"_full", false)
		Label(g.name + "_edge")
	}
	g.stores(t, g.name+"_masked", true)
}

// edgeMasks returns the masks of the nv vectors of a row: the first w_v =
// clamp(cols - v*lanes, 0, lanes) lanes of vector v.
func (g *micro) edgeMasks(cols reg.GPVirtual, maskTable Mem) []mask {
	s := g.s
	masks := make([]mask, g.nv)
	for v := 0; v < g.nv; v++ {
		w := GP64()
		MOVQ(cols, w)
		if v > 0 {
			SUBQ(U32(v*s.Lanes), w)
			zero := GP64()
			XORQ(zero, zero)
			CMPQ(w, zero)
			CMOVQLT(zero, w)
		}
		lim := GP64()
		MOVQ(U32(s.Lanes), lim)
		CMPQ(w, lim)
		CMOVQGT(lim, w)
		tbl := GP64()
		LEAQ(maskTable, tbl)
		if s.Is512() {
			masks[v].k = K()
			KMOVW(Mem{Base: tbl, Index: w, Scale: 2}, masks[v].k)
		} else {
			// First w lanes: the 8 words at index 8-w.
			NEGQ(w)
			if g.nv <= 2 {
				masks[v].y = s.Vec()
				VMOVUPS(Mem{Base: tbl, Index: w, Scale: 4, Disp: 32}, masks[v].y)
			} else {
				masks[v].addr = GP64()
				LEAQ(Mem{Base: tbl, Index: w, Scale: 4, Disp: 32}, masks[v].addr)
			}
		}
	}
	return masks
}

// stores emits the stores of the tile, masked or not: with beta*C folded
// in when beta is not ±0, and without reading C when it is.
func (g *micro) stores(t *tileC, prefix string, masked bool) {
	s := g.s
	betaBits := GP32()
	MOVL(NewParamAddr("beta", 84), betaBits)
	ANDL(U32(0x7fffffff), betaBits)
	JZ(LabelRef(prefix + "_beta0"))
	beta := s.Vec()
	VBROADCASTSS(NewParamAddr("beta", 84), beta)
	g.storeRows(t, prefix+"_betaN", masked, func(i, v int, m Mem) {
		if !masked {
			VFMADD231PS(m, beta, g.acc[i][v])
			return
		}
		c := s.Vec()
		if s.Is512() {
			VMOVUPS_Z(m, t.masks[v].k, c)
		} else {
			VMASKMOVPS(m, g.laneMask(t, v), c)
		}
		VFMADD231PS(c, beta, g.acc[i][v])
	})
	JMP(LabelRef(g.name + "_done"))
	Label(prefix + "_beta0")
	g.storeRows(t, prefix+"_beta0", masked, nil)
	JMP(LabelRef(g.name + "_done"))
}

// storeRows writes the accumulators of rows i < rows to C through the edge
// masks, first calling update (if not nil) to fold in beta*C.
func (g *micro) storeRows(t *tileC, prefix string, masked bool, update func(i, v int, m Mem)) {
	p := GP64()
	MOVQ(t.c, p)
	for i := range g.acc {
		if i > 0 {
			CMPQ(t.rows, U32(i))
			JLE(LabelRef(prefix + "_end"))
			ADDQ(t.ldc, p)
		}
		for v := range g.acc[i] {
			m := Mem{Base: p, Disp: 4 * v * g.s.Lanes}
			if update != nil {
				update(i, v, m)
			}
			switch {
			case !masked:
				VMOVUPS(g.acc[i][v], m)
			case g.s.Is512():
				VMOVUPS(g.acc[i][v], t.masks[v].k, m)
			default:
				VMASKMOVPS(g.acc[i][v], g.laneMask(t, v), m)
			}
		}
	}
	Label(prefix + "_end")
}
