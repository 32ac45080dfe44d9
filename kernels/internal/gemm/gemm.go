// Package gemm drives the GEMM family of kernelset.Set (Gemm, Gemv,
// MaskedScores, GemmBias, GemmBiasGELU: Family) for every SIMD
// implementation: the GotoBLAS/BLIS-style GEMM driver, the skinny path
// for few rows (skinny.go), the masked-scores driver built on it
// (scores.go) and the fused epilogues (family.go). The ISA
// packages (kernels/amd64, kernels/arm64) supply register-blocked
// micro-kernels (assembly) as a Kernels table, which their generators
// write; the driver blocks the problem for the caches, packs B into
// contiguous panels, lays A out so the kernels can stream it, and spreads
// large problems over goroutines (internal/parallel).
//
// Loop nest for C (m×n) += op(A) (m×k) · op(B) (k×n):
//
//	for jc in n by nc:                  B block kc×nc lives in L2
//	  for pc in k by kc:                beta applies on the first pc only
//	    pack op(B)[pc:+kc, jc:+nc]      into panels of kc×NR
//	    for ic in m by mc:              A block mc×kc (packed when transposed) in L3
//	      pack op(A)[ic:+mc, pc:+kc]    into panels of MR×kc (or read in place)
//	        for ir in mc by MR:         A panel lives in L1
//	          for jr in nc by NR:       B panels stream from L2
//	            micro-kernel on one MR×NR tile
//	          epilogue (GemmEpilogue, last pc only) on the sliver's MR×nc of C
//
// The kernels broadcast A and load B as vectors, so the roles of A and B
// are those of B and A in BLIS's column-major description. kc, mc and nc
// come from a model of the caches (Model, in blocking.go).
//
// Every micro-kernel, on every architecture, has the same contract (see
// KernelFunc): it computes only the rows×cols corner of its tile and reads
// C only when beta is not 0, so the driver handles the edges of C the same
// way everywhere, without copying tiles.
package gemm

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/simdgpt/simdgpt/internal/parallel"
)

// MicroKernel is one register-blocked kernel of MR×NR; see asm/gen/gemm
// and asm/gen/neon.
type MicroKernel struct {
	MR, NR int
	// Strided reads A(i,p) at a[i*rsa+p*csa] (A in place); nil when the
	// ISA has no such kernel, and then the driver packs every A panel.
	// Packed reads a packed A panel of PanelStride floats per k step. Both
	// read k rows of NR floats of B at a stride of ldb floats: a packed
	// panel (ldb = NR) or B in place.
	Strided, Packed KernelFunc
	// Edge[r], for 0 < r < MR, is a packed kernel computing only the first
	// r' >= r rows of a packed panel, for a last row of tiles with r rows;
	// nil entries (or a nil Edge) fall back to Packed.
	Edge []KernelFunc
}

// KernelFunc is the signature of every micro-kernel: C = alpha*A*B +
// beta*C for one tile, reading all MR rows of A and k rows of NR floats of
// B (ldb floats apart), and reading or writing only the first rows×cols
// corner of C (leading dimension ldc; rows <= MR, cols <= NR); C is not
// read when beta is 0. rsa and csa are A's strides (unused by packed
// kernels).
type KernelFunc func(k int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, rows, cols int, alpha, beta float32)

// packedFor returns the packed kernel for a tile of the given rows.
func (mk *MicroKernel) packedFor(rows int) KernelFunc {
	if rows < len(mk.Edge) && mk.Edge[rows] != nil {
		return mk.Edge[rows]
	}
	return mk.Packed
}

// Kernels is what an ISA's generator provides to the driver: its
// micro-kernels and packing routines, and the layout constants they were
// generated for.
type Kernels struct {
	Wide   MicroKernel // used for full-width column panels
	Narrow MicroKernel // for the last panel when it fits; same MR, NR = Wide.NR/2 or less

	// PanelStride is the number of floats per k step of a packed A panel
	// (MR rounded up to the packers' granule), as the packed kernels read
	// it; at most MaxPanelStride.
	PanelStride int

	// PackT and PackN, if not nil, are assembly versions of packTrans and
	// packRows: dst[q*nr+j] = src[j*ldb+q] (PackT) or src[q*ldb+j] (PackN)
	// for j < w, q < kc, and 0 for w <= j < nr.
	PackT, PackN func(dst, src *float32, ldb, w, kc, nr int)

	// PackPanels, if not nil, packs a whole block of a transposed A (kc
	// rows of m floats) into ceil(m/MR) panels, reading it row by row.
	PackPanels func(dst, src *float32, lda, m, kc int)

	// PackBPanels, if not nil, packs kc rows of n floats of an
	// untransposed B (n a multiple of Wide.NR) into n/Wide.NR panels of
	// kc rows of Wide.NR floats, reading the rows front to back: the
	// layout packB makes, PackPanels' with MR = PanelStride = Wide.NR.
	PackBPanels func(dst, src *float32, ldb, n, kc int)

	// Dot, if not nil, computes one column of C for MR rows of an
	// untransposed A as dot products along k: c[i*ldc] =
	// alpha*dot(a[i*lda:][:k], b[:k]) + beta*c[i*ldc]. It replaces the
	// narrow kernel for a last panel of up to ColsMax columns.
	Dot func(k int, a *float32, lda int, b *float32, c *float32, ldc int, alpha, beta float32)

	// Cols, if not nil, computes up to ColsMax columns of a tile from a
	// packed A panel into dst (dst[j*PanelStride+i]); it takes a last
	// panel of that many columns when Dot cannot (A transposed, or a tile
	// at the bottom edge).
	Cols func(k int, a *float32, b *float32, cols int, dst *float32)

	// ColsMax is the widest last panel Dot and Cols take (at most
	// MaxColsMax); 0 when the ISA has neither.
	ColsMax int
}

