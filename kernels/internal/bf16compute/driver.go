// Package bf16compute is the driver of the bfloat16 matrix products
// (kernels.GemmBF16Compute and its family): operands rounded to bfloat16,
// products summed in float32.
//
// Driver runs them on a bfloat16 dot-product micro-kernel (VDPBF16PS on
// AVX512_BF16, BFDOT on Arm's FEAT_BF16). Both operands are packed once
// per call: op(A) into words of two bfloat16 k steps, row by row (A(i, q)
// at a[i*rsa + q*csa], csa = 1); op(B) into panels of NR columns, each
// panel kp rows of NR words (B(q, j) at panel[q*NR + j]), so that one
// vector of a panel row holds the pair q of 16 columns (AVX-512) or 4
// (NEON). Then, as the float32 driver (package blocked) does, the
// products run in blocks of kc pairs × nc columns (the B block in L2), a
// sliver of MR rows of A in L1 streaming B panels past it:
//
//	for jc in n by nc:
//	  for pc in kp by kc:               beta applies on the first pc only
//	    for ir in m by MR:              A sliver (MR×kc words) in L1
//	      for jr in nc by NR:           B panels stream from L2
//	        micro-kernel on one MR×NR tile
//	      epilogue (last pc only) on the sliver's MR×nc of C
//
// On one goroutine, with a micro-kernel that prefetches (MicroPrefetch)
// and blocks of at most fusedMaxKC pairs, the packing moves inside these
// loops: B's panels are packed by the
// first sliver of each block just before its tile on them, A's slivers
// on the first block of columns just before their first tile, and each
// tile prefetches what is packed next (the next panel's source on the
// first sliver, else the next sliver's rows of A), so that the trip from
// memory overlaps the arithmetic instead of preceding it.
//
// Large products are split by rows of C (whole slivers), or by column
// panels when C has few rows, between goroutines after the packing; each
// element is computed by the same sequence of operations in any part, so
// the results do not depend on GOMAXPROCS.
//
// Rounded is the driver of CPUs without a bfloat16 dot product: it rounds
// the operands to bfloat16 values held in float32 and runs the float32
// GEMM on them; each product of two bfloat16 is exact in float32, so the
// result is the float32 sum of the exact products, within the same
// contract.
package bf16compute

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/simdgpt/simdgpt/internal/parallel"
	"github.com/simdgpt/simdgpt/kernels/internal/gemm"
	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

// Kernels is what an ISA provides to Driver. The packers are optional:
// New puts Go ones (of the same contracts) in place of those left nil.
type Kernels struct {
	// MR and NR are the micro-kernel's tile, rows × columns. NR is a
	// multiple of 4; the panels of B are made 16 columns at a time by
	// PackPairs and Transpose when NR is a multiple of 16, column by
	// column in Go otherwise.
	MR, NR int
	// Micro sets the full MR×NR tile C = alpha*S + beta*C (leading
	// dimension ldc; C not read when beta is ±0) for S[i][j] the float32
	// sum over q < kp (>= 1) of the products of the bfloat16 pairs A(i, q)
	// = a[i*rsa + q*csa] and B(q, j) = b[q*NR + j], computed as
	// float32(alpha*S) + float32(beta*C). The driver passes csa = 1 (the
	// pairs of a row of A contiguous), and a kernel may rely on it; it
	// reads no word of A past q = kp-1.
	Micro func(kp int, a *uint32, rsa, csa int, b *uint32, c *float32, ldc int, alpha, beta float32)
	// MicroPrefetch, optional, is Micro that also prefetches, at step q,
	// the NR floats from pf + 2q*pfs and from pf + (2q+1)*pfs (the pair q
	// of the next B panel's source). With it, a one-part product with
	// blocks of at most fusedMaxKC pairs packs A's slivers and (B not
	// transposed) B's panels inside the loops, from lines the tile before
	// fetched (see run).
	MicroPrefetch func(kp int, a *uint32, rsa, csa int, b *uint32, c *float32, ldc int, alpha, beta float32, pf *float32, pfs int)
	// PackRows and PackRowsHalves write, for r < rows and q <
	// 16*blocks, dst[r*ldd+q] = the pair (x[2q], x[2q+1]) (PackRows) or
	// (x[32g+d], x[32g+16+d]) for q = 16g+d (PackRowsHalves) of x =
	// src[r*lds:] rounded to bfloat16, the first in the low half.
	PackRows, PackRowsHalves func(dst *uint32, src *float32, lds, rows, blocks, ldd int)
	// PackPairs writes, for q < kp and j < 16*chunks, dst[q*ldd+j] = the
	// pair (src[2q*lds+j], src[(2q+1)*lds+j]) rounded to bfloat16.
	PackPairs func(dst *uint32, src *float32, lds, kp, chunks, ldd int)
	// Transpose sets dst[q*ldd+r] = src[r*lds+q] for r < 16 and q <
	// 16*blocks: 16 rows of pairs along k into 16 columns of a B panel
	// (ldd = NR), or 16 pairs of a transposed A's rows into its rows of
	// pairs.
	Transpose func(dst, src *uint32, lds, ldd, blocks int)
}

