package gemm

import (
	"github.com/simdgpt/simdgpt/internal/parallel"
)

// Skinny products: Gemv, and Gemm with few rows of op(A), read the large
// operand once, in place, never packing it. Two kernel shapes cover them,
// each taking r = 1..len(kernels) rows of the small operand at once:
//
//   - dots: c[i*ldc+j] = alpha*Σ_p x[i*ldx+p]·w[j*ldw+p] + beta*c[i*ldc+j]
//     for i < r, j < rows: the dot products of the rows of w (A for an
//     untransposed Gemv, B for Gemm with transB) with r contiguous rows x;
//   - axpys: c[i*ldc+j] = alpha*Σ_p a[i*rsa+p*csa]·b[p*ldb+j] + beta*c[i*ldc+j]
//     for i < r, j < n: the rows of b (A for a transposed Gemv, B for Gemm
//     without transB) scaled by r elements of a each and summed, a
//     column block of the r rows of C held in registers while b's rows
//     stream past;
//   - stream: the axpys product, bit for bit, with b read row by row (a
//     few rows at a time, each over all n columns) while the sums of the
//     r×n block of C accumulate in a scratch buffer, for b beyond the
//     caches, where the column blocks of axpys read each row in short
//     strided pieces that the prefetchers do not follow.
//
// Every kernel reads c only when beta is not 0, and computes each element
// of c the same way whatever its position in the call (the sums run over
// p in the same order, with the same reduction, in a block of rows or
// columns or alone), so splitting c between goroutines never changes a
// result.

// DotsFunc is a dots kernel (see above) for a fixed r; k >= 1, rows >= 1.
type DotsFunc func(rows, k int, w *float32, ldw int, x *float32, ldx int, c *float32, ldc int, alpha, beta float32)