// Bounds of the generated layout constants (the size of a per-goroutine
// buffer); New panics beyond them.
const (
	MaxPanelStride = 16
	MaxColsMax     = 4
)

// Driver is the GEMM of one SIMD implementation.
type Driver struct {
	Kernels
	name string // the implementation's name, as SIMDGPT_BLOCKING names it
	kc   int    // depth of a block
	mc   int    // rows of an A block
	nc   int    // columns of a B block

	// The L1 data cache, for AInPlace: bytes of one way, and ways.
	l1Way, l1Ways int

	// bRowsMax is the largest m for which B is read in place
	// (bInPlaceMaxRows).
	bRowsMax int

	// skinny are the kernels of Gemv and of the small-M products
	// (skinny.go); none until WithSkinny.
	skinny Skinny
	// smallM and smallMTransB are the largest m of op(A) the skinny
	// kernels take (SmallM).
	smallM, smallMTransB int
	// smallMGap: the skinny kernels also take the m between the stream
	// kernels' rows and the multiples of skinny.WideAxpys (SetSmallMGap).
	smallMGap bool
	// streamMin and streamCols choose and block the stream kernels
	// (SetStream).
	streamMin, streamCols int
}

// New returns the driver named name (the implementation's name, such as
// "avx512") for the kernels ks, blocked for the caches c by Model, unless
// SIMDGPT_BLOCKING overrides it (see EnvBlocking).
func New(name string, ks Kernels, c Caches) *Driver {
	w, n := ks.Wide, ks.Narrow
	switch {
	case w.Packed == nil || n.Packed == nil || (w.Strided == nil) != (n.Strided == nil):
		panic("gemm.New: a micro-kernel is missing")
	case w.MR != n.MR || n.NR > w.NR || w.MR <= 0 || n.NR <= 0:
		panic("gemm.New: the wide and narrow kernels must share MR")
	case ks.PanelStride < w.MR || ks.PanelStride > MaxPanelStride:
		panic("gemm.New: PanelStride out of range")
	case ks.ColsMax < 0 || ks.ColsMax > MaxColsMax:
		panic("gemm.New: ColsMax out of range")
	}
	l1 := c.L1D.withDefaults(32<<10, 8)
	g := &Driver{Kernels: ks, name: name, l1Way: l1.wayBytes(), l1Ways: l1.Ways, bRowsMax: bInPlaceMaxRows(w.MR)}
	b := Model(c, w.MR, w.NR, ks.PanelStride)
	if o, ok := envBlocking[""]; ok {
		b = b.override(o, w.MR, w.NR)
	}
	if o, ok := envBlocking[name]; ok {
		b = b.override(o, w.MR, w.NR)
	}
	g.SetBlocking(b)
	return g
}

// Blocking returns the driver's block sizes: depth kc, rows mc and
// columns nc.
func (g *Driver) Blocking() Blocking { return Blocking{KC: g.kc, MC: g.mc, NC: g.nc} }

// SetBlocking sets the driver's block sizes, for tests and tuning; it must
// not run while the driver computes a GEMM. It panics unless kc >= 1, mc
// is a positive multiple of MR and nc a positive multiple of NR.
func (g *Driver) SetBlocking(b Blocking) {
	mr, nr := g.Wide.MR, g.Wide.NR
	if b.KC < 1 || b.MC < mr || b.MC%mr != 0 || b.NC < nr || b.NC%nr != 0 {
		panic(fmt.Sprintf("gemm.SetBlocking: kc=%d mc=%d nc=%d: need kc >= 1, mc a positive multiple of MR=%d, nc of NR=%d", b.KC, b.MC, b.NC, mr, nr))
	}
	g.kc, g.mc, g.nc = b.KC, b.MC, b.NC
}

// gemmArgs is one GEMM call (or one goroutine's share of it).
type gemmArgs struct {
	transA, transB bool
	m, n, k        int
	alpha          float32
	a              []float32
	lda            int
	b              []float32
	ldb            int
	beta           float32
	c              []float32
	ldc            int
	epi            epilogue // GemmEpilogue's; none for Gemm

	// src, when not nil, packs op(B) in place of b (GemmSource), whose
	// column 0 is src's column srcJ0 (a parallel strip's first).
	src   BSource
	srcJ0 int

	// round, when not nil, rounds every element of op(A) and op(B) as it
	// is packed (GemmRounded): A and B are then never read in place.
	round RoundFunc
}