// Driver is the bfloat16 GEMM of one ISA.
type Driver struct {
	Kernels
	kc, mc, nc int // block sizes: kc in pairs, nc a multiple of NR
}

// New returns the driver of ks blocked for the caches c, from
// gemm.Model's sizes for the float32 kernel of the same tile (a pair
// of bfloat16 takes the room of one float32): nc half the model's, and
// kc at least twice its, and as many pairs as make one B panel (kc·NR
// words) an eighth of L2 (1024 pairs in Zen 5's 1 MiB). C's tile is read
// and written once per block of k, for a large C a pass over all of it
// in memory, and that traffic costs more than the B block's leaving L2
// (1.7 MB at 1024 pairs × 416 columns; its panels stream in order, one
// at a time, beside an A sliver of 57 KB): on Zen 5, 2048³ in one block
// of 1024 pairs ran 3-8% faster than in three of 342, and at the model's
// kc C's traffic cost 10-15% at 1024³ and 2048³ (PERF.md, "bfloat16
// products").
func New(ks Kernels, c gemm.Caches) *Driver {
	if ks.Micro == nil || ks.MR <= 0 || ks.NR <= 0 || ks.NR%4 != 0 {
		panic(fmt.Sprintf("bf16compute.New: no micro-kernel, or a tile of %d×%d (NR a multiple of 4)", ks.MR, ks.NR))
	}
	if ks.PackRows == nil {
		ks.PackRows = goPackRows
	}
	if ks.PackRowsHalves == nil {
		ks.PackRowsHalves = goPackRowsHalves
	}
	if ks.PackPairs == nil {
		ks.PackPairs = goPackPairs
	}
	if ks.Transpose == nil {
		ks.Transpose = goTranspose
	}
	b := gemm.Model(c, ks.MR, ks.NR, ks.MR)
	l2 := c.L2.Size
	if l2 <= 0 {
		l2 = 1 << 20
	}
	kc := max(2*b.KC, l2/8/(4*ks.NR))
	return &Driver{Kernels: ks, kc: kc, mc: b.MC, nc: max(ks.NR, b.NC/2/ks.NR*ks.NR)}
}

// SetBlocking sets the block sizes (kc in pairs, nc rounded down to a
// multiple of NR, at least NR), for tests; it must not run while the
// driver computes a product.
func (d *Driver) SetBlocking(kc, nc int) {
	d.kc = max(1, kc)
	d.nc = max(d.NR, nc/d.NR*d.NR)
}

// Epilogue is what a fused product does to a block of C once its sums
// are final (see gemm.EpilogueFunc), with its vector and matrix.
type Epilogue struct {
	Fn    gemm.EpilogueFunc // nil for none
	Vec   []float32
	Mat   []float32
	LdMat int
}

func (e *Epilogue) run(m, n int, c []float32, ldc, i0, j0 int) {
	var vec, mat []float32
	if e.Vec != nil {
		vec = e.Vec[j0:]
	}
	if e.Mat != nil {
		mat = e.Mat[i0*e.LdMat+j0:]
	}
	e.Fn(m, n, c, ldc, vec, mat, e.LdMat)
}

// work holds one call's packed operands and scratch.
type work struct {
	a, b  []uint32
	t     []uint32    // a transposed B's rows of pairs
	tiles [][]float32 // one MR×NR scratch tile per worker
	task  task
}

// pool hands out works; it never frees them, so that after warm-up no
// call allocates.
var pool struct {
	sync.Mutex
	free []*work
}

func getWork() *work {
	pool.Lock()
	defer pool.Unlock()
	if n := len(pool.free); n > 0 {
		w := pool.free[n-1]
		pool.free = pool.free[:n-1]
		return w
	}
	return new(work)
}

func putWork(w *work) {
	pool.Lock()
	pool.free = append(pool.free, w)
	pool.Unlock()
}

