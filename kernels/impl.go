package kernels

import (
	"math"
	"sync/atomic"
)

// Impl is one implementation of every kernel, such as "generic" or
// "avx512". Its methods check their arguments exactly as the package-level
// functions do; the package-level functions call the methods of Default.
// An *Impl is safe for concurrent use.
type Impl struct {
	name      string
	requires  string
	available bool
	ops       ops
}

// ops holds the unchecked kernels of one implementation. Every function
// may assume its arguments were validated by the checked wrappers.
type ops struct {
	gemm            func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)
	softmax         func(m, n int, x []float32, ldx int, y []float32, ldy int)
	softmaxBackward func(m, n int, y []float32, ldy int, dy []float32, lddy int, dx []float32, lddx int)
	maskedScores    func(tq, tk, d int, scale float32, q []float32, ldq int, k []float32, ldk int, offset int, s []float32, lds int)
	dot             func(x, y []float32) float32
	axpy            func(alpha float32, x, y []float32)
	scale           func(alpha float32, x []float32)
	add             func(dst, x, y []float32)
	sum             func(x []float32) float32
	max             func(x []float32) float32

	// fmaLoop runs n iterations of fmaFlops floating-point operations of
	// independent FMAs; nil for generic. Only for measuring peak.
	fmaLoop  func(n int)
	fmaFlops int
}

// Name returns the implementation's name: "generic", "avx2", "avx512" or
// "neon". It is the value SIMDGPT_ISA accepts.
func (p *Impl) Name() string { return p.name }

// Requires names the CPU features the implementation needs, such as
// "AVX2, FMA"; it is empty for generic.
func (p *Impl) Requires() string { return p.requires }

// FMAPeakLoop runs iters iterations of a generated loop of independent
// FMAs in this implementation's widest registers and returns the number of
// floating-point operations it performed (0 for generic, which has none).
// Timing it gives the CPU's peak float32 FMA rate for this instruction set,
// the yardstick for every GEMM figure.
func (p *Impl) FMAPeakLoop(iters int) (flops int) {
	if p.ops.fmaLoop == nil || iters <= 0 {
		return 0
	}
	p.ops.fmaLoop(iters)
	return iters * p.ops.fmaFlops
}

// String returns the name.
func (p *Impl) String() string { return p.name }

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
	p.ops.gemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
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
	p.ops.gemm(false, false, m, n, k, 1, a, k, b, n, 0, c, n)
}

// Softmax writes the row-wise softmax of the m×n matrix x (leading
// dimension ldx) into y (leading dimension ldy). x and y may be the same
// matrix: the same slice with the same leading dimension; otherwise they
// must not overlap in memory (it panics if they do).
//
// The row maximum is subtracted before exponentiation, so large finite
// inputs are safe. Special values have defined results: an entry of -Inf
// gets probability exactly 0; a row that is entirely -Inf (fully masked)
// becomes all 0; a row containing NaN or +Inf becomes all NaN.
//
// Accuracy: the relative error of every output against a float64
// computation is at most 2e-6 for the SIMD implementations (which use a
// polynomial exp) and about 1e-7 for generic.
func (p *Impl) Softmax(m, n int, x []float32, ldx int, y []float32, ldy int) {
	checkDims("Softmax", []string{"m", "n"}, m, n)
	checkMatrix("Softmax", "x", x, m, n, ldx)
	checkMatrix("Softmax", "y", y, m, n, ldy)
	if m == 0 || n == 0 {
		return
	}
	checkInPlaceOrApart("Softmax", "y", y, ldy, "x", x, ldx, m, n)
	p.ops.softmax(m, n, x, ldx, y, ldy)
}

// SoftmaxBackward computes the gradient through a row-wise softmax. y is
// the m×n softmax output and dy the gradient of the loss with respect to
// it; dx receives the gradient with respect to the softmax input:
//
//	dx[i,j] = y[i,j] * (dy[i,j] - sum_k y[i,k]*dy[i,k])
//
// dx may be the same matrix as dy (same start, same leading dimension);
// otherwise dx must not overlap dy or y in memory (it panics if it does).
func (p *Impl) SoftmaxBackward(m, n int, y []float32, ldy int, dy []float32, lddy int, dx []float32, lddx int) {
	checkDims("SoftmaxBackward", []string{"m", "n"}, m, n)
	checkMatrix("SoftmaxBackward", "y", y, m, n, ldy)
	checkMatrix("SoftmaxBackward", "dy", dy, m, n, lddy)
	checkMatrix("SoftmaxBackward", "dx", dx, m, n, lddx)
	if m == 0 || n == 0 {
		return
	}
	checkInPlaceOrApart("SoftmaxBackward", "dx", dx, lddx, "dy", dy, lddy, m, n)
	checkNoOverlap("SoftmaxBackward", "dx", dx, m, n, lddx, "y", y, m, n, ldy)
	p.ops.softmaxBackward(m, n, y, ldy, dy, lddy, dx, lddx)
}

