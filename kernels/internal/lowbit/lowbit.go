// Package lowbit drives the SIMD kernels of the products over low-bit
// weights (package kernels/lowbit, imported as weights): C (m×N) =
// alpha*A·Wᵀ + beta*C, each element the dot product of a row of A with a
// row of W, W read once, in place, for every r <= len(kernels) rows of A.
//
// A kernel reads W a group of weights.GroupSize weights at a time, whole
// groups only (rows are padded to whole groups with zero weights). For
// BF16 weights the driver hands it the rows of A for the whole groups in
// place and, when K is not a multiple of the group size, a copy of the
// last partial group of each row padded with zeros, so that no kernel
// reads x beyond K elements or needs a masked load. For Int8 weights it
// quantizes the rows of A to int16 (weights.QuantizeInt16) into a buffer
// of whole groups, zero-padded, and the kernels multiply them by the
// weights exactly in integers; a row generic.Int8Scaled refuses (one
// QuantizeInt16 refuses, or whose alpha times its scale is outside
// float32's normal range) is computed by generic.GemmInt8Float, and an
// output the kernels leave NaN or infinite by generic.Int8Dot, both in
// float64, so that no intermediate overflows where the result does not.
//
// A set may add a one-row BF16 kernel that reads x as two bfloat16
// vectors (PairKernel, SplitFunc), which GemmBF16 then uses for m = 1.
//
// Each kernel computes every element of C the same way whatever its
// position in the call, so splitting C's columns between goroutines never
// changes a result.
package lowbit

import (
	"sync"
	"unsafe"

	"github.com/simdgpt/simdgpt/internal/parallel"
	"github.com/simdgpt/simdgpt/kernels/internal/generic"
	weights "github.com/simdgpt/simdgpt/kernels/lowbit"
)

// Kernel is one SIMD kernel for a fixed r, the rows of A it takes: for
// i < r and j < rows (rows >= 1),
//
//	c[i*ldc+j] = alpha*Σ_p x_i[p]·w_j[p] + beta*c[i*ldc+j]
//
// where w_j is the row of W starting ldw bytes after w_{j-1} (w_0 at w)
// and p runs over groups whole groups (groups >= 0) read from
// x_i = x[i*ldx:] and then, when xt is not nil, one more group read from
// x_i = xt[i*GroupSize:]. c is read only when beta is not ±0.
type Kernel func(rows, groups int, w *byte, ldw int, x *float32, ldx int, xt *float32, c *float32, ldc int, alpha, beta float32)

// Int8Kernel is one SIMD kernel over Int8 weights for a fixed r, the rows
// of A it takes: for i < r and j < rows (rows >= 1),
//
//	c[i*ldc+j] = xs[i]·Σ_g s_jg·float32(Σ_{p in g} x_i[p]·q_j[p]) + beta*c[i*ldc+j]
//
// where row j of W (ldw bytes after row j-1, row 0 at w) holds groups
// whole groups (groups >= 0) of int8 weights q with scales s, x_i =
// x[i*ldx:] are int16 activations of as many whole groups, and the group
// sums are exact int32. c is read only when beta is not ±0.
type Int8Kernel func(rows, groups int, w *byte, ldw int, x *int16, ldx int, xs *float32, c *float32, ldc int, beta float32)

// PairKernel is a one-row kernel over BF16 weights that reads x as two
// bfloat16 vectors, hi and lo (SplitFunc), whose sum stands for scale·x:
// for j < rows (rows >= 1),
//
//	c[j] = float32(alpha·s_j) + beta*c[j],  s_j = Σ_p (hi[p]+lo[p])·w_j[p]
//
// with s_j summed in float32 by VDPBF16PS and its product by alpha
// (alpha/scale of the product) exact in float64, W's rows as for Kernel
// (groups >= 1), hi = x[0:] and lo = x[ldx:] (whole groups in BF16's
// interleaved order), c read only when beta is not ±0. It takes the rows
// in blocks of PairBlock, then one at a time; a block (or row) with a sum
// that is not finite or a subnormal weight is not stored (a block may
// also be left for a zero weight), and the kernel returns the number of
// rows stored before it (rows when none was left).
type PairKernel func(rows, groups int, w *byte, ldw int, x *uint16, ldx int, c *float32, alpha float64, beta float32) (done int)

// PairBlock is the number of rows a PairKernel takes at once.
const PairBlock = 8