// grow returns s with room for n words from a 64-byte boundary.
func grow(s []uint32, n int) []uint32 {
	if cap(s) < n+16 {
		s = make([]uint32, n+16, n+16+n/4)
	}
	s = s[:cap(s)]
	off := int(-uintptr(unsafe.Pointer(&s[0])) & 63 / 4)
	return s[off : off+n]
}

// Gemm computes C = alpha*op(A)*op(B) + beta*C with op(A) and op(B)
// rounded to bfloat16; arguments are checked and m, n > 0.
func (d *Driver) Gemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if k == 0 || alpha == 0 {
		scaleC(m, n, beta, c, ldc)
		return
	}
	d.gemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, nil, beta, c, ldc, Epilogue{})
}

// GemmEpilogue is Gemm with alpha 1 and beta 0, and e run on each sliver
// of C once its sums are final (on the whole of C, zeroed, when k is 0):
// the results are bitwise those of Gemm followed by e on all of C when
// e's arithmetic does not depend on where in C an element is.
func (d *Driver) GemmEpilogue(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, e Epilogue) {
	if k == 0 {
		scaleC(m, n, 0, c, ldc)
		e.run(m, n, c, ldc, 0, 0)
		return
	}
	d.gemm(transA, transB, m, n, k, 1, a, lda, b, ldb, nil, 0, c, ldc, e)
}

// GemmWeights computes C = alpha*A·Wᵀ + beta*C with A rounded to
// bfloat16, reading W's bfloat16 words as they are; arguments are
// checked and m, w.N > 0.
func (d *Driver) GemmWeights(m int, alpha float32, a []float32, lda int, w *lowbit.BF16, beta float32, c []float32, ldc int) {
	if w.K == 0 || alpha == 0 {
		scaleC(m, w.N, beta, c, ldc)
		return
	}
	d.gemm(false, true, m, w.N, w.K, alpha, a, lda, nil, 0, w, beta, c, ldc, Epilogue{})
}

// scaleC sets C = beta*C, not reading C when beta is 0.
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

// fusedMaxKC is the longest block of k (pairs) whose operands are packed
// inside the loops. A tile prefetches 256 bytes a pair; against packing
// before the loops, on Zen 5 in one-process comparisons, 512³ and
// 2048×1152×384 (256 and 192 pairs) ran 1.02-1.04× and 1.017-1.020×
// (three each), 1024³ and 2048³ (512 and 1024 pairs, 128 and 256 KiB
// prefetched a tile) 0.99-1.01× and 0.98-1.00×
// (perf/gemm-bf16-tiles-zen5-2026-11-27).
const fusedMaxKC = 256

// parallelMinFlops is the size (2mnk) below which a product stays on the
// calling goroutine, as the float32 driver's (a variable for the tests,
// which split small products too).
var parallelMinFlops float64 = 1 << 26

