package kernels

import (
	"fmt"
	"math"
	"math/bits"
	"unsafe"
)

// checkDims panics unless every size is non-negative.
func checkDims(fn string, names []string, vals ...int) {
	for i, v := range vals {
		if v < 0 {
			panic(fmt.Sprintf("kernels.%s: %s = %d, must be >= 0", fn, names[i], v))
		}
	}
}

// checkMatrix panics unless s can hold a rows×cols row-major matrix with
// leading dimension ld. name is the argument's name in fn's signature.
//
// The test is overflow-safe: (rows-1)*ld + cols is never computed in int
// arithmetic, so a huge ld or rows cannot wrap around to a small number
// that passes (rows, cols >= 0 are checked by the caller).
func checkMatrix(fn, name string, s []float32, rows, cols, ld int) {
	if ld < cols {
		panic(fmt.Sprintf("kernels.%s: ld%s = %d is smaller than the row length %d of %s (%d×%d)", fn, name, ld, cols, name, rows, cols))
	}
	if rows == 0 || cols == 0 {
		return
	}
	// Here ld >= cols >= 1 and rows >= 1. The matrix fits iff
	// (rows-1)*ld + cols <= len(s), that is iff len(s) >= cols and
	// rows-1 <= (len(s)-cols)/ld (integer division is exact for this).
	if len(s) >= cols && rows-1 <= (len(s)-cols)/ld {
		return
	}
	panic(fmt.Sprintf("kernels.%s: len(%s) = %d, want >= %s for a %d×%d matrix with ld%s = %d", fn, name, len(s), matrixSpan(rows, cols, ld), rows, cols, name, ld))
}