// RoundFunc sets dst[i] to a rounding of x[i] for i < len(dst) (x at
// least as long; dst may be x): the rounding of the operands of a
// GemmRounded, such as a kernel set's RoundBF16.
type RoundFunc func(dst, x []float32)

// BSource is a B operand that packs itself (GemmSource): weights stored
// in a form the micro-kernels cannot read, converted as they are packed.
type BSource interface {
	// PackB sets dst[q*nr+j] = op(B)(pc+q, j0+j) for q < kc and j < w,
	// and 0 for w <= j < nr: the panel the driver would pack from a
	// float32 B. The driver calls it from several goroutines at once
	// (for disjoint panels).
	PackB(dst []float32, pc, kc, j0, w, nr int)
}

// GroupedSource is what PackGrouped needs of a BSource over low-bit
// weights W (op(B) = Wᵀ, W's rows the columns of op(B)) stored in groups
// of 32 k steps: a kernel for blocks of GroupedCols columns × 16 k steps
// (half a group), and each element for the edges.
type GroupedSource interface {
	// PackBlocks sets dst[q*nr+c] = op(B)(pc+q, j+c) for c < GroupedCols
	// and q < 16·chunks; pc is a multiple of 16.
	PackBlocks(dst *float32, pc, chunks, j, nr int)
	// At returns op(B)(p, j).
	At(p, j int) float32
}

// PackGrouped is BSource.PackB for src: dst[q*nr+j] = op(B)(pc+q, j0+j)
// for q < kc and j < w, and 0 for w <= j < nr. When kernel is true and
// pc is a multiple of 16, src.PackBlocks packs the whole blocks of
// GroupedCols columns and 16 k steps; the columns past them, the k steps
// past them and the zero columns are done in Go through src.At.
func PackGrouped(src GroupedSource, kernel bool, dst []float32, pc, kc, j0, w, nr int) {
	const half = 16
	_ = dst[kc*nr-1]
	full := 0
	if kernel && pc%half == 0 {
		full = kc / half * half
	}
	jFull := 0
	if full > 0 {
		jFull = w / GroupedCols * GroupedCols
		for j := 0; j < jFull; j += GroupedCols {
			src.PackBlocks(&dst[j], pc, full/half, j0+j, nr)
		}
	}
	if full == kc && jFull == w && w == nr {
		return // the whole panel
	}
	for q := 0; q < kc; q++ {
		row := dst[q*nr : q*nr+nr]
		from := jFull
		if q >= full {
			from = 0
		}
		for j := from; j < w; j++ {
			row[j] = src.At(pc+q, j0+j)
		}
		clear(row[w:])
	}
}

// EpilogueFunc is the epilogue of a fused GEMM (GemmEpilogue): it
// finishes the m×n block c (leading dimension ldc) of C once the block's
// sums are final. vec is the part of a vector over C's columns from the
// block's first column on (vec[j] goes with column j of the block), and
// mat the block at the same rows and columns of a second matrix
// (element (i, j) at mat[i*ldmat+j]); either is nil when the fused GEMM
// has none. A kernel set's BiasGELU has this signature (vec the bias, mat
// the output), and package layernorm makes GemmBias's from a set's row
// kernels.
type EpilogueFunc func(m, n int, c []float32, ldc int, vec []float32, mat []float32, ldmat int)

// epilogue is what a fused GEMM does to C once a sliver of it is final:
// fn (nil for a plain Gemm) with the parts of vec and mat that go with the
// sliver.
type epilogue struct {
	fn    EpilogueFunc
	vec   []float32 // vec[j] goes with column j of C; may be nil
	mat   []float32 // element (i, j) at mat[i*ldmat+j], as C's at c[i*ldc+j]; may be nil
	ldmat int
}

// at returns the epilogue of the part of C from row i0 and column j0 on.
func (e epilogue) at(i0, j0 int) epilogue {
	if e.vec != nil {
		e.vec = e.vec[j0:]
	}
	if e.mat != nil {
		e.mat = e.mat[i0*e.ldmat+j0:]
	}
	return e
}

// run applies the epilogue to the m×n block of C at c (leading dimension
// ldc) whose first element is C's (i0, j0).
func (e *epilogue) run(m, n int, c []float32, ldc int, i0, j0 int) {
	f := e.at(i0, j0)
	e.fn(m, n, c, ldc, f.vec, f.mat, f.ldmat)
}

// gemmWork holds one goroutine's reusable buffers.
type gemmWork struct {
	bpack []float32                            // packed B panels
	apack []float32                            // copied A block
	bcol  []float32                            // up to ColsMax columns of op(B), each contiguous
	arows []float32                            // GemmRounded's MR rows of A for the dot kernel, rounded
	acc   []float32                            // the stream kernels' sums
	cout  [MaxColsMax * MaxPanelStride]float32 // the Cols kernel's results

	// For a parallel call: the strips.
	task gemmTask
	// For a parallel skinny product: its columns.
	skinny skinnyTask
}

