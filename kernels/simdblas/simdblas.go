// Package simdblas implements gonum's float32 BLAS interface
// (gonum.org/v1/gonum/blas.Float32) on simdgpt's kernels, so that an
// existing gonum program gets them with one line:
//
//	blas32.Use(simdblas.Implementation{})
//
// where blas32 is gonum.org/v1/gonum/blas/blas32 and simdblas is this
// package, github.com/simdgpt/simdgpt/kernels/simdblas. Every later call of
// blas32.Gemm, blas32.Dot, ..., and of blas32.Implementation()'s methods,
// then runs here. (gonum's mat package is float64 and uses blas64, which
// this does not change.)
//
// The package is not named blas32 because a program using it always
// imports gonum's blas32 too (to call Use): a second package of that name
// would need an import alias in every such file.
//
// Sgemm runs on kernels.Gemm (packed, register-blocked, multi-threaded
// for large problems), Sgemv on kernels.Gemv, Sger on kernels.Axpy (a row
// of A at a time), Sdot on kernels.Dot, Saxpy on kernels.Axpy and Sscal
// on kernels.Scale where their arguments fit those kernels (each method's
// comment says when: mostly unit increments, Sger gathering a strided y
// first, and a written operand apart in memory from those read); every
// other case and every other routine of blas.Float32 is gonum's own
// (gonum.org/v1/gonum/blas/gonum.Implementation, which Implementation
// embeds; gonum's level 3 routines such as Ssyrk or Strsm compute on their
// own, not through Sgemm). Arguments are checked exactly as gonum checks
// them, in the same order, and bad ones panic with gonum's messages.
//
// Results equal gonum's up to float32 rounding: the kernels sum in a
// different order and may use fused multiply-adds. With infinities or
// NaNs in A or B, Sgemm can also differ where gonum skips the zero
// entries of A (or multiplies 0 by an infinite dot product when alpha is
// 0); here A and B are not read at all when alpha is 0, as the reference
// BLAS specifies. Sger with a negative increment takes x or y from the
// end, as gonum documents and its pure-Go build does; gonum's amd64
// assembly reads outside the vector there instead.
package simdblas

import (
	"sync"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/simdgpt/simdgpt/kernels"
)

// Implementation is a blas.Float32 whose Sgemm, Sgemv, Sger, Sdot, Saxpy
// and Sscal run on simdgpt's kernels; the embedded gonum.Implementation
// provides every other routine. The zero value is ready to use and runs on
// kernels.Default(); an Implementation is safe for concurrent use.
type Implementation struct {
	gonum.Implementation

	// Kernels is the kernel implementation to run on, for example one of
	// kernels.Implementations(); nil means kernels.Default() at each call.
	Kernels *kernels.Impl
}

var _ blas.Float32 = Implementation{}

// kern returns the kernel implementation impl runs on.
func (impl Implementation) kern() *kernels.Impl {
	if impl.Kernels != nil {
		return impl.Kernels
	}
	return kernels.Default()
}