// matrixSpan formats (rows-1)*ld + cols exactly, even where it does not
// fit in an int (rows, cols, ld >= 1).
func matrixSpan(rows, cols, ld int) string {
	hi, lo := bits.Mul64(uint64(rows-1), uint64(ld))
	lo, carry := bits.Add64(lo, uint64(cols), 0)
	hi += carry
	if hi == 0 && lo <= uint64(^uint(0)>>1) {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("(%d-1)*%d+%d (more than the address space)", rows, ld, cols)
}

// checkLen panics unless len(s) >= n.
func checkLen(fn, name string, s []float32, n int) {
	if len(s) < n {
		panic(fmt.Sprintf("kernels.%s: len(%s) = %d, want >= %d", fn, name, len(s), n))
	}
}

// opShape returns the stored shape of a matrix whose operation op(X) is
// rows×cols.
func opShape(trans bool, rows, cols int) (int, int) {
	if trans {
		return cols, rows
	}
	return rows, cols
}

func checkGemm(fn string, transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, cn string, c []float32, ldc int) {
	checkDims(fn, []string{"m", "n", "k"}, m, n, k)
	ar, ac := opShape(transA, m, k)
	checkMatrix(fn, "a", a, ar, ac, lda)
	br, bc := opShape(transB, k, n)
	checkMatrix(fn, "b", b, br, bc, ldb)
	checkMatrix(fn, cn, c, m, n, ldc)
	if m == 0 || n == 0 {
		return
	}
	if k > 0 {
		checkNoOverlap(fn, cn, c, m, n, ldc, "a", a, ar, ac, lda)
		checkNoOverlap(fn, cn, c, m, n, ldc, "b", b, br, bc, ldb)
	}
}

// checkNoOverlap panics if the memory spanned by the written matrix w
// (rows×cols, leading dimension ld, already checked to fit its slice)
// overlaps the memory spanned by the read matrix r. The spans are from
// each matrix's first element to its last, so two matrices interleaved
// in one buffer count as overlapping even where no element is shared.
func checkNoOverlap(fn, wn string, w []float32, wr, wc, wld int, rn string, r []float32, rr, rc, rld int) {
	if overlaps(w, wr, wc, wld, r, rr, rc, rld) {
		panic(fmt.Sprintf("kernels.%s: %s overlaps %s in memory (%s must be apart from %s)", fn, wn, rn, wn, rn))
	}
}

// overlaps reports whether the memory spans, first element to last, of
// the matrices w and r overlap; both fit their slices, so no span
// overflows.
func overlaps(w []float32, wr, wc, wld int, r []float32, rr, rc, rld int) bool {
	if wr == 0 || wc == 0 || rr == 0 || rc == 0 {
		return false
	}
	w0 := uintptr(unsafe.Pointer(unsafe.SliceData(w)))
	w1 := w0 + uintptr((wr-1)*wld+wc)*4
	r0 := uintptr(unsafe.Pointer(unsafe.SliceData(r)))
	r1 := r0 + uintptr((rr-1)*rld+rc)*4
	return w0 < r1 && r0 < w1
}

// checkInPlaceOrApart panics unless the written matrix w is either the
// read matrix r itself (same first element, same leading dimension) or
// apart from it in memory; both are rows×cols and fit their slices. It is
// the one rule of every kernel that may work in place: exactly in place,
// or not overlapping at all, because a partly overlapping output gives
// results that differ between implementations.
func checkInPlaceOrApart(fn, wn string, w []float32, wld int, rn string, r []float32, rld int, rows, cols int) {
	if unsafe.SliceData(w) == unsafe.SliceData(r) && wld == rld {
		return
	}
	if overlaps(w, rows, cols, wld, r, rows, cols, rld) {
		panic(fmt.Sprintf("kernels.%s: %s overlaps %s in memory (%s must be %s itself, the same first element and leading dimension, or apart from it)", fn, wn, rn, wn, rn))
	}
}

// panicVecOverlap is the panic of the vector form of checkInPlaceOrApart,
// which every kernel writing a vector it also reads applies as
//
//	if partlyOverlaps(w, r) {
//		panicVecOverlap(fn, "w", "r")
//	}
//
// (two calls, so that the test is inlined: the vector operations take a
// few nanoseconds).
func panicVecOverlap(fn, wn, rn string) {
	panic(fmt.Sprintf("kernels.%s: %s overlaps %s in memory (%s must be %s itself, the same first element, or apart from it)", fn, wn, rn, wn, rn))
}

// partlyOverlaps reports whether the vectors w and r, of equal lengths,
// overlap in memory without starting at the same element: w is neither
// r itself nor apart from it.
func partlyOverlaps(w, r []float32) bool {
	w0 := uintptr(unsafe.Pointer(unsafe.SliceData(w)))
	r0 := uintptr(unsafe.Pointer(unsafe.SliceData(r)))
	size := uintptr(len(w)) * 4
	return w0 != r0 && w0 < r0+size && r0 < w0+size
}

// checkVecApart panics if the first wn elements of the written vector w
// overlap the first rn elements of the vector r (both fit their slices).
func checkVecApart(fn, wname string, w []float32, wn int, rname string, r []float32, rn int) {
	checkNoOverlap(fn, wname, w, 1, wn, wn, rname, r, 1, rn, rn)
}

// checkVecMatApart panics if the first wn elements of the vector w
// overlap the rows×cols matrix r (leading dimension ld); both fit their
// slices.
func checkVecMatApart(fn, wname string, w []float32, wn int, rname string, r []float32, rows, cols, ld int) {
	checkNoOverlap(fn, wname, w, 1, wn, wn, rname, r, rows, cols, ld)
}

// checkOffset panics unless i+offset, the position of query i, is an int
// for every query i < rows: offset <= MaxInt - rows.
func checkOffset(fn string, offset, rows int) {
	if offset > math.MaxInt-rows {
		panic(fmt.Sprintf("kernels.%s: offset = %d with tq = %d overflows int (offset+tq = %s, want <= %d)", fn, offset, rows, bigSum(offset, rows), math.MaxInt))
	}
}

// bigSum formats a+b exactly for a, b >= 0, even where it does not fit
// in an int (it fits in a uint64).
func bigSum(a, b int) string { return fmt.Sprint(uint64(a) + uint64(b)) }

// checkSameLen panics unless two lengths are equal.
func checkSameLen(fn, xn, yn string, lx, ly int) {
	if lx != ly {
		panic(fmt.Sprintf("kernels.%s: len(%s) = %d but len(%s) = %d, want equal lengths", fn, xn, lx, yn, ly))
	}
}

// checkOptionalLen panics unless s is nil or holds at least n values.
func checkOptionalLen(fn, name string, s []float32, n int) {
	if s != nil && len(s) < n {
		panic(fmt.Sprintf("kernels.%s: len(%s) = %d, want >= %d (or nil)", fn, name, len(s), n))
	}
}

// checkGemv checks Gemv's arguments: m, n >= 0, A an m×n matrix of
// leading dimension lda in a, x and y long enough for op(A), and y apart
// from A and x in memory. It returns the lengths of x and y that op(A)
// uses.
func checkGemv(fn string, trans bool, m, n int, a []float32, lda int, x, y []float32) (xlen, ylen int) {
	checkDims(fn, []string{"m", "n"}, m, n)
	if lda < max(n, 1) {
		panic(fmt.Sprintf("kernels.%s: lda = %d, want >= max(n, 1) = %d", fn, lda, max(n, 1)))
	}
	checkMatrix(fn, "a", a, m, n, lda)
	xlen, ylen = n, m
	if trans {
		xlen, ylen = m, n
	}
	checkLen(fn, "x", x, xlen)
	checkLen(fn, "y", y, ylen)
	checkNoOverlap(fn, "y", y, 1, ylen, ylen, "a", a, m, n, lda)
	checkNoOverlap(fn, "y", y, 1, ylen, ylen, "x", x, 1, xlen, xlen)
	return xlen, ylen
}

// checkLowbit checks the arguments of a product C = alpha*A·Wᵀ + beta*C
// over the n×k low-bit matrix W whose storage is wdata (bytes at wbase):
// m >= 0, A (m×k, lda >= max(k, 1)) and C (m×n, ldc >= max(n, 1)) fit
// their slices, and C is apart from A and from W's storage.
func checkLowbit(fn string, m, n, k int, a []float32, lda int, wbase unsafe.Pointer, wbytes int, c []float32, ldc int) {
	checkDims(fn, []string{"m"}, m)
	if lda < max(k, 1) {
		panic(fmt.Sprintf("kernels.%s: lda = %d, want >= max(w.K, 1) = %d", fn, lda, max(k, 1)))
	}
	if ldc < max(n, 1) {
		panic(fmt.Sprintf("kernels.%s: ldc = %d, want >= max(w.N, 1) = %d", fn, ldc, max(n, 1)))
	}
	checkMatrix(fn, "a", a, m, k, lda)
	checkMatrix(fn, "c", c, m, n, ldc)
	checkNoOverlap(fn, "c", c, m, n, ldc, "a", a, m, k, lda)
	if m == 0 || n == 0 || wbytes == 0 {
		return
	}
	c0 := uintptr(unsafe.Pointer(&c[0]))
	c1 := uintptr(unsafe.Pointer(&c[(m-1)*ldc+n-1])) + 4
	w0 := uintptr(wbase)
	if c0 < w0+uintptr(wbytes) && w0 < c1 {
		panic(fmt.Sprintf("kernels.%s: c overlaps the storage of w", fn))
	}
}

// checkGemvLowbit checks the arguments of y = alpha*W·x + beta*y over the
// n×k low-bit matrix W stored at wbase (wbytes bytes): len(x) >= k,
// len(y) >= n, y apart from x and from W's storage.
func checkGemvLowbit(fn string, n, k int, wbase unsafe.Pointer, wbytes int, x, y []float32) {
	checkLen(fn, "x", x, k)
	checkLen(fn, "y", y, n)
	checkVecApart(fn, "y", y, n, "x", x, k)
	if n == 0 || wbytes == 0 {
		return
	}
	y0 := uintptr(unsafe.Pointer(&y[0]))
	w0 := uintptr(wbase)
	if y0 < w0+uintptr(wbytes) && w0 < y0+uintptr(4*n) {
		panic(fmt.Sprintf("kernels.%s: y overlaps the storage of w", fn))
	}
}