// workPool hands out gemmWorks; it never frees them, so after warm-up no
// call allocates.
var workPool struct {
	sync.Mutex
	free []*gemmWork
}

func getWork() *gemmWork {
	workPool.Lock()
	defer workPool.Unlock()
	if n := len(workPool.free); n > 0 {
		w := workPool.free[n-1]
		workPool.free = workPool.free[:n-1]
		return w
	}
	return new(gemmWork)
}

func putWork(w *gemmWork) {
	workPool.Lock()
	workPool.free = append(workPool.free, w)
	workPool.Unlock()
}

// grow returns s with length n, reusing its storage when large enough.
func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n, n+n/4)
	}
	return s[:n]
}

// parallelMinFlops is the problem size (2*m*n*k) below which Gemm stays on
// the calling goroutine: smaller problems lose more to synchronisation
// than they gain (PERF.md, "Split threshold", has the shapes on either
// side of it).
const parallelMinFlops = 1 << 26

// Gemm is the kernel set's Gemm: arguments are already checked and m,
// n > 0 (see kernelset.Set).
func (g *Driver) Gemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	args := gemmArgs{transA: transA, transB: transB, m: m, n: n, k: k, alpha: alpha, a: a, lda: lda, b: b, ldb: ldb, beta: beta, c: c, ldc: ldc}
	if k == 0 || alpha == 0 {
		scaleC(m, n, beta, c, ldc)
		return
	}
	g.gemm(&args)
}

// GemmSource is Gemm with op(B) packed by src (see BSource) and A not
// transposed: arguments are already checked and m, n > 0. It takes the
// blocked path whatever m (the skinny kernels read B in place), with the
// same blocking, tiles and order of operations as Gemm, so its results
// are bitwise those of Gemm on the float32 op(B) src packs, when Gemm
// takes the blocked path too.
func (g *Driver) GemmSource(m, n, k int, alpha float32, a []float32, lda int, src BSource, beta float32, c []float32, ldc int) {
	if k == 0 || alpha == 0 {
		scaleC(m, n, beta, c, ldc)
		return
	}
	args := gemmArgs{m: m, n: n, k: k, alpha: alpha, a: a, lda: lda, beta: beta, c: c, ldc: ldc, src: src}
	g.gemm(&args)
}

// GemmEpilogue is Gemm (alpha 1, beta 0) into c fused with an epilogue,
// the kernel sets' GemmBiasGELU and GemmBias: arguments
// are already checked and m, n > 0 (see kernelset.Set). On the last block
// of k, as soon as the micro-kernels have finished a sliver of MR rows ×
// nc columns of C (the sliver is then still in L1 or L2), epi finishes it
// with the parts of vec (a vector over C's columns, or nil) and mat (an
// m×n matrix of leading dimension ldmat, or nil) that go with it; with
// k = 0, C is zeroed and epi runs once over the whole of it. The results
// are bitwise those of Gemm followed by epi over the whole matrix, as
// long as epi's arithmetic does not depend on where in C an element is
// (true of every set's BiasGELU and of package layernorm's epilogues).
func (g *Driver) GemmEpilogue(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, epi EpilogueFunc, vec, mat []float32, ldmat int) {
	e := epilogue{epi, vec, mat, ldmat}
	if k == 0 {
		scaleC(m, n, 0, c, ldc)
		e.run(m, n, c, ldc, 0, 0)
		return
	}
	args := gemmArgs{transA: transA, transB: transB, m: m, n: n, k: k, alpha: 1, a: a, lda: lda, b: b, ldb: ldb, c: c, ldc: ldc, epi: e}
	g.gemm(&args)
}

// GemmRounded is Gemm on op(A) and op(B) with each element replaced by
// its rounding by round, done as the operands are packed (into blocks the
// size of the caches) instead of into rounded copies of both matrices:
// the bfloat16 products of CPUs without a bfloat16 dot product
// (bf16compute.Rounded). The results are bitwise those of Gemm on the
// rounded matrices (the same blocking, tiles and sums; the dot kernel
// reads a rounded copy of its rows). It does nothing and returns false
// when k or alpha is 0 or when op(A) has so few rows that Gemm would run
// the skinny kernels, which read the operands where they are; the caller
// then rounds copies. Arguments are already checked and m, n > 0.
func (g *Driver) GemmRounded(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, round RoundFunc) bool {
	if k == 0 || alpha == 0 || g.SmallM(transB, m) {
		return false
	}
	args := gemmArgs{transA: transA, transB: transB, m: m, n: n, k: k, alpha: alpha, a: a, lda: lda, b: b, ldb: ldb, beta: beta, c: c, ldc: ldc, round: round}
	g.gemm(&args)
	return true
}