// gemm packs the operands (B from w when w is not nil) and runs the
// blocked loops, k > 0 and alpha != 0.
func (d *Driver) gemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, w *lowbit.BF16, beta float32, c []float32, ldc int, e Epilogue) {
	mr, nr := d.MR, d.NR
	kp := (k + 1) / 2
	if w != nil {
		kp = w.Stride() / 2
	}
	wk := getWork()
	defer putWork(wk)
	workers := parallel.Budget()
	if 2*float64(m)*float64(n)*float64(k) < parallelMinFlops {
		workers = 1
	}
	// One part with MicroPrefetch packs A sliver by sliver and B panel
	// by panel inside the loops (see run) when its blocks of k are short
	// enough (fusedMaxKC).
	blocks := (kp + d.kc - 1) / d.kc
	fused := d.MicroPrefetch != nil && workers == 1 && (kp+blocks-1)/blocks <= fusedMaxKC

	// A: rows of words, astride apart (rsa = astride, csa = 1). Every
	// sliver of MR rows is read whole, so the rows are padded to a
	// multiple of MR. A transposed A (k×m) is first paired row by row
	// (its pairs of rows, m wide), then transposed into rows: read as
	// pairs of rows in place, the kernel takes a new line at every step
	// of k, which measured about 7% slower (PERF.md, "bfloat16
	// products").
	mpad := (m + mr - 1) / mr * mr
	astride := rowStride(kp)
	rsa, csa := astride, 1
	if transA {
		mt := (mpad + 15) &^ 15
		wk.t = grow(wk.t, kp*mt)
		d.packPairs(wk.t, a, lda, k, m, mt)
		wk.a = grow(wk.a, mt*astride)
		d.transposeRows(wk.a, wk.t, mt, kp, astride)
	} else {
		wk.a = grow(wk.a, mpad*astride)
		if fused {
			// Packed sliver by sliver in run.
		} else if w != nil {
			d.packRows(wk.a, a, lda, m, k, astride, true)
		} else {
			d.packRows(wk.a, a, lda, m, k, astride, false)
		}
	}

	// B: panels of NR columns, kp rows each.
	panels := (n + nr - 1) / nr
	pstride := kp * nr
	wk.b = grow(wk.b, panels*pstride)
	fuseB := fused && w == nil && !transB
	switch {
	case fuseB:
		// Packed panel by panel in run.
	case w != nil:
		// W's rows are pairs along k already (by halves of its groups).
		words := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(w.Data))), len(w.Data)/2)
		d.transposePanels(wk.b, words, w.Stride()/2, n, kp)
	case transB:
		// B's rows run along k: convert them to rows of pairs, then
		// transpose the words into panels.
		wk.t = grow(wk.t, n*kp)
		d.packRows(wk.t, b, ldb, n, k, kp, false)
		d.transposePanels(wk.b, wk.t, kp, n, kp)
	default:
		d.packPanels(wk.b, b, ldb, k, n, pstride)
	}

	t := &wk.task
	*t = task{d: d, m: m, n: n, kp: kp, a: wk.a, rsa: rsa, csa: csa, b: wk.b, pstride: pstride,
		alpha: alpha, beta: beta, c: c, ldc: ldc, e: e}
	t.k = k
	if fuseB {
		t.bsrc, t.ldb = b, ldb
	}
	if fused && !transA {
		t.asrc, t.lda, t.halves = a, lda, w != nil
	}
	if workers > 1 {
		slivers := mpad / mr
		if slivers >= 2*workers {
			t.byRows, t.units = true, slivers
		} else {
			t.units = panels
		}
		t.parts = min(workers, t.units)
	} else {
		t.parts, t.byRows, t.units = 1, true, mpad/mr
	}
	// The pool serves every driver, whose tiles may differ: each worker's
	// tile is sized for this one.
	for len(wk.tiles) < t.parts {
		wk.tiles = append(wk.tiles, nil)
	}
	for i := range wk.tiles[:t.parts] {
		if cap(wk.tiles[i]) < mr*nr {
			wk.tiles[i] = make([]float32, mr*nr)
		}
		wk.tiles[i] = wk.tiles[i][:mr*nr]
	}
	t.tiles = wk.tiles
	parallel.Run(t, t.parts, t.parts)
	*t = task{}
}

// rowStride returns the words between packed rows of kp pairs: kp
// rounded up to a whole cache line, plus a line when that makes a
// multiple of 1 KiB, so that the MR rows a sliver reads together do not
// crowd into a few L1 sets.
func rowStride(kp int) int {
	s := (kp + 15) &^ 15
	if s%256 == 0 {
		s += 16
	}
	return s
}

// task is one product's blocked loops, split into parts by row slivers
// or by column panels.
type task struct {
	d           *Driver
	m, n, kp    int
	a           []uint32
	rsa, csa    int
	b           []uint32
	pstride     int
	alpha, beta float32
	c           []float32
	ldc         int
	e           Epilogue
	tiles       [][]float32
	k           int
	// bsrc is B (ldb) when its panels are packed in run, asrc A (lda,
	// pairs by halves of groups of 32 when halves) when its slivers are.
	bsrc, asrc []float32
	ldb, lda   int
	halves     bool

	parts, units int
	byRows       bool
}

// RunPart computes part's share of the slivers or panels.
func (t *task) RunPart(worker, part int) {
	u0, u1 := part*t.units/t.parts, (part+1)*t.units/t.parts
	mr, nr := t.d.MR, t.d.NR
	i0, i1, j0, j1 := 0, t.m, 0, t.n
	if t.byRows {
		i0, i1 = u0*mr, min(u1*mr, t.m)
	} else {
		j0, j1 = u0*nr, min(u1*nr, t.n)
	}
	t.run(t.tiles[worker], i0, i1, j0, j1)
}