// SplitFunc writes hi = bf16(v) to out[0:] and lo = bf16(v - hi) to
// out[ldo:] (both rounded to nearest even; v - hi is exact) for v =
// scale·x, scale the power of two that moves max|x| into [2⁶³, 2⁶⁴) (2¹²⁷
// when max|x| < 2⁻⁶⁴), for groups whole groups of x and, when tail is not
// 0, one more group of the elements its bits select (the others 0), in
// BF16's interleaved order. It reports ok = false when an element of x is
// not finite, or when a nonzero element's v or lo has a zero exponent
// (VDPBF16PS would count that part as 0).
type SplitFunc func(groups int, x *float32, out *uint16, ldo int, tail uint32) (scale float32, ok bool)

// Kernels are an ISA's kernels for both weight types: BF16[r-1] and
// Int8[r-1] take r rows of A. When BF16Pair and SplitBF16 are not nil,
// products of one row of A over BF16 weights (GemmBF16 with m = 1) use
// them (see GemmBF16).
type Kernels struct {
	BF16      []Kernel
	Int8      []Int8Kernel
	BF16Pair  PairKernel
	SplitBF16 SplitFunc
	// DequantInt8 dequantizes whole groups of Int8 weights (see
	// DequantizeInt8).
	DequantInt8 DequantFunc
	// PackInt8, if not nil, packs the GEMM's B panels from Int8 weights
	// (see GemmDequantInt8).
	PackInt8 PackInt8Func
	// QuantInt16, if not nil, quantizes GemmInt8's rows of A 16
	// activations at a time (see QuantFunc), and Go the rest.
	QuantInt16 QuantFunc
}

// QuantFunc sets q[p] = weights.QuantizeInt16Scaled's value of x[p] for
// the inverse scale inv, for p < 16·blocks: float64(x[p])·inv rounded to
// float64, then to the nearest integer (ties to even), clamped to
// ±weights.Int16Max. x's elements are finite and |x[p]·inv| below 2³¹.
type QuantFunc func(blocks int, x *float32, inv float64, q *int16)

// int8Scaled is generic.Int8Scaled with the set's QuantInt16: it
// quantizes x into q and returns alpha times x's scale, or false for a
// row the integer products do not take.
func (ks *Kernels) int8Scaled(alpha float32, q []int16, x []float32) (xs float32, ok bool) {
	sx, inv, ok := weights.Int16Scale(x)
	switch {
	case !ok:
		return 0, false
	case sx == 0:
		clear(q[:len(x)])
	default:
		done := 0
		if blocks := len(x) / 16; ks.QuantInt16 != nil && blocks > 0 {
			_ = q[len(x)-1]
			ks.QuantInt16(blocks, &x[0], inv, &q[0])
			done = 16 * blocks
		}
		weights.QuantizeInt16Scaled(q[done:], x[done:], inv)
	}
	return generic.Int8Alpha(alpha, sx)
}

// DequantFunc sets dst[32g+p] = s_g·float32(q_g[p]) for g < groups and
// p < 32, rounded once to float32, for the groups consecutive Int8
// blocks at w (36 bytes each: the float32 scale s_g, then the int8
// weights q_g).
type DequantFunc func(groups int, w *byte, dst *float32)

// MaxRows is the largest number of rows of A a kernel may take.
const MaxRows = 8

// GemmBF16 is the kernel set's GemmBF16 (see kernelset.Set). With
// BF16Pair, one row of A (m = 1) whose elements SplitBF16 splits (finite,
// no part of an element VDPBF16PS would count as 0) is multiplied by
// BF16Pair; a row of W that BF16Pair leaves (a sum that is not finite: an
// infinite or NaN weight, or an overflow of scale·x·w; a subnormal
// weight) is computed again by BF16[0], so that it comes out as it does in
// float32. Other rows of A go to run.
func (ks *Kernels) GemmBF16(m int, alpha float32, a []float32, lda int, w *weights.BF16, beta float32, c []float32, ldc int) {
	var base *byte
	if len(w.Data) > 0 {
		base = (*byte)(unsafe.Pointer(&w.Data[0]))
	}
	if m == 1 && ks.BF16Pair != nil && alpha != 0 && w.K > 0 && w.N > 0 && ks.pair(alpha, a[:w.K], w, base, beta, c) {
		return
	}
	run(ks.BF16, m, w.N, w.K, alpha, a, lda, base, 2*w.Stride(), beta, c, ldc)
}

