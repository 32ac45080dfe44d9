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
	checkGemm("Gemm", transA, transB, m, n, k, a, lda, b, ldb, "c", c, ldc)
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

// GemmBiasGELU is a linear layer followed by GELU, as a transformer's MLP
// computes its hidden layer: a GEMM whose bias addition and GELU run as
// an epilogue, on each block of the product while it is still in cache.
// It sets pre = op(A)·op(B) + bias (bias[:n] added to every row), the
// pre-activation GELUBackward needs, and out = gelu(pre):
//
//	for i := 0; i < m; i++ {
//		for j := 0; j < n; j++ {
//			var s float32 // summed in any order, as Gemm does
//			for p := 0; p < k; p++ {
//				s += opA(i, p) * opB(p, j)
//			}
//			pre[i*ldpre+j] = s + bias[j]
//			out[i*ldout+j] = gelu(pre[i*ldpre+j])
//		}
//	}
//
// A and B, their transposes and leading dimensions are as in Gemm (op(A)
// is m×k, op(B) k×n); pre and out are m×n matrices with leading
// dimensions ldpre and ldout, only written; len(bias) must be at least n.
// k may be 0: every row of pre is then bias[:n]. Neither pre nor out may
// overlap A or B, out must not overlap pre, and bias must overlap neither
// pre nor out in memory (it panics if they do).
//
// On every implementation the results are bitwise those of
//
//	Gemm(transA, transB, m, n, k, 1, a, lda, b, ldb, 0, pre, ldpre)
//	BiasGELU(m, n, pre, ldpre, bias, out, ldout)
//
// on that implementation: pre has Gemm's accuracy plus the one float32
// rounding of the bias addition, and out is gelu of pre with the accuracy
// GELU documents. For a given implementation and GOMAXPROCS the results
// are deterministic.
func (p *Impl) GemmBiasGELU(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, pre []float32, ldpre int, out []float32, ldout int) {
	const fn = "GemmBiasGELU"
	checkGemm(fn, transA, transB, m, n, k, a, lda, b, ldb, "pre", pre, ldpre)
	checkLen(fn, "bias", bias, n)
	checkMatrix(fn, "out", out, m, n, ldout)
	if m == 0 || n == 0 {
		return
	}
	if k > 0 {
		ar, ac := opShape(transA, m, k)
		br, bc := opShape(transB, k, n)
		checkNoOverlap(fn, "out", out, m, n, ldout, "a", a, ar, ac, lda)
		checkNoOverlap(fn, "out", out, m, n, ldout, "b", b, br, bc, ldb)
	}
	checkNoOverlap(fn, "out", out, m, n, ldout, "pre", pre, m, n, ldpre)
	checkNoOverlap(fn, "pre", pre, m, n, ldpre, "bias", bias, 1, n, n)
	checkNoOverlap(fn, "out", out, m, n, ldout, "bias", bias, 1, n, n)
	p.set.GemmBiasGELU(transA, transB, m, n, k, a, lda, b, ldb, bias, pre, ldpre, out, ldout)
}

// GemmBias is a linear layer with its bias added as the GEMM's epilogue,
// on each block of the product while it is still in cache, instead of
// copied into every row of C before a Gemm with beta 1. It sets C =
// op(A)·op(B) + bias (bias[:n] added to every row):
//
//	for i := 0; i < m; i++ {
//		for j := 0; j < n; j++ {
//			var s float32 // summed in any order, as Gemm does
//			for p := 0; p < k; p++ {
//				s += opA(i, p) * opB(p, j)
//			}
//			c[i*ldc+j] = s + bias[j]
//		}
//	}
//
// A and B, their transposes and leading dimensions are as in Gemm (op(A)
// is m×k, op(B) k×n); C is m×n with leading dimension ldc, only written;
// len(bias) must be at least n. k may be 0: every row of C is then
// bias[:n]. C must not overlap A or B, nor bias, in memory (it panics if
// it does).
//
// On every implementation the results are bitwise those of
//
//	Gemm(transA, transB, m, n, k, 1, a, lda, b, ldb, 0, c, ldc)
//	for each row i: Add(C_i, C_i, bias[:n])
//
// on that implementation: Gemm's accuracy plus one float32 rounding for
// the bias. For a given implementation and GOMAXPROCS the results are
// deterministic.
func (p *Impl) GemmBias(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, c []float32, ldc int) {
	const fn = "GemmBias"
	checkGemm(fn, transA, transB, m, n, k, a, lda, b, ldb, "c", c, ldc)
	checkLen(fn, "bias", bias, n)
	if m == 0 || n == 0 {
		return
	}
	checkNoOverlap(fn, "c", c, m, n, ldc, "bias", bias, 1, n, n)
	p.set.GemmBias(transA, transB, m, n, k, a, lda, b, ldb, bias, c, ldc)
}