// GemmEpilogueRounded is GemmEpilogue with the operands rounded as
// GemmRounded rounds them; it returns false, doing nothing, where
// GemmRounded does (k = 0 included).
func (g *Driver) GemmEpilogueRounded(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, epi EpilogueFunc, vec, mat []float32, ldmat int, round RoundFunc) bool {
	if k == 0 || g.SmallM(transB, m) {
		return false
	}
	args := gemmArgs{transA: transA, transB: transB, m: m, n: n, k: k, alpha: 1, a: a, lda: lda, b: b, ldb: ldb, c: c, ldc: ldc, epi: epilogue{epi, vec, mat, ldmat}, round: round}
	g.gemm(&args)
	return true
}

// gemm runs one GEMM (k > 0, alpha != 0): on the skinny kernels when op(A)
// has few rows (SmallM), else blocked, on several goroutines when it is
// large enough.
func (g *Driver) gemm(p *gemmArgs) {
	if p.src == nil && g.SmallM(p.transB, p.m) {
		g.skinnyGemm(p)
		return
	}
	workers := parallel.Budget()
	if workers > 1 && 2*float64(p.m)*float64(p.n)*float64(p.k) >= parallelMinFlops {
		g.parallel(p, workers)
		return
	}
	w := getWork()
	g.run(w, p)
	putWork(w)
}

// scaleC sets C = beta*C (C = 0 when beta is 0, without reading C).
func scaleC(m, n int, beta float32, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
		} else if beta != 1 {
			for j := range row {
				row[j] *= beta
			}
		}
	}
}

// run computes one GEMM on the calling goroutine with the buffers of w.
func (g *Driver) run(w *gemmWork, p *gemmArgs) {
	m, n, k := p.m, p.n, p.k
	nr := g.Wide.NR
	for jc := 0; jc < n; jc += g.nc {
		nc := min(g.nc, n-jc)
		for pc := 0; pc < k; pc += g.kc {
			kc := min(g.kc, k-pc)
			beta := p.beta
			if pc > 0 {
				beta = 1
			}
			panels := (nc + nr - 1) / nr
			w.bpack = grow(w.bpack, panels*nr*kc)
			inPlace := g.bInPlace(p)
			if inPlace {
				// Only a last, partial panel is packed.
				if full := nc - nc%nr; full < nc {
					g.packB(w.bpack[full*kc:], p, pc, kc, jc+full, nc-full)
				}
			} else {
				g.packB(w.bpack, p, pc, kc, jc, nc)
				if p.round != nil {
					packed := w.bpack[:g.packedBLen(kc, nc)]
					p.round(packed, packed)
				}
			}
			for ic := 0; ic < m; ic += g.mc {
				mc := min(g.mc, m-ic)
				g.block(w, p, ic, mc, pc, kc, jc, nc, beta, inPlace)
			}
		}
	}
}

