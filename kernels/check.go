package kernels

import (
	"fmt"
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
	if wr == 0 || wc == 0 || rr == 0 || rc == 0 {
		return
	}
	w0 := uintptr(unsafe.Pointer(unsafe.SliceData(w)))
	w1 := w0 + uintptr((wr-1)*wld+wc)*4
	r0 := uintptr(unsafe.Pointer(unsafe.SliceData(r)))
	r1 := r0 + uintptr((rr-1)*rld+rc)*4
	if w0 < r1 && r0 < w1 {
		panic(fmt.Sprintf("kernels.%s: %s overlaps %s in memory (%s must be a separate matrix)", fn, wn, rn, wn))
	}
}

// checkInPlaceOrApart panics unless the written matrix w is either the
// read matrix r itself (same first element, same leading dimension) or
// apart from it in memory; both are rows×cols and fit their slices.
func checkInPlaceOrApart(fn, wn string, w []float32, wld int, rn string, r []float32, rld int, rows, cols int) {
	if unsafe.SliceData(w) == unsafe.SliceData(r) && wld == rld {
		return
	}
	checkNoOverlap(fn, wn, w, rows, cols, wld, rn, r, rows, cols, rld)
}

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