// AxpysFunc is an axpys kernel (see above) for a fixed r; k >= 1, n >= 1.
type AxpysFunc func(k, n int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

// StreamFunc is a stream kernel (see above) for a fixed r; k >= 1, n >= 1;
// acc is scratch of r·n elements, which it overwrites.
type StreamFunc func(k, n int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, acc *float32)

// Skinny is an ISA's skinny kernels: Dots[r-1], Axpys[r-1] and Stream[r-1]
// take r rows. Stream may be empty (axpys then reads every b), and its
// kernels must give exactly the results of Axpys's. When WideAxpys is not
// 0, the axpys kernels of WideAxpys rows and more read b themselves
// however large it is (they hold wide enough blocks of C and prefetch b
// far enough ahead to stream it from memory): the driver takes the rows
// of a product whose b the stream kernels would read WideAxpys or more
// at a time on those, and only the rest on the stream kernels.
type Skinny struct {
	Dots      []DotsFunc
	Axpys     []AxpysFunc
	Stream    []StreamFunc
	WideAxpys int
}

// WithSkinny sets the driver's skinny kernels, which its Gemv and its
// small-M products use, and returns the driver.
func (g *Driver) WithSkinny(s Skinny) *Driver {
	if len(s.Dots) == 0 || len(s.Axpys) == 0 {
		panic("gemm.WithSkinny: no kernels")
	}
	g.skinny = s
	g.smallM, g.smallMTransB = smallMMax, smallMMaxTransB
	g.streamMin, g.streamCols = streamMinDefault, streamColsDefault
	return g
}

// SetStream sets the smallest k·n from which an axpys-shaped product
// (transposed Gemv, small-M Gemm without transB) with more than
// streamMinCols columns reads b through the stream kernels, and the
// columns of C each stream call takes (its scratch holds r times as many
// elements), for tests and tuning; it must not run while the driver
// computes. The results are the same either way.
func (g *Driver) SetStream(minElems, cols int) {
	if cols < 1 {
		panic("gemm.SetStream: cols < 1")
	}
	g.streamMin, g.streamCols = minElems, cols
}

// SetSmallM sets the largest m the skinny kernels take (0: none) with B
// k×n and n×k, for tests and tuning; it must not run while the driver
// computes. SmallM's rule is SetSmallM(4, 16).
func (g *Driver) SetSmallM(m, mTransB int) { g.smallM, g.smallMTransB = m, mTransB }

// SetSmallMGap sets whether the skinny kernels also take the m that
// SmallM leaves to the blocked path between the stream kernels' rows and
// the multiples of Skinny.WideAxpys (false, the default: they do not),
// for tests and tuning; it must not run while the driver computes.
func (g *Driver) SetSmallMGap(take bool) { g.smallMGap = take }

// skinnyArgs is one skinny product, C (m×n) = alpha*op(A)·op(B) + beta*C,
// in the terms of the kernels: dots reads w = b (n rows of k, ldb) and
// x = a (m rows of k, rsa); axpys reads a(i,p) = a[i*rsa+p*csa] and b (k
// rows of n, ldb).
type skinnyArgs struct {
	dots     bool
	m, n, k  int
	alpha    float32
	a        []float32
	rsa, csa int
	b        []float32
	ldb      int
	beta     float32
	c        []float32
	ldc      int
	epi      epilogue
}

// skinnyMinParallel is the number of elements of the streamed operand
// (k·n) from which a skinny product is split between goroutines: 1 MiB,
// so that GPT-2's smallest projection (768×768), whose weights come from
// memory when a model is decoded, is split, as a second core adds memory
// bandwidth; the split is cheap because package parallel's goroutines
// and its caller poll rather than sleep.
const skinnyMinParallel = 1 << 18

// The stream kernels' defaults (SetStream): b of at least
// streamMinDefault elements (1 MiB, as large as a core's L2) and more
// than streamMinCols columns, in blocks of streamColsDefault columns
// (16 KiB of sums a row of C). With fewer columns than one column block
// of the axpys kernels, axpys reads b's rows whole already. Measured
// (PERF.md, "GEMV"): at 256×256 the two tie, from 512×512 on stream is
// faster on both ISAs, beyond the L2 by up to 1.8×.
const (
	streamMinDefault  = 1 << 18
	streamMinCols     = 128
	streamColsDefault = 4096
)

// skinnySplitUnit is the granule, in columns of C, of a split: whole
// cache lines of every row.
const skinnySplitUnit = 64

// Gemv is the kernel set's Gemv (see kernelset.Set): y = alpha*op(A)*x +
// beta*y, on the skinny kernels of one row.
func (g *Driver) Gemv(trans bool, m, n int, alpha float32, a []float32, lda int, x []float32, beta float32, y []float32) {
	xlen, ylen := n, m
	if trans {
		xlen, ylen = m, n
	}
	if ylen == 0 {
		return
	}
	if alpha == 0 || xlen == 0 {
		scaleC(1, ylen, beta, y, ylen)
		return
	}
	p := skinnyArgs{dots: !trans, m: 1, n: ylen, k: xlen, alpha: alpha, a: x, b: a, ldb: lda, beta: beta, c: y, ldc: ylen}
	if trans {
		p.csa = 1
	}
	g.skinnyRun(&p)
}

// SmallM reports whether the driver computes a product with m rows of
// op(A) on the skinny kernels rather than blocked. The rule: m <= 4, or
// m <= 16 when B is transposed (smallM and smallMTransB). The blocked
// path packs B (or reads it through a 14- or 6-row micro-kernel) and pays
// for MR rows whatever m is; the skinny kernels stream B once, in place,
// and their cost grows with m. Measured on AVX-512 (PERF.md, "Small-M
// products"): with B k×n the skinny path is faster up to m = 4 and
// slower at m = 8 and 12 on most shapes; with B n×k (the output
// projection, 768×50257) it is faster at every m up to 16. An ISA
// package may set another rule for its drivers (SetSmallM). With wide
// axpys kernels (Skinny.WideAxpys), B k×n takes the skinny path only for
// m up to the stream kernels' rows or a multiple of WideAxpys: between
// them the stream kernels would read a large B twice, slower than the
// blocked path (BenchmarkSmallMDecode in kernels/amd64).
func (g *Driver) SmallM(transB bool, m int) bool {
	if transB {
		return m <= g.smallMTransB
	}
	if w := g.skinny.WideAxpys; w > 0 && !g.smallMGap && m > len(g.skinny.Stream) && m%w != 0 {
		return false
	}
	return m <= g.smallM
}

// The largest m of op(A) the skinny kernels take (SmallM), with B k×n and
// n×k.
const (
	smallMMax       = 4
	smallMMaxTransB = 16
)

// skinnyGemm computes the product p (k > 0, alpha != 0) on the skinny
// kernels: transB as dots of B's rows with op(A)'s (copied to contiguous
// rows when A is transposed), else as axpys of B's rows.
func (g *Driver) skinnyGemm(p *gemmArgs) {
	s := skinnyArgs{dots: p.transB, m: p.m, n: p.n, k: p.k, alpha: p.alpha, a: p.a, rsa: p.lda, csa: 1, b: p.b, ldb: p.ldb, beta: p.beta, c: p.c, ldc: p.ldc, epi: p.epi}
	if p.transA {
		s.rsa, s.csa = 1, p.lda
	}
	var w *gemmWork
	if s.dots && p.transA {
		// The dots kernels read op(A)'s rows contiguous.
		w = getWork()
		w.apack = grow(w.apack, p.m*p.k)
		for i := 0; i < p.m; i++ {
			row := w.apack[i*p.k : i*p.k+p.k]
			for q := range row {
				row[q] = p.a[q*p.lda+i]
			}
		}
		s.a, s.rsa, s.csa = w.apack, p.k, 1
	}
	g.skinnyRun(&s)
	if w != nil {
		putWork(w)
	}
}

// skinnyRun computes p, split by columns of C between goroutines when B
// is large (skinnyMinParallel).
func (g *Driver) skinnyRun(p *skinnyArgs) {
	parts := 1
	if p.k*p.n >= skinnyMinParallel {
		parts = parallel.Parts((p.n+skinnySplitUnit-1)/skinnySplitUnit, 1)
	}
	if parts <= 1 {
		g.skinnyCols(p, 0, p.n)
		return
	}
	w := getWork()
	t := &w.skinny
	t.g, t.p = g, *p
	units := (p.n + skinnySplitUnit - 1) / skinnySplitUnit
	t.step = (units + parts - 1) / parts * skinnySplitUnit
	parallel.Run(t, (p.n+t.step-1)/t.step, parts)
	*t = skinnyTask{}
	putWork(w)
}

// skinnyTask is the parallel.Task of one split skinny product: part q
// computes the columns [q*step, (q+1)*step) of C.
type skinnyTask struct {
	g    *Driver
	p    skinnyArgs
	step int
}

// RunPart computes one part's columns.
func (t *skinnyTask) RunPart(_, part int) {
	j0 := part * t.step
	t.g.skinnyCols(&t.p, j0, min(j0+t.step, t.p.n))
}

// skinnyCols computes columns j0 <= j < j1 of C, r rows at a time, then
// their epilogue.
func (g *Driver) skinnyCols(p *skinnyArgs, j0, j1 int) {
	n := j1 - j0
	for i0 := 0; i0 < p.m; {
		if p.dots {
			r := min(p.m-i0, len(g.skinny.Dots))
			g.skinny.Dots[r-1](n, p.k, &p.b[j0*p.ldb], p.ldb, &p.a[i0*p.rsa], p.rsa, &p.c[i0*p.ldc+j0], p.ldc, p.alpha, p.beta)
			i0 += r
			continue
		}
		if (g.skinny.WideAxpys == 0 || p.m-i0 < g.skinny.WideAxpys) && g.streams(p, n) {
			i0 += g.streamRows(p, i0, j0, j1)
			continue
		}
		r := min(p.m-i0, len(g.skinny.Axpys))
		g.skinny.Axpys[r-1](p.k, n, &p.a[i0*p.rsa], p.rsa, p.csa, &p.b[j0], p.ldb, &p.c[i0*p.ldc+j0], p.ldc, p.alpha, p.beta)
		i0 += r
	}
	if e := &p.epi; e.fn != nil {
		e.run(p.m, n, p.c[j0:], p.ldc, 0, j0)
	}
}

// streams reports whether the axpys-shaped product p reads n of its
// columns (all, or one goroutine's part) through the stream kernels
// (SetStream): p's whole b is large, and n more than axpys's block.
func (g *Driver) streams(p *skinnyArgs, n int) bool {
	return len(g.skinny.Stream) > 0 && n > streamMinCols && p.k*p.n >= g.streamMin
}

// streamRows computes rows i0 <= i < i0+r of C's columns j0 <= j < j1 on
// the stream kernel of r rows, g.streamCols columns a call, and returns r.
func (g *Driver) streamRows(p *skinnyArgs, i0, j0, j1 int) int {
	r := min(p.m-i0, len(g.skinny.Stream))
	f := g.skinny.Stream[r-1]
	w := getWork()
	w.acc = grow(w.acc, r*min(g.streamCols, j1-j0))
	for j := j0; j < j1; j += g.streamCols {
		n := min(g.streamCols, j1-j)
		f(p.k, n, &p.a[i0*p.rsa], p.rsa, p.csa, &p.b[j], p.ldb, &p.c[i0*p.ldc+j], p.ldc, p.alpha, p.beta, &w.acc[0])
	}
	putWork(w)
	return r
}