// block multiplies op(A)[ic:ic+mc, pc:pc+kc] by the packed B block into
// C[ic:ic+mc, jc:jc+nc].
func (g *Driver) block(w *gemmWork, p *gemmArgs, ic, mc, pc, kc, jc, nc int, beta float32, bInPlace bool) {
	mr := g.Wide.MR
	ps := g.PanelStride
	// How to read A. Packed: each MR-row sliver becomes a contiguous panel
	// of kc steps of ps floats (rows past mc zero), packed just before its
	// row of tiles so that it is in L1 for them, and the packed kernels
	// stream it with constant offsets. In place: the strided kernels read
	// A where it is, which saves the packing when there are too few column
	// panels to amortise it; they read all MR rows of a tile, so a tile
	// that ends past the last row of A is packed anyway. A transposed A is
	// always packed: read in place, each k step would touch a new line at a
	// stride of lda, and those lines collide in the L1 sets. An
	// untransposed A is read in place whatever the number of column panels
	// when its rows spread over the L1 sets (AInPlace), and packed beyond 8
	// panels otherwise.
	packAll := p.transA || g.Wide.Strided == nil || nc >= 8*g.Wide.NR && !g.AInPlace(p.lda) || p.round != nil
	// A transposed A is packed for the whole block at once when possible:
	// its stored rows are then read front to back, once.
	blockPacked := p.transA && g.PackPanels != nil
	if blockPacked {
		w.apack = grow(w.apack, (mc+mr-1)/mr*kc*ps)
		_ = p.a[(pc+kc-1)*p.lda+ic+mc-1] // the block is inside a
		g.PackPanels(&w.apack[0], &p.a[pc*p.lda+ic], p.lda, mc, kc)
		if p.round != nil {
			p.round(w.apack, w.apack)
		}
	}

	// A last panel of up to ColsMax columns goes to the dot kernel, one
	// column at a time (A rows must be contiguous), or to the cols kernel
	// (A packed): gather those columns of op(B).
	nr := g.Wide.NR
	dotFrom, dotCols := -1, 0
	if t := nc % nr; (g.Dot != nil && !p.transA || g.Cols != nil) && t >= 1 && t <= g.ColsMax {
		dotFrom, dotCols = nc-t, t
		w.bcol = grow(w.bcol, t*kc)
		for j := 0; j < t; j++ {
			col := w.bcol[j*kc : j*kc+kc]
			if p.src != nil {
				p.src.PackB(col, pc, kc, p.srcJ0+jc+dotFrom+j, 1, 1)
			} else if p.transB {
				copy(col, p.b[(jc+dotFrom+j)*p.ldb+pc:][:kc])
			} else {
				src := p.b[pc*p.ldb+jc+dotFrom+j:]
				for q := range col {
					col[q] = src[q*p.ldb]
				}
			}
		}
		if p.round != nil {
			p.round(w.bcol, w.bcol)
		}
	}

	// The A sliver (MR×kc) of a row of tiles stays in L1 while the B
	// panels (kc×NR each, the whole block in L2) stream past it.
	for ir := 0; ir < mc; ir += mr {
		rows := min(mr, mc-ir)
		var apanel *float32
		var rsa, csa int
		switch {
		case blockPacked:
			apanel = &w.apack[ir/mr*kc*ps]
		case packAll || ic+ir+mr > p.m:
			// Packed just before use, so the panel is in L1 for the
			// column panels that follow.
			w.apack = grow(w.apack, kc*ps)
			g.packA(w.apack, p, ic+ir, rows, pc, kc, ps)
			if p.round != nil {
				p.round(w.apack, w.apack)
			}
			apanel = &w.apack[0]
		default: // in place (A is not transposed: packAll covers that)
			apanel, rsa, csa = &p.a[(ic+ir)*p.lda+pc], p.lda, 1
		}
		for jr := 0; jr < nc; jr += nr {
			cols := min(nr, nc-jr)
			kern := &g.Wide
			if cols <= g.Narrow.NR {
				kern = &g.Narrow
			}
			if jr == dotFrom {
				if g.Dot != nil && !p.transA && rows == mr && ic+ir+mr <= p.m {
					arow, lda := &p.a[(ic+ir)*p.lda+pc], p.lda
					if p.round != nil {
						// The dot kernel reads rows of A: a rounded copy of
						// the sliver's.
						w.arows = grow(w.arows, mr*kc)
						for i := 0; i < mr; i++ {
							src := p.a[(ic+ir+i)*p.lda+pc:]
							p.round(w.arows[i*kc:(i+1)*kc], src[:kc])
						}
						arow, lda = &w.arows[0], kc
					}
					for j := 0; j < dotCols; j++ {
						g.Dot(kc, arow, lda, &w.bcol[j*kc], &p.c[(ic+ir)*p.ldc+jc+jr+j], p.ldc, p.alpha, beta)
					}
					continue
				}
				if g.Cols != nil && csa == 0 {
					g.Cols(kc, apanel, &w.bcol[0], dotCols, &w.cout[0])
					storeCols(&w.cout, ps, rows, dotCols, p.alpha, beta, p.c[(ic+ir)*p.ldc+jc+jr:], p.ldc)
					continue
				}
			}
			fn := kern.Strided
			if csa == 0 {
				fn = kern.packedFor(rows)
			}
			bp, ldb := &w.bpack[jr*kc], kern.NR
			if bInPlace && cols == nr {
				bp, ldb = &p.b[pc*p.ldb+jc+jr], p.ldb
			}
			fn(kc, apanel, rsa, csa, bp, ldb, &p.c[(ic+ir)*p.ldc+jc+jr], p.ldc, rows, cols, p.alpha, beta)
		}
		// The sliver's rows × nc of C are final after the last k block:
		// the epilogue takes them while they are in cache.
		if e := &p.epi; e.fn != nil && pc+kc == p.k {
			i0 := ic + ir
			e.run(rows, nc, p.c[i0*p.ldc+jc:], p.ldc, i0, jc)
		}
	}
}

// storeCols sets C[i, j] = alpha*out[j*ps+i] + beta*C[i, j] for i < rows,
// j < cols, not reading C when beta is 0.
func storeCols(out *[MaxColsMax * MaxPanelStride]float32, ps, rows, cols int, alpha, beta float32, c []float32, ldc int) {
	for i := 0; i < rows; i++ {
		row := c[i*ldc : i*ldc+cols]
		for j := range row {
			v := alpha * out[j*ps+i]
			if beta != 0 {
				v += beta * row[j]
			}
			row[j] = v
		}
	}
}