// run computes C[i0:i1, j0:j1] (i0 a multiple of MR, j0 of NR).
func (t *task) run(tile []float32, i0, i1, j0, j1 int) {
	d := t.d
	mr, nr := d.MR, d.NR
	// The blocks of k are of equal size (within one pair), as few as kc
	// allows: C's traffic is per block.
	kstep := (t.kp + (t.kp+d.kc-1)/d.kc - 1) / ((t.kp + d.kc - 1) / d.kc)
	for jc := j0; jc < j1; jc += d.nc {
		nc := min(d.nc, j1-jc)
		for pc := 0; pc < t.kp; pc += kstep {
			kc := min(kstep, t.kp-pc)
			beta := t.beta
			if pc > 0 {
				beta = 1
			}
			last := pc+kc == t.kp
			for ir := i0; ir < i1; ir += mr {
				rows := min(mr, i1-ir)
				if t.asrc != nil && jc == j0 && pc == 0 {
					t.d.packRows(t.a[ir*t.rsa:], t.asrc[ir*t.lda:], t.lda, rows, t.k, t.rsa, t.halves)
				}
				ap := &t.a[ir*t.rsa+pc*t.csa]
				for jr := jc; jr < jc+nc; jr += nr {
					cols := min(nr, jc+nc-jr)
					bp := &t.b[jr/nr*t.pstride+pc*nr]
					// The first sliver's tiles prefetch the next B panel's
					// source, the others (on the first block) the next
					// sliver's A.
					var pf *float32
					pfs := 0
					if t.bsrc != nil && ir == i0 {
						t.packPanel(jr, pc, kc)
						pf, pfs = t.nextPanelSource(jr, jc, nc, pc, kc), t.ldb
					} else if t.asrc != nil && jc == j0 && pc == 0 {
						pf, pfs = t.nextSliverSource(ir, (jr-jc)/nr, kc), 32
					}
					if rows == mr && cols == nr && pf != nil {
						d.MicroPrefetch(kc, ap, t.rsa, t.csa, bp, &t.c[ir*t.ldc+jr], t.ldc, t.alpha, beta, pf, pfs)
						continue
					}
					if rows == mr && cols == nr {
						d.Micro(kc, ap, t.rsa, t.csa, bp, &t.c[ir*t.ldc+jr], t.ldc, t.alpha, beta)
						continue
					}
					d.Micro(kc, ap, t.rsa, t.csa, bp, &tile[0], nr, 1, 0)
					storeTile(tile, nr, rows, cols, t.alpha, beta, t.c[ir*t.ldc+jr:], t.ldc)
				}
				if t.e.Fn != nil && last {
					t.e.run(rows, nc, t.c[ir*t.ldc+jc:], t.ldc, ir, jc)
				}
			}
		}
	}
}

// packPanel packs pairs pc to pc+kc of the panel of B at column jr, as
// packPanels does.
func (t *task) packPanel(jr, pc, kc int) {
	nr := t.d.NR
	w := min(nr, t.n-jr)
	dst := t.b[jr/nr*t.pstride : (jr/nr+1)*t.pstride]
	full, chunks := min(pc+kc, t.k/2), w/16
	if full > pc && chunks > 0 {
		_ = t.bsrc[(2*full-1)*t.ldb+jr+chunks*16-1]
		_ = dst[(full-1)*nr+chunks*16-1]
		t.d.PackPairs(&dst[pc*nr], &t.bsrc[2*pc*t.ldb+jr], t.ldb, full-pc, chunks, nr)
	}
	packPairsTail(dst, t.bsrc[jr:], t.ldb, t.k, w, nr, pc, pc+kc)
}

// nextSliverSource returns where the tile jt of the sliver at row ir
// prefetches the next sliver's rows of A, 64·kc floats a tile from its
// first row on, or nil past them.
func (t *task) nextSliverSource(ir, jt, kc int) *float32 {
	i := ir + t.d.MR
	if i >= t.m {
		return nil
	}
	o := i*t.lda + jt*64*kc
	if o >= min(i+t.d.MR, t.m)*t.lda || o >= len(t.asrc) {
		return nil
	}
	return &t.asrc[o]
}

// nextPanelSource returns B's element that starts the next panel packPanel
// packs after the panel at jr in the block of columns jc to jc+nc and
// pairs pc to pc+kc (the panel itself after the last).
func (t *task) nextPanelSource(jr, jc, nc, pc, kc int) *float32 {
	switch {
	case jr+t.d.NR < jc+nc:
		return &t.bsrc[2*pc*t.ldb+jr+t.d.NR]
	case pc+kc < t.kp:
		return &t.bsrc[2*(pc+kc)*t.ldb+jc]
	case jc+nc < t.n:
		return &t.bsrc[jc+nc]
	}
	return &t.bsrc[2*pc*t.ldb+jr]
}

