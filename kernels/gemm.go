package kernels

// Gemm computes C = alpha*op(A)*op(B) + beta*C for row-major matrices.
//
// op(A) is m×k and op(B) is k×n. When transA is false, A is stored m×k
// with leading dimension lda >= k; when true, A is stored k×m (lda >= m)
// and op(A) is its transpose. B is stored k×n (ldb >= n), or n×k
// (ldb >= k) when transB. C is m×n with ldc >= n.
//
// When beta is 0, C is only written, never read, so it may hold garbage;
// when alpha is 0 or k is 0, A and B are not read. C must not overlap A or
// B in memory: it panics if it does (the check compares the address
// ranges from each matrix's first element to its last). Results match generic within a few float32 rounding errors per term
// (the summation order differs between implementations); for a given
// implementation and GOMAXPROCS they are deterministic.
func (p *Impl) Gemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	checkGemm("Gemm", transA, transB, m, n, k, a, lda, b, ldb, c, ldc)
	if m == 0 || n == 0 {
		return
	}
	p.set.Gemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// MatMul computes C = A*B for contiguous row-major matrices: A is m×k, B
// is k×n and C is m×n. C is overwritten; it must not overlap A or B.
func (p *Impl) MatMul(m, n, k int, a, b, c []float32) {
	checkDims("MatMul", []string{"m", "n", "k"}, m, n, k)
	checkMatrix("MatMul", "a", a, m, k, k)
	checkMatrix("MatMul", "b", b, k, n, n)
	checkMatrix("MatMul", "c", c, m, n, n)
	if m == 0 || n == 0 {
		return
	}
	if k > 0 {
		checkNoOverlap("MatMul", "c", c, m, n, n, "a", a, m, k, k)
		checkNoOverlap("MatMul", "c", c, m, n, n, "b", b, k, n, n)
	}
	p.set.Gemm(false, false, m, n, k, 1, a, k, b, n, 0, c, n)
}

// Gemm computes C = alpha*op(A)*op(B) + beta*C with the default
// implementation; see (*Impl).Gemm.
func Gemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	current.Load().Gemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// MatMul computes C = A*B for contiguous row-major matrices (A m×k, B k×n,
// C m×n) with the default implementation; see (*Impl).MatMul.
func MatMul(m, n, k int, a, b, c []float32) { current.Load().MatMul(m, n, k, a, b, c) }