// AInPlace reports whether an untransposed A with rows lda floats apart
// is read where it is by the strided micro-kernels however many column
// panels the block has (with few panels it always is: packing a sliver
// would not pay off). Packing a sliver costs a pass over it; reading it in
// place instead costs nothing extra as long as the MR rows of a sliver,
// read together at every k step, do not crowd into the same L1 sets. Row
// starts lda·4 bytes apart fall on way/gcd(lda·4, way) distinct offsets
// within an L1 way (way = the bytes of one way), so that many rows share
// each set; A stays in place if that is at most W1 − 1 rows of the
// sliver per set, one way being left for the B panel streaming past.
// With a 32 KiB 8-way L1d, the 14×32 kernel's A stays in place for the
// training shapes (lda = 384, 1152, 1536: 2 to 8 offsets, at most 7 rows
// a set) and is packed for lda = 1024 or 2048 (one offset: all 14 rows in
// one set); the 6×16 kernel's 6 rows fit one set's ways even then.
// PERF.md ("A read in place") has the measurements behind the rule.
func (g *Driver) AInPlace(lda int) bool {
	if g.Wide.Strided == nil || g.l1Ways < 2 {
		return false
	}
	way := g.l1Way
	offsets := way / gcd(lda%(way/floatBytes)*floatBytes, way) // lda*4 could overflow
	return ceilDiv(g.Wide.MR, offsets) <= g.l1Ways-1
}

// gcd returns the greatest common divisor of a >= 0 and b > 0.
func gcd(a, b int) int {
	for a != 0 {
		a, b = b%a, a
	}
	return b
}

// bInPlace reports whether the kernels read the full-width panels of
// op(B) where B is, rather than from a packed copy. Packing B costs about
// as much as streaming it once and is shared by all the row panels of A,
// so it pays off when A has many (m above g.bRowsMax); reading B in place
// needs B not transposed (its rows are the panels' rows), rows that start
// on cache lines (a vector load across two lines costs double), and a row
// stride that is not a multiple of 4 KiB (such rows compete for the same
// few cache sets). See bInPlaceMaxRows for the bound on m, and PERF.md
// ("B read in place") for the measurements behind both.
func (g *Driver) bInPlace(p *gemmArgs) bool {
	return p.src == nil && p.round == nil && p.m <= g.bRowsMax && bLayoutInPlace(p.transB, p.b, p.ldb)
}

// BInPlace reports whether every driver reads the full-width panels of
// an m-row op(B) = b (leading dimension ldb) in place (see bInPlace); the
// tests use it to know which path they cover.
func BInPlace(transB bool, m int, b []float32, ldb int) bool {
	return m <= bInPlaceMinRows && bLayoutInPlace(transB, b, ldb)
}

// bLayoutInPlace reports whether B's layout lets the kernels read it in
// place: not transposed, rows on cache lines, a stride not a multiple of
// 4 KiB.
func bLayoutInPlace(transB bool, b []float32, ldb int) bool {
	return !transB && ldb%16 == 0 && ldb%1024 != 0 &&
		uintptr(unsafe.Pointer(unsafe.SliceData(b)))%64 == 0
}

// bInPlaceMaxRows returns the largest m for which a driver whose
// micro-kernel has mr rows reads B in place. In place, the B panel's rows
// are ldb floats apart, so its lines reach L1 one strided line at a time,
// which the prefetchers follow less well than a packed panel's
// consecutive lines; that costs little while the kernel spends long on
// each line (mr FMAs per B vector: 14 for AVX-512's 14×32) and a few
// percent on every row sliver when it spends little (6 for AVX2's 6×16),
// against a packing that costs the same whatever m. So kernels of 8 rows
// or more read B in place up to 512 rows of A, kernels of fewer rows up to
// bInPlaceMinRows (PERF.md, "B read in place").
func bInPlaceMaxRows(mr int) int {
	if mr >= 8 {
		return 512
	}
	return bInPlaceMinRows
}

// bInPlaceMinRows is the smallest bInPlaceMaxRows of any driver.
const bInPlaceMinRows = 64

// packA packs rows i0..i0+rows-1 and columns pc..pc+kc-1 of op(A) into a
// panel of kc steps of ps floats, zero padding rows up to ps.
func (g *Driver) packA(dst []float32, p *gemmArgs, i0, rows, pc, kc, ps int) {
	if p.transA {
		// op(A)(i, q) = a[(pc+q)*lda + i]: the panel's rows are contiguous in A.
		g.packRows(dst, p.a[pc*p.lda+i0:], p.lda, rows, kc, ps)
	} else {
		g.packTrans(dst, p.a[i0*p.lda+pc:], p.lda, rows, kc, ps)
	}
}

// packRows sets dst[q*nr+j] = src[q*ld+j] for j < w and 0 for w <= j < nr,
// for q < kc.
func (g *Driver) packRows(dst, src []float32, ld, w, kc, nr int) {
	if kc == 0 {
		return
	}
	_ = dst[kc*nr-1]
	if w > 0 {
		_ = src[(kc-1)*ld+w-1]
	}
	if g.PackN != nil {
		g.PackN(&dst[0], unsafe.SliceData(src), ld, w, kc, nr)
		return
	}
	for q := 0; q < kc; q++ {
		row := dst[q*nr : q*nr+nr]
		copy(row, src[q*ld:q*ld+w])
		clear(row[w:])
	}
}