// MaskedScores computes the causally masked attention scores of one head:
//
//	S[i,j] = scale * dot(Q[i,:], K[j,:])   if j <= i+offset
//	S[i,j] = -Inf                          otherwise
//
// Q is tq×d with leading dimension ldq, K is tk×d (ldk) and S is tq×tk
// (lds). offset is the number of cached keys before the first query: with
// a KV cache holding offset earlier positions, query i is position
// i+offset. offset may be negative. S must not overlap Q or K in memory
// (it panics if it does). The SIMD implementations compute the
// scores in tiles and skip every tile that is wholly masked.
func (p *Impl) MaskedScores(tq, tk, d int, scale float32, q []float32, ldq int, k []float32, ldk int, offset int, s []float32, lds int) {
	checkDims("MaskedScores", []string{"tq", "tk", "d"}, tq, tk, d)
	checkMatrix("MaskedScores", "q", q, tq, d, ldq)
	checkMatrix("MaskedScores", "k", k, tk, d, ldk)
	checkMatrix("MaskedScores", "s", s, tq, tk, lds)
	if tq == 0 || tk == 0 {
		return
	}
	checkNoOverlap("MaskedScores", "s", s, tq, tk, lds, "q", q, tq, d, ldq)
	checkNoOverlap("MaskedScores", "s", s, tq, tk, lds, "k", k, tk, d, ldk)
	p.ops.maskedScores(tq, tk, d, scale, q, ldq, k, ldk, offset, s, lds)
}

// Dot returns the dot product of x and y, which must have equal lengths.
func (p *Impl) Dot(x, y []float32) float32 {
	checkSameLen("Dot", "x", "y", len(x), len(y))
	return p.ops.dot(x, y)
}

// Axpy sets y[i] += alpha*x[i]; x and y must have equal lengths.
func (p *Impl) Axpy(alpha float32, x, y []float32) {
	checkSameLen("Axpy", "x", "y", len(x), len(y))
	p.ops.axpy(alpha, x, y)
}

// Scale sets x[i] *= alpha.
func (p *Impl) Scale(alpha float32, x []float32) { p.ops.scale(alpha, x) }

// Add sets dst[i] = x[i] + y[i]; all three must have equal lengths and
// dst may be x or y.
func (p *Impl) Add(dst, x, y []float32) {
	checkSameLen("Add", "dst", "x", len(dst), len(x))
	checkSameLen("Add", "dst", "y", len(dst), len(y))
	p.ops.add(dst, x, y)
}

// Sum returns the sum of the elements of x, 0 if x is empty.
func (p *Impl) Sum(x []float32) float32 { return p.ops.sum(x) }

// Max returns the largest element of x: -Inf if x is empty, NaN if any
// element is NaN.
func (p *Impl) Max(x []float32) float32 {
	if len(x) == 0 {
		return float32(math.Inf(-1))
	}
	return p.ops.max(x)
}

// current is the implementation behind the package-level functions.
var current atomic.Pointer[Impl]

// Default returns the implementation the package-level functions use.
func Default() *Impl { return current.Load() }

// Gemm computes C = alpha*op(A)*op(B) + beta*C with the default
// implementation; see (*Impl).Gemm.
func Gemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	current.Load().Gemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// MatMul computes C = A*B for contiguous row-major matrices (A m×k, B k×n,
// C m×n) with the default implementation; see (*Impl).MatMul.
func MatMul(m, n, k int, a, b, c []float32) { current.Load().MatMul(m, n, k, a, b, c) }

// Softmax writes the row-wise softmax of x into y with the default
// implementation; see (*Impl).Softmax.
func Softmax(m, n int, x []float32, ldx int, y []float32, ldy int) {
	current.Load().Softmax(m, n, x, ldx, y, ldy)
}

// SoftmaxBackward computes the gradient through a row-wise softmax with the
// default implementation; see (*Impl).SoftmaxBackward.
func SoftmaxBackward(m, n int, y []float32, ldy int, dy []float32, lddy int, dx []float32, lddx int) {
	current.Load().SoftmaxBackward(m, n, y, ldy, dy, lddy, dx, lddx)
}

// MaskedScores computes causally masked attention scores with the default
// implementation; see (*Impl).MaskedScores.
func MaskedScores(tq, tk, d int, scale float32, q []float32, ldq int, k []float32, ldk int, offset int, s []float32, lds int) {
	current.Load().MaskedScores(tq, tk, d, scale, q, ldq, k, ldk, offset, s, lds)
}

// Dot returns the dot product of x and y with the default implementation.
func Dot(x, y []float32) float32 { return current.Load().Dot(x, y) }

// Axpy sets y[i] += alpha*x[i] with the default implementation.
func Axpy(alpha float32, x, y []float32) { current.Load().Axpy(alpha, x, y) }

// Scale sets x[i] *= alpha with the default implementation.
func Scale(alpha float32, x []float32) { current.Load().Scale(alpha, x) }

// Add sets dst[i] = x[i] + y[i] with the default implementation.
func Add(dst, x, y []float32) { current.Load().Add(dst, x, y) }

// Sum returns the sum of x with the default implementation.
func Sum(x []float32) float32 { return current.Load().Sum(x) }

// Max returns the largest element of x with the default implementation.
func Max(x []float32) float32 { return current.Load().Max(x) }