// pair computes c = alpha*W·x + beta*c with BF16Pair and reports true,
// or reports false without writing c when SplitBF16 refuses x.
func (ks *Kernels) pair(alpha float32, x []float32, w *weights.BF16, base *byte, beta float32, c []float32) bool {
	n, k := w.N, w.K
	groups := weights.Groups(k)
	ld := groups * weights.GroupSize
	t := pairPool.Get().(*pairTask)
	defer pairPool.Put(t)
	if cap(t.x) < 2*ld {
		t.x = make([]uint16, 2*ld)
	}
	full := k / weights.GroupSize
	rem := k - full*weights.GroupSize
	var tail uint32
	if rem > 0 {
		tail = 1<<rem - 1
	}
	scale, ok := ks.SplitBF16(full, &x[0], &t.x[0], ld, tail)
	if !ok {
		return false
	}
	*t = pairTask{x: t.x, kern: ks.BF16Pair, f32: ks.BF16[0], n: n, groups: groups, full: full, w: base,
		rowBytes: 2 * w.Stride(), ld: ld, xf: x, c: c, alpha: alpha, alpha64: float64(alpha) / float64(scale), beta: beta}
	if rem > 0 {
		clear(t.tail[copy(t.tail[:], x[full*weights.GroupSize:]):])
	}
	parts, step := columnParts(n, k)
	t.step = step
	runParts(t, n, parts, t.step)
	*t = pairTask{x: t.x}
	return true
}

// pairTask is a product of one row of A, split into hi and lo, over BF16
// weights, split by columns of C.
type pairTask struct {
	kern     PairKernel
	f32      Kernel // for the rows kern leaves
	n        int
	groups   int // whole groups of a row of W
	full     int // groups of x in place (the rest in tail)
	w        *byte
	rowBytes int
	x        []uint16 // hi, then lo, ld apart
	ld       int
	xf       []float32 // x itself, for f32
	tail     [weights.GroupSize]float32
	c        []float32
	alpha    float32
	alpha64  float64 // alpha/scale, for kern
	beta     float32
	step     int
}

var pairPool = sync.Pool{New: func() any { return new(pairTask) }}

// RunPart computes the columns [part*step, (part+1)*step) of the product.
// A block the pair kernel leaves (see PairKernel) is taken again a
// row at a time, and a row left again goes to the float32 kernel: every
// row's result depends on its own weights only, never on its block.
func (t *pairTask) RunPart(_, part int) {
	j0 := part * t.step
	j1 := min(j0+t.step, t.n)
	row := func(j int) *byte { return (*byte)(unsafe.Add(unsafe.Pointer(t.w), j*t.rowBytes)) }
	for j := j0; j < j1; {
		j += t.kern(j1-j, t.groups, row(j), t.rowBytes, &t.x[0], t.ld, &t.c[j], t.alpha64, t.beta)
		if j == j1 {
			return
		}
		end := j + 1
		if j1-j >= PairBlock {
			end = j + PairBlock
		}
		for ; j < end; j++ {
			if t.kern(1, t.groups, row(j), t.rowBytes, &t.x[0], t.ld, &t.c[j], t.alpha64, t.beta) == 0 {
				var xt *float32
				if t.full < t.groups {
					xt = &t.tail[0]
				}
				t.f32(1, t.full, row(j), t.rowBytes, &t.xf[0], 0, xt, &t.c[j], 0, t.alpha, t.beta)
			}
		}
	}
}

// GemmInt8 is the kernel set's GemmInt8 (see kernelset.Set), with the
// arithmetic of generic.GemmInt8: the rows of A generic.Int8Scaled
// refuses, and every output the kernel leaves NaN or infinite, are
// computed by generic.Int8Dot (in float64) instead.
func (ks *Kernels) GemmInt8(m int, alpha float32, a []float32, lda int, w *weights.Int8, beta float32, c []float32, ldc int) {
	n, k := w.N, w.K
	if m == 0 || n == 0 {
		return
	}
	if alpha == 0 || k == 0 {
		for i := 0; i < m; i++ {
			scale(beta, c[i*ldc:i*ldc+n])
		}
		return
	}
	groups := weights.Groups(k)
	ldq := groups * weights.GroupSize
	t := int8Pool.Get().(*int8Task)
	rows := min(m, len(ks.Int8))
	if need := rows * ldq; cap(t.q) < need {
		t.q = make([]int16, need)
	}
	if beta != 0 && cap(t.old) < rows*n {
		t.old = make([]float32, rows*n)
	}
	t.n, t.k, t.groups, t.w = n, k, groups, (*byte)(unsafe.Pointer(&w.Blocks[0]))
	t.blocks = w.Blocks
	t.rowBytes = int(unsafe.Sizeof(weights.Int8Block{})) * groups
	t.ldq, t.c, t.ldc, t.alpha, t.beta = ldq, c, ldc, alpha, beta
	t.a, t.lda = a, lda
	parts, step := columnParts(n, k)
	t.step = step
	for i0 := 0; i0 < m; {
		// A pass: the next rows that quantize, up to a kernel's worth.
		r := 0
		for r < len(ks.Int8) && i0+r < m {
			x := a[(i0+r)*lda : (i0+r)*lda+k]
			q := t.q[r*ldq : (r+1)*ldq]
			xs, ok := ks.int8Scaled(alpha, q, x)
			if !ok {
				break
			}
			clear(q[k:])
			t.xs[r] = xs
			r++
		}
		if r == 0 {
			generic.GemmInt8Float(1, alpha, a[i0*lda:i0*lda+k], k, w, beta, c[i0*ldc:i0*ldc+n], n)
			i0++
			continue
		}
		t.kern, t.r, t.i0 = ks.Int8[r-1], r, i0
		runParts(t, n, parts, t.step)
		i0 += r
	}
	q, old := t.q, t.old
	*t = int8Task{q: q, old: old}
	int8Pool.Put(t)
}

