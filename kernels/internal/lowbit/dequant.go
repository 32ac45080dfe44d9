package lowbit

import (
	"sync"
	"unsafe"

	"github.com/simdgpt/simdgpt/internal/parallel"
	"github.com/simdgpt/simdgpt/kernels/internal/gemm"
	weights "github.com/simdgpt/simdgpt/kernels/lowbit"
)

// PackInt8Func packs gemm.GroupedCols columns of op(B) = Wᵀ for Int8
// weights W into a GEMM panel, dequantizing as it goes: for
// j < gemm.GroupedCols and q < 16·chunks,
//
//	dst[q*nr+j] = s·float32(v)
//
// where v and s are the weight of k step q and its group's scale in row j
// of W (rows stride bytes apart, row 0 at w), rounded once to float32 as
// weights.Int8.At does. Each row's first k step is the first of the Int8
// block at w (+ j·stride), or its 17th when odd is 1; the steps run on
// through the following blocks, 16 at a time.
type PackInt8Func func(chunks int, w *byte, stride int, odd int, dst *float32, nr int)

// packHalf is the k steps PackInt8Func converts at a time: half an Int8
// group.
const packHalf = weights.GroupSize / 2

// Int8Source is op(B) = Wᵀ for Int8 weights W as a gemm.BSource: each
// panel the GEMM packs is dequantized from W as it is packed, with
// pack (nil: in Go) for the whole blocks of gemm.GroupedCols columns and
// 16 k steps of a panel, in Go for its edges. Its values are W.At's.
type Int8Source struct {
	w    *weights.Int8
	pack PackInt8Func
}

// NewInt8Source returns op(B) = Wᵀ packed with pack (nil: in Go).
func NewInt8Source(w *weights.Int8, pack PackInt8Func) *Int8Source {
	return &Int8Source{w: w, pack: pack}
}

// PackB is gemm.BSource's: dst[q*nr+j] = W.At(j0+j, pc+q) for q < kc,
// j < w, and 0 for w <= j < nr (gemm.PackGrouped).
func (s *Int8Source) PackB(dst []float32, pc, kc, j0, w, nr int) {
	gemm.PackGrouped(s, s.pack != nil, dst, pc, kc, j0, w, nr)
}

// PackBlocks is gemm.GroupedSource's, by pack.
func (s *Int8Source) PackBlocks(dst *float32, pc, chunks, j, nr int) {
	groups := weights.Groups(s.w.K)
	blk := &s.w.Blocks[j*groups+pc/weights.GroupSize]
	s.pack(chunks, (*byte)(unsafe.Pointer(blk)), groups*int(unsafe.Sizeof(weights.Int8Block{})), (pc/packHalf)%2, dst, nr)
}

// At is gemm.GroupedSource's: W.At(j, p).
func (s *Int8Source) At(p, j int) float32 {
	b := &s.w.Blocks[j*weights.Groups(s.w.K)+p/weights.GroupSize]
	return b.Scale * float32(b.Q[p%weights.GroupSize])
}

// sourcePool holds the Int8Sources of GemmDequantInt8, so that a call
// allocates none once warm.
var sourcePool = sync.Pool{New: func() any { return new(Int8Source) }}

// DequantPanelRows is the number of rows of W GemmDequantInt8 dequantizes
// at a time when it cannot pack from W (a panel of DequantPanelRows × K
// floats).
const DequantPanelRows = 256

// dequantTask dequantizes a panel of W's rows, split between goroutines
// by rows (16 or more each, as parallel.For would).
type dequantTask struct {
	ks    *Kernels
	w     *weights.Int8
	j0, n int
	step  int
	panel []float32 // kept between calls
}

// dequantPool holds GemmDequantInt8's dequantized panels and their
// tasks.
var dequantPool = sync.Pool{New: func() any { return new(dequantTask) }}

// RunPart dequantizes rows part·step .. of the panel.
func (t *dequantTask) RunPart(_, part int) {
	lo := part * t.step
	hi := min(lo+t.step, t.n)
	k := t.w.K
	t.ks.DequantizeInt8(t.w, t.j0+lo, hi-lo, t.panel[lo*k:], k)
}

// GemmDequantInt8 is the kernel set's GemmDequantInt8 (see
// kernelset.Set) on the set's GEMM driver g: C = alpha·A·Wᵀ + beta·C with
// W dequantized, bitwise g.Gemm(false, true, ...) on W's values. With a
// PackInt8 kernel, and m above the driver's small-M rule, g's blocked
// GEMM packs its B panels from W directly (Int8Source, gemm.GemmSource:
// the same blocking and tiles as Gemm's blocked path); otherwise W is
// dequantized DequantPanelRows rows at a time (DequantizeInt8) for
// g.Gemm. Arguments are checked, m > 0 and w.N > 0.
func (ks *Kernels) GemmDequantInt8(g *gemm.Driver, m int, alpha float32, a []float32, lda int, w *weights.Int8, beta float32, c []float32, ldc int) {
	n, k := w.N, w.K
	if k == 0 || alpha == 0 {
		g.Gemm(false, true, m, n, k, alpha, a, lda, nil, max(k, 1), beta, c, ldc)
		return
	}
	if ks.PackInt8 != nil && !g.SmallM(true, m) {
		src := sourcePool.Get().(*Int8Source)
		src.w, src.pack = w, ks.PackInt8
		g.GemmSource(m, n, k, alpha, a, lda, src, beta, c, ldc)
		*src = Int8Source{}
		sourcePool.Put(src)
		return
	}
	t := dequantPool.Get().(*dequantTask)
	rows := min(DequantPanelRows, n)
	if cap(t.panel) < rows*k {
		t.panel = make([]float32, rows*k)
	}
	t.ks, t.w, t.panel = ks, w, t.panel[:rows*k]
	for j0 := 0; j0 < n; j0 += rows {
		jn := min(rows, n-j0)
		parts := parallel.Parts(jn, 16)
		t.j0, t.n, t.step = j0, jn, (jn+parts-1)/parts
		parallel.Run(t, (jn+t.step-1)/t.step, parts)
		g.Gemm(false, true, m, jn, k, alpha, a, lda, t.panel, k, beta, c[j0:], ldc)
	}
	t.ks, t.w = nil, nil
	dequantPool.Put(t)
}

// GemmDequantInt8On returns the kernel set's GemmDequantInt8 on its GEMM
// driver g (see GemmDequantInt8).
func (ks *Kernels) GemmDequantInt8On(g *gemm.Driver) func(m int, alpha float32, a []float32, lda int, w *weights.Int8, beta float32, c []float32, ldc int) {
	return func(m int, alpha float32, a []float32, lda int, w *weights.Int8, beta float32, c []float32, ldc int) {
		ks.GemmDequantInt8(g, m, alpha, a, lda, w, beta, c, ldc)
	}
}
