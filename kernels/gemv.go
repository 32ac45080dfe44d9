package kernels

// Gemv computes y = alpha*op(A)*x + beta*y for the row-major m×n matrix A
// with leading dimension lda >= max(n, 1), as BLAS's sgemv does. When
// trans is false, op(A) = A, x holds n elements and y m; when trans is
// true, op(A) = Aᵀ, x holds m elements and y n (only the first n or m of a
// longer slice are used).
//
// When beta is 0, y is only written, never read, so it may hold anything
// (NaN included); when alpha is 0, or op(A) has no columns, A and x are
// not read and y = beta*y. y must not overlap A or x in memory: it panics
// if it does (the check compares the address ranges from each one's first
// element to its last).
//
// A is read once, in place: untransposed, each element of y is the dot
// product of a row of A with x; transposed, y is the sum of A's rows
// scaled by the elements of x. Each element of op(A)·x is a sum of
// products whose order differs between implementations (vector lanes,
// several accumulators), so results match generic within a few float32
// rounding errors per term, as Gemm's do: |y - y_generic| is at most about
// (len(x)+2)·2⁻²³·(|alpha|·Σ|op(A)(i,p)·x[p]| + |beta·y[i]|). For a given
// implementation the results are deterministic, and they do not depend
// on GOMAXPROCS.
func (p *Impl) Gemv(trans bool, m, n int, alpha float32, a []float32, lda int, x []float32, beta float32, y []float32) {
	checkGemv("Gemv", trans, m, n, a, lda, x, y)
	p.set.Gemv(trans, m, n, alpha, a, lda, x, beta, y)
}