// DequantizeInt8 is the kernel set's DequantizeInt8 (see kernelset.Set),
// with generic.DequantizeInt8's results bit for bit: each row's whole
// groups by DequantInt8, its last partial group, if any, in Go.
func (ks *Kernels) DequantizeInt8(w *weights.Int8, j0, n int, d []float32, ldd int) {
	k, groups := w.K, weights.Groups(w.K)
	full := k / weights.GroupSize
	if k == 0 {
		return // D is empty; d may be shorter than (n-1)*ldd
	}
	for r := 0; r < n; r++ {
		row := w.Blocks[(j0+r)*groups : (j0+r+1)*groups]
		dr := d[r*ldd : r*ldd+k]
		if full > 0 {
			ks.DequantInt8(full, (*byte)(unsafe.Pointer(&row[0])), &dr[0])
		}
		if full < groups {
			b := &row[full]
			for p, v := range b.Q[:k-full*weights.GroupSize] {
				dr[full*weights.GroupSize+p] = b.Scale * float32(v)
			}
		}
	}
}

// int8Task is one pass of r quantized rows of A over Int8 weights, split
// by columns of C.
type int8Task struct {
	kern     Int8Kernel
	n, k     int
	groups   int
	w        *byte
	blocks   []weights.Int8Block // W's blocks, for generic.Int8Dot
	rowBytes int
	q        []int16 // the pass's rows of A, quantized, ldq apart
	ldq      int
	xs       [MaxRows]float32 // alpha times each row's scale
	a        []float32        // A, for generic.Int8Dot
	lda      int
	r, i0    int // the pass's rows of A: r from row i0
	c        []float32
	ldc      int
	old      []float32 // when beta is not 0, the pass's C before it, n apart
	alpha    float32
	beta     float32
	step     int
}

var int8Pool = sync.Pool{New: func() any { return new(int8Task) }}

// RunPart computes the columns [part*step, (part+1)*step) of the pass.
// An output the kernel leaves NaN or infinite (a partial sum or the
// scaling overflowed, or an operand is not finite) is computed again by
// generic.Int8Dot from C's value before the pass.
func (t *int8Task) RunPart(_, part int) {
	j0 := part * t.step
	j1 := min(j0+t.step, t.n)
	if j0 >= j1 {
		return
	}
	ci := t.i0 * t.ldc
	if t.beta != 0 {
		for i := 0; i < t.r; i++ {
			copy(t.old[i*t.n+j0:i*t.n+j1], t.c[ci+i*t.ldc+j0:ci+i*t.ldc+j1])
		}
	}
	w := (*byte)(unsafe.Add(unsafe.Pointer(t.w), j0*t.rowBytes))
	t.kern(j1-j0, t.groups, w, t.rowBytes, &t.q[0], t.ldq, &t.xs[0], &t.c[ci+j0], t.ldc, t.beta)
	for i := 0; i < t.r; i++ {
		row := t.c[ci+i*t.ldc+j0 : ci+i*t.ldc+j1]
		for jj, v := range row {
			if generic.Finite(v) {
				continue
			}
			j := j0 + jj
			var old float32
			if t.beta != 0 {
				old = t.old[i*t.n+j]
			}
			x := t.a[(t.i0+i)*t.lda : (t.i0+i)*t.lda+t.k]
			row[jj] = generic.Int8Dot(t.alpha, x, t.blocks[j*t.groups:(j+1)*t.groups], t.beta, old)
		}
	}
}

