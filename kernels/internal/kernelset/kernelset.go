// Package kernelset defines Set, the one list of the kernels an
// implementation of package kernels provides, and the registry of every
// implementation compiled into a program.
//
// The functions of a Set trust their arguments: package kernels checks
// every shape (kernels/check.go) before calling one, and the contracts
// below are what those checks guarantee. Because this package is
// internal, nothing outside the module can call them unchecked.
//
// Adding a kernel means adding one field here (with its contract), its
// generic version (kernels/generic), its checked method on kernels.Impl,
// its wiring in each ISA folder (kernels/amd64, kernels/arm64) and a row
// in kernels' parity-test table (set_test.go); the dispatch, the list of
// implementations, the benchmarks and the tests that every field is wired
// all derive from this type.
package kernelset

import "sync"

// Set is one implementation of every kernel, such as "generic", "avx2",
// "avx512" or "neon". Every func field is set, except FMALoop for
// implementations without SIMD registers.
type Set struct {
	// Name is the implementation's name, the value SIMDGPT_ISA accepts.
	Name string
	// Requires names the CPU features needed, such as "AVX2, FMA"; empty
	// for generic.
	Requires string
	// Available reports whether this CPU and OS can run the set.
	Available bool

	// Gemm computes C = alpha*op(A)*op(B) + beta*C (see kernels.Gemm).
	// m, n > 0, k >= 0; every matrix fits its slice with its leading
	// dimension; C overlaps neither A nor B; C is not read when beta is 0.
	Gemm func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)

	// Softmax writes the row-wise softmax of the m×n matrix x into y.
	// m, n > 0; both fit their slices; y is x (same start and leading
	// dimension) or does not overlap it.
	Softmax func(m, n int, x []float32, ldx int, y []float32, ldy int)

	// SoftmaxBackward sets dx = y*(dy - rowsum(y*dy)) row by row.
	// m, n > 0; all three fit their slices; dx is dy or apart from it,
	// and apart from y.
	SoftmaxBackward func(m, n int, y []float32, ldy int, dy []float32, lddy int, dx []float32, lddx int)

	// MaskedScores computes S = scale*Q*Kᵀ with the causal mask (see
	// kernels.MaskedScores). tq, tk > 0, d >= 0; every matrix fits its
	// slice; S overlaps neither Q nor K.
	MaskedScores func(tq, tk, d int, scale float32, q []float32, ldq int, k []float32, ldk int, offset int, s []float32, lds int)

	// Dot returns sum x[i]*y[i]; len(x) == len(y).
	Dot func(x, y []float32) float32
	// Axpy sets y[i] += alpha*x[i]; len(x) == len(y).
	Axpy func(alpha float32, x, y []float32)
	// Scale sets x[i] *= alpha.
	Scale func(alpha float32, x []float32)
	// Add sets dst[i] = x[i] + y[i]; all lengths equal; dst is x, y or
	// apart from both.
	Add func(dst, x, y []float32)
	// Sum returns the sum of x (0 when empty).
	Sum func(x []float32) float32
	// Max returns the largest element of x: -Inf when empty, the first
	// NaN element when there is one.
	Max func(x []float32) float32

	// LayerNorm normalises each row of the m×n matrix x into y (see
	// kernels.LayerNorm). m, n > 0; x and y fit their slices; y is x
	// (same start and leading dimension) or apart from it; gamma and beta
	// hold at least n; mean and rstd are nil or hold at least m.
	LayerNorm func(m, n int, x []float32, ldx int, gamma, beta []float32, eps float32, y []float32, ldy int, mean, rstd []float32)
	// LayerNormBackward accumulates the gradients of LayerNorm into dx,
	// dgamma and dbeta (see kernels.LayerNormBackward). m, n > 0; dy, x
	// and dx fit their slices, dx apart from dy and x; mean and rstd hold
	// at least m; gamma, dgamma and dbeta at least n, dgamma apart from
	// dbeta.
	LayerNormBackward func(m, n int, dy []float32, lddy int, x []float32, ldx int, mean, rstd, gamma []float32, dx []float32, lddx int, dgamma, dbeta []float32)
	// AdamW applies one AdamW step to every element of params from grads,
	// updating the moments m and v, with the arithmetic of
	// generic.AdamW (bit for bit). All four have the same length; none
	// overlaps another.
	AdamW func(params, grads, m, v []float32, h AdamWParams)
	// SumSquares returns sum x[i]*x[i], each square exact in float64 and
	// summed in float64 (0 when empty).
	SumSquares func(x []float32) float64
	// SoftmaxCrossEntropy writes, per row i of the m×n logits, the loss
	// logsumexp(logits[i,:]) - logits[i,targets[i]] into losses[i] and
	// scale*(softmax(logits[i,:]) - onehot(targets[i])) into dlogits[i,:]
	// (see kernels.SoftmaxCrossEntropy). m, n > 0; both matrices fit their
	// slices; len(targets), len(losses) >= m; every target is in [0, n);
	// dlogits is logits (same start and leading dimension) or apart from
	// it; losses overlaps neither.
	SoftmaxCrossEntropy func(m, n int, logits []float32, ldl int, targets []int32, scale float32, dlogits []float32, lddl int, losses []float32)
	// GELU sets dst[i] = gelu(x[i]) (tanh form, see kernels.GELU);
	// len(dst) == len(x); dst is x or apart from it.
	GELU func(dst, x []float32)
	// GELUBackward sets dx[i] = dy[i]*gelu'(x[i]); all lengths equal;
	// dx is dy or apart from it, and apart from x.
	GELUBackward func(dx, dy, x []float32)
	// BiasGELU adds bias[:n] to every row of the m×n matrix x in place
	// and sets y = gelu(x) (see kernels.BiasGELU). m, n > 0; x and y fit
	// their slices, len(bias) >= n; y is x (same start and leading
	// dimension) or apart from it; bias is apart from x and y.
	BiasGELU func(m, n int, x []float32, ldx int, bias []float32, y []float32, ldy int)
	// GemmBiasGELU sets pre = op(A)·op(B) + bias (bias[:n] added to
	// every row) and out = gelu(pre), with the arithmetic of Gemm (alpha
	// 1, beta 0) followed by BiasGELU (see kernels.GemmBiasGELU). m, n >
	// 0, k >= 0; every matrix fits its slice, len(bias) >= n; pre and out
	// overlap neither A nor B (when k > 0), nor each other, nor bias.
	GemmBiasGELU func(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, pre []float32, ldpre int, out []float32, ldout int)

	// FMALoop runs n >= 1 iterations of FMAFlops floating-point
	// operations of independent FMAs in the set's widest registers, for
	// measuring the CPU's peak; nil (and FMAFlops 0) for generic.
	FMALoop  func(n int)
	FMAFlops int
}

var (
	mu   sync.Mutex
	sets []*Set
)

// Register adds s to the registry. The ISA packages call it from init,
// slowest implementation first.
func Register(s *Set) {
	mu.Lock()
	defer mu.Unlock()
	for _, t := range sets {
		if t.Name == s.Name {
			panic("kernelset: implementation " + s.Name + " registered twice")
		}
	}
	sets = append(sets, s)
}

// All returns every registered set, in the order of registration,
// available or not.
func All() []*Set {
	mu.Lock()
	defer mu.Unlock()
	return append([]*Set(nil), sets...)
}

// AdamWParams are the scalars of one AdamW step (see kernels.AdamWParams,
// which converts to this type).
type AdamWParams struct {
	LR, Beta1, Beta2, Eps, WeightDecay, GradScale, InvBiasCorr1, InvBiasCorr2 float32
}