// packTrans sets dst[q*nr+j] = src[j*ld+q] for j < w and 0 for w <= j < nr,
// for q < kc.
func (g *Driver) packTrans(dst, src []float32, ld, w, kc, nr int) {
	if kc == 0 {
		return
	}
	_ = dst[kc*nr-1]
	if w > 0 {
		_ = src[(w-1)*ld+kc-1]
	}
	if g.PackT != nil {
		g.PackT(&dst[0], unsafe.SliceData(src), ld, w, kc, nr)
		return
	}
	if w < nr {
		clear(dst[:kc*nr])
	}
	for j := 0; j < w; j++ {
		for q, v := range src[j*ld : j*ld+kc] {
			dst[q*nr+j] = v
		}
	}
}

// packB packs op(B)[pc:pc+kc, jc:jc+nc] into dst as consecutive panels of
// kc rows of nr floats. The last panel is narrower (narrow floats per row)
// when it fits, as the narrow micro-kernel reads it; it is zero padded to
// its width.
func (g *Driver) packB(dst []float32, p *gemmArgs, pc, kc, jc, nc int) {
	wide, narrow := g.Wide.NR, g.Narrow.NR
	start := 0
	if full := nc / wide * wide; full > 0 && p.src == nil && !p.transB && g.PackBPanels != nil {
		// The full panels row by row: a panel at a time would read B in
		// columns, a line per row at a stride of ldb, which the
		// prefetchers do not follow across pages.
		_ = dst[full*kc-1]
		_ = p.b[(pc+kc-1)*p.ldb+jc+full-1]
		g.PackBPanels(&dst[0], &p.b[pc*p.ldb+jc], p.ldb, full, kc)
		start = full
	}
	for j0 := start; j0 < nc; j0 += wide {
		w := min(wide, nc-j0)
		nr := wide
		if w <= narrow {
			nr = narrow
		}
		panel := dst[j0*kc : j0*kc+kc*nr]
		if p.src != nil {
			p.src.PackB(panel, pc, kc, p.srcJ0+jc+j0, w, nr)
		} else if p.transB {
			// op(B)(q, j) = b[(jc+j)*ldb + pc+q]
			g.packTrans(panel, p.b[(jc+j0)*p.ldb+pc:], p.ldb, w, kc, nr)
		} else {
			g.packRows(panel, p.b[pc*p.ldb+jc+j0:], p.ldb, w, kc, nr)
		}
	}
}

// packedBLen returns the floats packB writes for a kc×nc block of op(B):
// its full panels of Wide.NR columns and a last panel as wide as packB
// makes it.
func (g *Driver) packedBLen(kc, nc int) int {
	wide, narrow := g.Wide.NR, g.Narrow.NR
	full := nc / wide * wide
	if t := nc - full; t > 0 {
		nr := wide
		if t <= narrow {
			nr = narrow
		}
		return full*kc + nr*kc
	}
	return full * kc
}

// parallel splits C into one strip per worker (rows when m >= n, else
// columns, in whole micro-tiles) and runs them as the parts of one
// parallel.Run. The strips depend only on the shape and workers (from
// GOMAXPROCS), so the results are the same however many goroutines were
// free.
func (g *Driver) parallel(p *gemmArgs, workers int) {
	w := getWork()
	defer putWork(w)
	t := &w.task
	t.g = g
	parts := &t.parts
	np := 0
	if p.m >= p.n {
		step := splitStep(p.m, workers, g.Wide.MR)
		for i0 := 0; i0 < p.m; i0 += step {
			q := *p
			q.m = min(step, p.m-i0)
			if p.transA {
				q.a = p.a[i0:]
			} else {
				q.a = p.a[i0*p.lda:]
			}
			q.c = p.c[i0*p.ldc:]
			q.epi = p.epi.at(i0, 0)
			parts[np] = q
			np++
		}
	} else {
		step := splitStep(p.n, workers, g.Wide.NR)
		for j0 := 0; j0 < p.n; j0 += step {
			q := *p
			q.n = min(step, p.n-j0)
			switch {
			case p.src != nil:
				q.srcJ0 += j0
			case p.transB:
				q.b = p.b[j0*p.ldb:]
			default:
				q.b = p.b[j0:]
			}
			q.c = p.c[j0:]
			q.epi = p.epi.at(0, j0)
			parts[np] = q
			np++
		}
	}
	parallel.Run(t, np, np)
	// Drop the references to the caller's slices.
	for i := range parts[:np] {
		parts[i] = gemmArgs{}
	}
	t.g = nil
}

// gemmTask is the parallel.Task of one parallel GEMM: its parts are the
// strips of C.
type gemmTask struct {
	g     *Driver
	parts [maxParts]gemmArgs
}

// RunPart computes strip part with buffers from the pool.
func (t *gemmTask) RunPart(_, part int) {
	w := getWork()
	t.g.run(w, &t.parts[part])
	putWork(w)
}

// maxParts bounds the number of strips of one parallel GEMM.
const maxParts = 64

// splitStep returns a strip size, a multiple of unit, that cuts total
// into at most min(workers, maxParts) strips.
func splitStep(total, workers, unit int) int {
	workers = min(workers, maxParts)
	units := (total + unit - 1) / unit
	per := (units + workers - 1) / workers
	return per * unit
}
