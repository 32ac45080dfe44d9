package kernels

import "fmt"

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
func checkMatrix(fn, name string, s []float32, rows, cols, ld int) {
	if ld < cols {
		panic(fmt.Sprintf("kernels.%s: ld%s = %d is smaller than the row length %d of %s (%d×%d)", fn, name, ld, cols, name, rows, cols))
	}
	if rows == 0 || cols == 0 {
		return
	}
	if need := (rows-1)*ld + cols; len(s) < need {
		panic(fmt.Sprintf("kernels.%s: len(%s) = %d, want >= %d for a %d×%d matrix with ld%s = %d", fn, name, len(s), need, rows, cols, name, ld))
	}
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

func checkGemm(fn string, transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	checkDims(fn, []string{"m", "n", "k"}, m, n, k)
	ar, ac := opShape(transA, m, k)
	checkMatrix(fn, "a", a, ar, ac, lda)
	br, bc := opShape(transB, k, n)
	checkMatrix(fn, "b", b, br, bc, ldb)
	checkMatrix(fn, "c", c, m, n, ldc)
}

// checkSameLen panics unless two lengths are equal.
func checkSameLen(fn, xn, yn string, lx, ly int) {
	if lx != ly {
		panic(fmt.Sprintf("kernels.%s: len(%s) = %d but len(%s) = %d, want equal lengths", fn, xn, lx, yn, ly))
	}
}