// MinParallel is the number of weights (N·K) from which a product is
// split between goroutines: GPT-2's smallest projection (768×768), whose
// weights come from memory when a model is decoded, is split, as a second
// core adds memory bandwidth; the split is cheap because package
// parallel's goroutines and its caller poll rather than sleep.
const MinParallel = 1 << 18

// splitUnit is the granule, in columns of C, of a split.
const splitUnit = 64

// columnParts returns how many goroutines share the n columns of C of a
// product with K = k, and the columns each takes (a multiple of
// splitUnit).
func columnParts(n, k int) (parts, step int) {
	parts = 1
	if n*k >= MinParallel {
		parts = parallel.Parts((n+splitUnit-1)/splitUnit, 1)
	}
	units := (n + splitUnit - 1) / splitUnit
	return parts, (units + parts - 1) / parts * splitUnit
}

// runParts runs t's parts of step columns of n, on parts goroutines, or
// on this one when parts is 1.
func runParts(t parallel.Task, n, parts, step int) {
	if parts <= 1 {
		t.RunPart(0, 0)
		return
	}
	parallel.Run(t, (n+step-1)/step, parts)
}

// task is one pass of r rows of A over W, split by columns of C.
type task struct {
	kern     Kernel
	r, n     int
	groups   int
	w        *byte
	rowBytes int
	x        *float32
	ldx      int
	xt       *float32
	c        []float32
	ci       int // offset of the pass's first row in c
	ldc      int
	alpha    float32
	beta     float32
	step     int
	// tail holds the padded last group of the pass's rows of A; run
	// writes each group it uses whole, so it is never cleared (a task
	// is set field by field: a product of few weights, such as a
	// decoder's block of 32 cached values, would otherwise spend a
	// good part of its time clearing it).
	tail [MaxRows * weights.GroupSize]float32
}

// set sets every field of t but kern, r, ci, x, xt and tail.
func (t *task) set(n, groups int, w *byte, rowBytes, ldx int, c []float32, ldc int, alpha, beta float32) {
	t.n, t.groups, t.w, t.rowBytes, t.ldx = n, groups, w, rowBytes, ldx
	t.c, t.ldc, t.alpha, t.beta = c, ldc, alpha, beta
}

// release drops t's references to the caller's memory.
func (t *task) release() { t.kern, t.w, t.x, t.xt, t.c = nil, nil, nil, nil, nil }

var pool = sync.Pool{New: func() any { return new(task) }}

// run computes C = alpha*A·Wᵀ + beta*C for W n×k with rows of rowBytes
// bytes from base, in passes of up to len(kern) rows of A.
func run(kern []Kernel, m, n, k int, alpha float32, a []float32, lda int, base *byte, rowBytes int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if alpha == 0 || k == 0 {
		for i := 0; i < m; i++ {
			scale(beta, c[i*ldc:i*ldc+n])
		}
		return
	}
	t := pool.Get().(*task)
	full := k / weights.GroupSize
	rem := k - full*weights.GroupSize
	t.set(n, full, base, rowBytes, lda, c, ldc, alpha, beta)
	parts, step := columnParts(n, k)
	t.step = step
	for i0 := 0; i0 < m; {
		r := min(m-i0, len(kern))
		t.kern, t.r, t.ci = kern[r-1], r, i0*ldc
		t.x = &a[i0*lda]
		t.xt = nil
		if rem > 0 {
			for i := 0; i < r; i++ {
				row := a[(i0+i)*lda+full*weights.GroupSize : (i0+i)*lda+k]
				g := t.tail[i*weights.GroupSize : (i+1)*weights.GroupSize]
				clear(g[copy(g, row):])
			}
			t.xt = &t.tail[0]
		}
		runParts(t, n, parts, t.step)
		i0 += r
	}
	t.release()
	pool.Put(t)
}

// RunPart computes the columns [part*step, (part+1)*step) of the pass.
func (t *task) RunPart(_, part int) {
	j0 := part * t.step
	j1 := min(j0+t.step, t.n)
	if j0 >= j1 {
		return
	}
	w := (*byte)(unsafe.Add(unsafe.Pointer(t.w), j0*t.rowBytes))
	t.kern(j1-j0, t.groups, w, t.rowBytes, t.x, t.ldx, t.xt, &t.c[t.ci+j0], t.ldc, t.alpha, t.beta)
}

// scale sets y = beta*y, and y = 0 without reading it when beta is 0.
func scale(beta float32, y []float32) {
	if beta == 0 {
		clear(y)
		return
	}
	for i := range y {
		y[i] *= beta
	}
}