// storeTile sets C[i][j] = float32(alpha*S[i][j]) + float32(beta*C[i][j])
// for i < rows, j < cols, from the tile S (leading dimension lds), as the
// micro-kernel does; C is not read when beta is 0.
func storeTile(s []float32, lds, rows, cols int, alpha, beta float32, c []float32, ldc int) {
	for i := 0; i < rows; i++ {
		row := c[i*ldc : i*ldc+cols]
		si := s[i*lds : i*lds+cols]
		for j := range row {
			v := float32(alpha * si[j])
			if beta != 0 {
				v += float32(beta * row[j])
			}
			row[j] = v
		}
	}
}

// packRows packs rows r < rows of x = src[r*lds:][:k] into dst[r*ldd:]
// as pairs: (x[2q], x[2q+1]), or by halves of groups of 32 as lowbit.BF16
// stores weights; a missing second (k odd, or past k in a group) is 0.
// Whole blocks of 32 go to the assembly packer, the rest is packed here.
func (d *Driver) packRows(dst []uint32, src []float32, lds, rows, k, ldd int, halves bool) {
	blocks := k / 32
	if blocks > 0 {
		_ = src[(rows-1)*lds+blocks*32-1]
		_ = dst[(rows-1)*ldd+blocks*16-1]
		if halves {
			d.PackRowsHalves(&dst[0], &src[0], lds, rows, blocks, ldd)
		} else {
			d.PackRows(&dst[0], &src[0], lds, rows, blocks, ldd)
		}
	}
	if k%32 == 0 {
		return
	}
	q0 := blocks * 16
	for r := 0; r < rows; r++ {
		x := src[r*lds : r*lds+k]
		if halves {
			packHalvesTail(dst[r*ldd+q0:][:16], x[blocks*32:])
			continue
		}
		out := dst[r*ldd : r*ldd+(k+1)/2]
		for q := q0; 2*q < k; q++ {
			out[q] = pair(x, 2*q, 2*q+1)
		}
	}
}

// packHalvesTail packs the last, partial group x (< 32 floats) into 16
// words by halves.
func packHalvesTail(out []uint32, x []float32) {
	for q := range out[:16] {
		out[q] = pair(x, q, q+16)
	}
}

// pair returns bf16(x[p0]) | bf16(x[p1])<<16, a missing element 0.
func pair(x []float32, p0, p1 int) uint32 {
	var lo, hi uint16
	if p0 < len(x) {
		lo = bf16(x[p0])
	}
	if p1 < len(x) {
		hi = bf16(x[p1])
	}
	return uint32(lo) | uint32(hi)<<16
}

// bf16 rounds v as VCVTNE2PS2BF16 does: lowbit.ToBF16, with a float32
// subnormal counted as 0 (the micro-kernel counts it as 0 anyway).
func bf16(v float32) uint16 {
	b := *(*uint32)(unsafe.Pointer(&v))
	if b&0x7f800000 == 0 {
		return uint16(b >> 16 & 0x8000)
	}
	return lowbit.ToBF16(v)
}

// packPairs packs k rows of w floats (src, leading dimension lds) into
// kp = ceil(k/2) rows of pairs, dst[q*ldd+j] = (src[2q][j],
// src[2q+1][j]) (the second 0 for an odd k), zero for w <= j < ldd.
func (d *Driver) packPairs(dst []uint32, src []float32, lds, k, w, ldd int) {
	full, chunks := k/2, w/16
	if full > 0 && chunks > 0 {
		_ = src[(2*full-1)*lds+chunks*16-1]
		_ = dst[(full-1)*ldd+chunks*16-1]
		d.PackPairs(&dst[0], &src[0], lds, full, chunks, ldd)
	}
	packPairsTail(dst, src, lds, k, w, ldd, 0, (k+1)/2)
}

// packBand is the pairs of k that packPanels packs into every panel
// before it moves down B: a band of 2·packBand rows of B read across
// its width, so that the rows are read from memory as sequential streams
// instead of a panel's 32 columns down all of k, line pairs 2 KiB and
// more apart; at 1024² and 2048² on Zen 5 the band of 8 packed B in
// 0.6-0.7 of the time of panel after panel, the same at 512² (PERF.md,
// "bfloat16 products").
const packBand = 8