// Sgemm performs one of the matrix-matrix operations
//
//	C = alpha * A * B + beta * C
//	C = alpha * Aᵀ * B + beta * C
//	C = alpha * A * Bᵀ + beta * C
//	C = alpha * Aᵀ * Bᵀ + beta * C
//
// where A is an m×k or k×m dense matrix, B is an n×k or k×n dense matrix,
// C is an m×n matrix, and alpha and beta are scalars; all are row-major
// with leading dimensions lda, ldb and ldc. tA and tB specify whether A or
// B are transposed (blas.Trans and blas.ConjTrans are the same for real
// matrices).
//
// It checks its arguments as gonum's Sgemm does and panics with the same
// messages. When beta is 0, C is overwritten without being read (NaNs in
// it are replaced); when alpha is 0 or k is 0, A and B are not read. The
// product runs on kernels.Gemm, except when C overlaps A or B in memory,
// which the kernels do not accept: such calls run gonum's Sgemm.
func (impl Implementation) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	// The checks below are gonum's, in gonum's order.
	switch tA {
	default:
		panic(badTranspose)
	case blas.NoTrans, blas.Trans, blas.ConjTrans:
	}
	switch tB {
	default:
		panic(badTranspose)
	case blas.NoTrans, blas.Trans, blas.ConjTrans:
	}
	if m < 0 {
		panic(mLT0)
	}
	if n < 0 {
		panic(nLT0)
	}
	if k < 0 {
		panic(kLT0)
	}
	aTrans := tA == blas.Trans || tA == blas.ConjTrans
	if aTrans {
		if lda < max(1, m) {
			panic(badLdA)
		}
	} else {
		if lda < max(1, k) {
			panic(badLdA)
		}
	}
	bTrans := tB == blas.Trans || tB == blas.ConjTrans
	if bTrans {
		if ldb < max(1, k) {
			panic(badLdB)
		}
	} else {
		if ldb < max(1, n) {
			panic(badLdB)
		}
	}
	if ldc < max(1, n) {
		panic(badLdC)
	}
	if m == 0 || n == 0 {
		return
	}
	if aTrans {
		if len(a) < (k-1)*lda+m {
			panic(shortA)
		}
	} else {
		if len(a) < (m-1)*lda+k {
			panic(shortA)
		}
	}
	if bTrans {
		if len(b) < (n-1)*ldb+k {
			panic(shortB)
		}
	} else {
		if len(b) < (k-1)*ldb+n {
			panic(shortB)
		}
	}
	if len(c) < (m-1)*ldc+n {
		panic(shortC)
	}
	if (alpha == 0 || k == 0) && beta == 1 {
		return
	}
	if k > 0 {
		// kernels.Gemm panics when C overlaps A or B (comparing the spans
		// from each matrix's first element to its last); gonum computes
		// such products in its own order, so leave them to gonum.
		ar, ac := m, k
		if aTrans {
			ar, ac = k, m
		}
		br, bc := k, n
		if bTrans {
			br, bc = n, k
		}
		if overlap(c, m, n, ldc, a, ar, ac, lda) || overlap(c, m, n, ldc, b, br, bc, ldb) {
			impl.Implementation.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
			return
		}
	}
	impl.kern().Gemm(aTrans, bTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// overlap reports whether the memory spanned by the rows×cols matrix w
// (leading dimension wld) and that of the matrix r, from each one's first
// element to its last, intersect. Both are non-empty and fit their slices.
func overlap(w []float32, wr, wc, wld int, r []float32, rr, rc, rld int) bool {
	const size = unsafe.Sizeof(float32(0))
	w0 := uintptr(unsafe.Pointer(unsafe.SliceData(w)))
	w1 := w0 + uintptr((wr-1)*wld+wc)*size
	r0 := uintptr(unsafe.Pointer(unsafe.SliceData(r)))
	r1 := r0 + uintptr((rr-1)*rld+rc)*size
	return w0 < r1 && r0 < w1
}

// Sdot computes the dot product of the two vectors
//
//	\sum_i x[i]*y[i]
//
// of n elements taken every incX elements of x and every incY elements of
// y (backwards from the end for a negative increment, as in gonum). With
// unit increments it runs on kernels.Dot; otherwise it is gonum's Sdot.
// It panics as gonum's Sdot does.
func (impl Implementation) Sdot(n int, x []float32, incX int, y []float32, incY int) float32 {
	if n > 0 && incX == 1 && incY == 1 {
		if len(x) < n {
			panic(shortX)
		}
		if len(y) < n {
			panic(shortY)
		}
		return impl.kern().Dot(x[:n], y[:n])
	}
	return impl.Implementation.Sdot(n, x, incX, y, incY)
}

// Saxpy adds alpha times the vector x to the vector y:
//
//	y[i] += alpha * x[i]
//
// for n elements taken every incX elements of x and every incY elements
// of y (backwards from the end for a negative increment, as in gonum).
// With unit increments and x and y either the same elements or apart in
// memory, it runs on kernels.Axpy; otherwise it is gonum's Saxpy. It
// panics as gonum's Saxpy does.
func (impl Implementation) Saxpy(n int, alpha float32, x []float32, incX int, y []float32, incY int) {
	if n > 0 && incX == 1 && incY == 1 && alpha != 0 {
		if len(x) < n {
			panic(shortX)
		}
		if len(y) < n {
			panic(shortY)
		}
		x, y = x[:n], y[:n]
		if unsafe.SliceData(x) == unsafe.SliceData(y) || !overlap(y, 1, n, n, x, 1, n, n) {
			impl.kern().Axpy(alpha, x, y)
			return
		}
	}
	impl.Implementation.Saxpy(n, alpha, x, incX, y, incY)
}

// Sscal scales the vector x by alpha:
//
//	x[i] *= alpha
//
// for n elements taken every incX elements of x; it does nothing for a
// negative incX, as in gonum. When alpha is 0 the elements are set to 0
// (NaNs included). With a unit increment and a non-zero alpha it runs on
// kernels.Scale; otherwise it is gonum's Sscal. It panics as gonum's
// Sscal does.
func (impl Implementation) Sscal(n int, alpha float32, x []float32, incX int) {
	if n > 0 && incX == 1 && alpha != 0 {
		if len(x) < n {
			panic(shortX)
		}
		impl.kern().Scale(alpha, x[:n])
		return
	}
	impl.Implementation.Sscal(n, alpha, x, incX)
}

// Sgemv computes y = alpha*op(A)*x + beta*y for the row-major m×n matrix A,
// op(A) = A or Aᵀ, as gonum's Sgemv does. With unit increments and y apart
// from A and x in memory it runs on kernels.Gemv (A read once, in place);
// otherwise it is gonum's Sgemv. It panics as gonum's Sgemv does.
func (impl Implementation) Sgemv(tA blas.Transpose, m, n int, alpha float32, a []float32, lda int, x []float32, incX int, beta float32, y []float32, incY int) {
	// The checks below are gonum's, in gonum's order.
	switch tA {
	default:
		panic(badTranspose)
	case blas.NoTrans, blas.Trans, blas.ConjTrans:
	}
	if m < 0 {
		panic(mLT0)
	}
	if n < 0 {
		panic(nLT0)
	}
	if lda < max(1, n) {
		panic(badLdA)
	}
	if incX == 0 {
		panic(zeroIncX)
	}
	if incY == 0 {
		panic(zeroIncY)
	}
	if m == 0 || n == 0 {
		return
	}
	trans := tA != blas.NoTrans
	lenX, lenY := n, m
	if trans {
		lenX, lenY = m, n
	}
	if incX != 1 || incY != 1 || len(x) < lenX || len(y) < lenY || len(a) < lda*(m-1)+n ||
		overlap(y, 1, lenY, lenY, a, m, n, lda) || overlap(y, 1, lenY, lenY, x, 1, lenX, lenX) {
		// gonum's own path, and its panics for short slices.
		impl.Implementation.Sgemv(tA, m, n, alpha, a, lda, x, incX, beta, y, incY)
		return
	}
	if alpha == 0 && beta == 1 {
		return
	}
	impl.kern().Gemv(trans, m, n, alpha, a, lda, x, beta, y)
}

// Sger performs the rank-one update
//
//	A += alpha * x * yᵀ
//
// of the row-major m×n matrix A (leading dimension lda), where x has m
// elements taken every incX elements and y has n taken every incY (each
// backwards from the end for a negative increment, as in gonum). It checks
// its arguments as gonum's Sger does, in the same order, and panics with
// the same messages; like gonum's, it returns without touching A when m, n
// or alpha is 0. Only the m×n elements of A are written, not the padding
// of its rows. Row i of A is updated by kernels.Axpy with alpha*x[i]
// (computed in float32, as gonum does); a y with an increment other than
// 1 is first gathered into a buffer, reused across calls. When A overlaps
// x or y in memory, the kernels are not used: with positive increments it
// is gonum's Sger (the same bits as gonum), otherwise a plain loop in the
// reference BLAS's order, which is gonum's pure-Go order (gonum's amd64
// assembly Ger mishandles negative increments, reading outside x and y;
// this package never calls it with one).
func (impl Implementation) Sger(m, n int, alpha float32, x []float32, incX int, y []float32, incY int, a []float32, lda int) {
	// The checks below are gonum's, in gonum's order.
	if m < 0 {
		panic(mLT0)
	}
	if n < 0 {
		panic(nLT0)
	}
	if lda < max(1, n) {
		panic(badLdA)
	}
	if incX == 0 {
		panic(zeroIncX)
	}
	if incY == 0 {
		panic(zeroIncY)
	}
	if m == 0 || n == 0 {
		return
	}
	spanX, spanY := 1+(m-1)*absInc(incX), 1+(n-1)*absInc(incY)
	if len(x) < spanX {
		panic(shortX)
	}
	if len(y) < spanY {
		panic(shortY)
	}
	if len(a) < lda*(m-1)+n {
		panic(shortA)
	}
	if alpha == 0 {
		return
	}
	if overlap(a, m, n, lda, x, 1, spanX, spanX) || overlap(a, m, n, lda, y, 1, spanY, spanY) {
		if incX > 0 && incY > 0 {
			impl.Implementation.Sger(m, n, alpha, x, incX, y, incY, a, lda)
		} else {
			gerInOrder(m, n, alpha, x, incX, y, incY, a, lda)
		}
		return
	}
	yv := y[:n]
	if incY != 1 {
		buf := gatherPool.Get().(*[]float32)
		defer gatherPool.Put(buf)
		if cap(*buf) < n {
			*buf = make([]float32, n)
		}
		yv = (*buf)[:n]
		iy := 0
		if incY < 0 {
			iy = (1 - n) * incY
		}
		for j := range yv {
			yv[j] = y[iy]
			iy += incY
		}
	}
	ix := 0
	if incX < 0 {
		ix = (1 - m) * incX
	}
	p := impl.kern()
	for i := range m {
		p.Axpy(alpha*x[ix], yv, a[i*lda:i*lda+n])
		ix += incX
	}
}

// gerInOrder is Sger's arithmetic in the reference BLAS's order, that of
// gonum's pure-Go Ger: row by row, alpha*x[i] read as row i begins, then
// a[i][j] += (alpha*x[i])*y[j] for j = 0, 1, ..., n-1, each y[j] read
// just before a[i][j] is written. Sger uses it when A overlaps x or y and
// an increment is negative: gonum's amd64 assembly Ger starts a vector
// with a negative increment at the wrong element, outside the slice.
// The arguments have been checked.
func gerInOrder(m, n int, alpha float32, x []float32, incX int, y []float32, incY int, a []float32, lda int) {
	ix, ky := 0, 0
	if incX < 0 {
		ix = (1 - m) * incX
	}
	if incY < 0 {
		ky = (1 - n) * incY
	}
	for i := range m {
		s := alpha * x[ix]
		row := a[i*lda : i*lda+n]
		iy := ky
		for j := range row {
			row[j] += s * y[iy]
			iy += incY
		}
		ix += incX
	}
}

// gatherPool holds the buffers, as *[]float32, into which Sger gathers a
// y with a non-unit increment.
var gatherPool = sync.Pool{New: func() any { return new([]float32) }}

// absInc returns the magnitude of the increment inc.
func absInc(inc int) int {
	if inc < 0 {
		return -inc
	}
	return inc
}