// packPanels packs k rows of n floats (src, leading dimension lds) into
// panels of NR columns, pstride words apart (panel p at dst[p*pstride:]),
// as packPairs packs each with ldd = NR: the whole pairs and chunks of 16
// columns by PackPairs, band after band of packBand pairs across all the
// panels, then each panel's rest (all of it in Go, packPanelsNarrow, when
// NR is not a multiple of 16).
func (d *Driver) packPanels(dst []uint32, src []float32, lds, k, n, pstride int) {
	nr := d.NR
	if nr%16 != 0 {
		packPanelsNarrow(dst, src, lds, k, n, nr, pstride)
		return
	}
	panels := (n + nr - 1) / nr
	full := k / 2
	for q0 := 0; q0 < full; q0 += packBand {
		rows := min(packBand, full-q0)
		for p := 0; p < panels; p++ {
			j0 := p * nr
			chunks := min(nr, n-j0) / 16
			if chunks == 0 {
				continue
			}
			_ = src[(2*(q0+rows)-1)*lds+j0+chunks*16-1]
			_ = dst[p*pstride+(q0+rows-1)*nr+chunks*16-1]
			d.PackPairs(&dst[p*pstride+q0*nr], &src[2*q0*lds+j0], lds, rows, chunks, nr)
		}
	}
	for p := 0; p < panels; p++ {
		j0 := p * nr
		packPairsTail(dst[p*pstride:(p+1)*pstride], src[j0:], lds, k, min(nr, n-j0), nr, 0, (k+1)/2)
	}
}

// packPairsTail packs what packPairs leaves to Go: for q0 <= q < q1
// (q1 <= ceil(k/2)), the columns from 16*(w/16) on (all of them in the
// last row of an odd k), and zeros for w <= j < ldd.
func packPairsTail(dst []uint32, src []float32, lds, k, w, ldd, q0, q1 int) {
	full, chunks := k/2, w/16
	for q := q0; q < q1; q++ {
		row := dst[q*ldd : q*ldd+ldd]
		j0 := chunks * 16
		if q == full {
			j0 = 0 // the last, odd row
		}
		r0 := src[2*q*lds:]
		for j := j0; j < w; j++ {
			lo := uint32(bf16(r0[j]))
			if 2*q+1 < k {
				lo |= uint32(bf16(src[(2*q+1)*lds+j])) << 16
			}
			row[j] = lo
		}
		clear(row[w:])
	}
}

// transposeRows sets dst[i*ldd+q] = src[q*lds+i] for i < lds (a
// multiple of 16) and q < kp: a transposed A's pairs of rows into rows of
// pairs, 16 pairs at a time by Transpose, the rest here.
func (d *Driver) transposeRows(dst, src []uint32, lds, kp, ldd int) {
	full := kp / 16 * 16
	for q0 := 0; q0 < full; q0 += 16 {
		_ = src[(q0+15)*lds+lds-1]
		_ = dst[(lds-1)*ldd+q0+15]
		d.Transpose(&dst[q0], &src[q0*lds], lds, ldd, lds/16)
	}
	for q := full; q < kp; q++ {
		for i, v := range src[q*lds : q*lds+lds] {
			dst[i*ldd+q] = v
		}
	}
}

// transposePanels sets panel p's word q*NR+jj (panel p at dst[p*kp*NR:])
// to src[(p*NR+jj)*lds + q] for q < kp, and to 0 for rows past n: whole
// blocks of 16 rows × 16 words by Transpose, the rest here (all of it,
// transposePanelsNarrow, when NR is not a multiple of 16).
func (d *Driver) transposePanels(dst, src []uint32, lds, n, kp int) {
	nr := d.NR
	pstride := kp * nr
	if nr%16 != 0 {
		transposePanelsNarrow(dst, src, lds, n, kp, nr)
		return
	}
	blocks := kp / 16
	for j0 := 0; j0 < n; j0 += 16 {
		panel := dst[j0/nr*pstride:][:pstride]
		h := j0 % nr
		rows := min(16, n-j0)
		q0 := 0
		if rows == 16 && blocks > 0 {
			_ = src[(j0+15)*lds+16*blocks-1]
			d.Transpose(&panel[h], &src[j0*lds], lds, nr, blocks)
			q0 = 16 * blocks
		}
		for r := 0; r < 16; r++ {
			if r >= rows {
				for q := 0; q < kp; q++ {
					panel[q*nr+h+r] = 0
				}
				continue
			}
			row := src[(j0+r)*lds : (j0+r)*lds+kp]
			for q := q0; q < kp; q++ {
				panel[q*nr+h+r] = row[q]
			}
		}
	}
	if m := (n + nr - 1) / nr * nr; n%nr != 0 && n%nr <= 16 {
		// The last panel's second half: no rows.
		panel := dst[(m-nr)/nr*pstride:][:pstride]
		for q := 0; q < kp; q++ {
			clear(panel[q*nr+16 : q*nr+nr])
		}
	}
}

// packPanelsNarrow is packPanels for panels of nr columns, nr not a
// multiple of 16, in Go: pair q of rows 2q and 2q+1 of B (the second 0
// for an odd k) read across B's width into row q of every panel, and
// zeros in the last panel's columns past n.
func packPanelsNarrow(dst []uint32, src []float32, lds, k, n, nr, pstride int) {
	kp := (k + 1) / 2
	for q := 0; q < kp; q++ {
		r0 := src[2*q*lds : 2*q*lds+n]
		var r1 []float32
		if 2*q+1 < k {
			r1 = src[(2*q+1)*lds : (2*q+1)*lds+n]
		}
		for j0 := 0; j0 < n; j0 += nr {
			row := dst[j0/nr*pstride+q*nr:][:nr]
			w := min(nr, n-j0)
			for jj := 0; jj < w; jj++ {
				v := uint32(bf16(r0[j0+jj]))
				if r1 != nil {
					v |= uint32(bf16(r1[j0+jj])) << 16
				}
				row[jj] = v
			}
			clear(row[w:])
		}
	}
}

// transposePanelsNarrow is transposePanels for panels of nr columns, nr
// not a multiple of 16, in Go: row j of src (kp words) into column j%nr
// of panel j/nr, and zeros in the last panel's columns past n.
func transposePanelsNarrow(dst, src []uint32, lds, n, kp, nr int) {
	pstride := kp * nr
	for j := 0; j < n; j++ {
		panel := dst[j/nr*pstride:][:pstride]
		jj := j % nr
		for q, v := range src[j*lds : j*lds+kp] {
			panel[q*nr+jj] = v
		}
	}
	if w := n % nr; w != 0 {
		panel := dst[n/nr*pstride:][:pstride]
		for q := 0; q < kp; q++ {
			clear(panel[q*nr+w : q*nr+nr])
		}
	}
}

// The Go packers New puts in place of those a Kernels leaves nil, with
// the contracts of the fields.

func goPackRows(dst *uint32, src *float32, lds, rows, blocks, ldd int) {
	goPackRowsBy(dst, src, lds, rows, blocks, ldd, false)
}

func goPackRowsHalves(dst *uint32, src *float32, lds, rows, blocks, ldd int) {
	goPackRowsBy(dst, src, lds, rows, blocks, ldd, true)
}

func goPackRowsBy(dst *uint32, src *float32, lds, rows, blocks, ldd int, halves bool) {
	d := unsafe.Slice(dst, (rows-1)*ldd+16*blocks)
	s := unsafe.Slice(src, (rows-1)*lds+32*blocks)
	for r := 0; r < rows; r++ {
		x := s[r*lds : r*lds+32*blocks]
		out := d[r*ldd : r*ldd+16*blocks]
		for q := range out {
			if halves {
				g, dd := q/16, q%16
				out[q] = pair(x, 32*g+dd, 32*g+16+dd)
			} else {
				out[q] = pair(x, 2*q, 2*q+1)
			}
		}
	}
}

func goPackPairs(dst *uint32, src *float32, lds, kp, chunks, ldd int) {
	d := unsafe.Slice(dst, (kp-1)*ldd+16*chunks)
	s := unsafe.Slice(src, (2*kp-1)*lds+16*chunks)
	for q := 0; q < kp; q++ {
		r0 := s[2*q*lds : 2*q*lds+16*chunks]
		r1 := s[(2*q+1)*lds : (2*q+1)*lds+16*chunks]
		out := d[q*ldd : q*ldd+16*chunks]
		for j := range out {
			out[j] = uint32(bf16(r0[j])) | uint32(bf16(r1[j]))<<16
		}
	}
}

func goTranspose(dst, src *uint32, lds, ldd, blocks int) {
	d := unsafe.Slice(dst, (16*blocks-1)*ldd+16)
	s := unsafe.Slice(src, 15*lds+16*blocks)
	for r := 0; r < 16; r++ {
		for q, v := range s[r*lds : r*lds+16*blocks] {
			d[q*ldd+r] = v
		}
	}
}
