package kernels

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

// Matrix products in bfloat16 compute: both operands rounded to bfloat16,
// their products summed in float32, as torch.autocast's CPU matrix
// products and oneDNN's bf16 GEMM do. On CPUs with AVX512_BF16 they run on
// VDPBF16PS, which multiplies and adds twice the float32 FMAs' work per
// instruction, and on Arm CPUs with FEAT_BF16 (ARMv8.6-A) on BFDOT;
// elsewhere, and on the classes of CPU whose float32 FMAs outrun their
// VDPBF16PS (Intel Xeons with two 512-bit FMA units; Impl.BF16Dot
// reports which), they run the float32 GEMM on the rounded operands,
// with the same error contract.
//
// Error contract. Let â and b̂ be the elements of op(A) and op(B) rounded
// to bfloat16 (lowbit.ToBF16: to nearest even, so |â - a| <= 2⁻⁹·|a|;
// finite values beyond the largest bfloat16 round to ±Inf). Against the
// exact (float64) value e = alpha·Σ_p â·b̂ + beta·C of each element,
//
//	|C - e| <= (k+2)·2⁻²³·(|alpha|·Σ_p |â·b̂| + |beta·C|) + |alpha|·2⁻¹²⁶·Σ_p (|â| + |b̂| + 1)
//
// The first term is the float32 sums (each product of two bfloat16 is
// exact in float32 unless it underflows or overflows; the summation order
// differs between implementations); the second covers subnormals: an
// operand below 2⁻¹²⁶ in magnitude (subnormal in float32, or a bfloat16
// subnormal) may count as 0, and a partial sum below 2⁻¹²⁶ may be flushed
// to 0, as VDPBF16PS does whatever MXCSR says (denormals-are-zero and
// flush-to-zero on its inputs and results; the generic and float32
// fallbacks keep subnormals). Against the product of the unrounded
// operands, the rounding adds at most (2⁻⁸ + 2⁻¹⁸)·|alpha|·Σ_p |a·b|.
// Infinities and NaN in A and B propagate as in float32 arithmetic on the
// rounded operands (Inf·0 is NaN; since a subnormal may count as 0, so
// may Inf times a subnormal), and a sum beyond float32's range is ±Inf.
// For a given implementation and GOMAXPROCS the results are
// deterministic; on VDPBF16PS, BFDOT (and generic) they do not depend on
// GOMAXPROCS either: the product is split between goroutines by whole
// slivers of rows or panels of columns, each element computed the same
// way in any part.
//
// What differs on Arm's BFDOT (FEAT_BF16 without FEAT_EBF16's FPCR.EBF,
// which Go leaves 0; Arm ARM, BFDOT and BFDotAdd): each lane adds a pair's
// two products to each other and then to its accumulator, rounding both
// sums to odd (an inexact result gets its last bit set) rather than to
// nearest, so each such rounding errs by less than one unit in the last
// place (2⁻²³ relative) instead of half of one. A product passes at most
// ⌈k/2⌉ of them, plus the round-to-nearest float32(alpha·S) and addition
// of C once per block of k, together within the first term's k+2.
// Products below 2⁻¹²⁶, subnormal inputs and partial sums are flushed
// to zero whatever FPCR says (at most 2⁻¹²⁶ lost per k step: the second
// term), a product or sum beyond float32's range is ±Inf, and a NaN
// result is the default NaN. So on BFDOT the results may differ from
// generic's in the last bits wherever a sum is inexact, and equal them
// bit for bit where every partial sum is exact (small integers, say).

// GemmBF16Compute computes C = alpha*op(A)*op(B) + beta*C as Gemm does
// (same transposes, leading dimensions, alpha and beta, same panics),
// with every element of op(A) and op(B) rounded to bfloat16 and the
// products summed in float32 (see the error contract above). The
// operands are converted once per call into packed bfloat16 panels; C
// must not overlap A or B.
func (p *Impl) GemmBF16Compute(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	checkGemm("GemmBF16Compute", transA, transB, m, n, k, a, lda, b, ldb, "c", c, ldc)
	if m == 0 || n == 0 {
		return
	}
	p.set.GemmBF16Compute(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// GemmBiasBF16Compute is GemmBias in bfloat16 compute: it sets C =
// op(A)·op(B) + bias (bias[:n] added to every row), the product rounded
// and summed as GemmBF16Compute's, the bias added in float32 as the
// GEMM's epilogue. Arguments and panics are GemmBias's. On every
// implementation the results are bitwise those of
//
//	GemmBF16Compute(transA, transB, m, n, k, 1, a, lda, b, ldb, 0, c, ldc)
//	for each row i: Add(C_i, C_i, bias[:n])
//
// on that implementation.
func (p *Impl) GemmBiasBF16Compute(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, c []float32, ldc int) {
	const fn = "GemmBiasBF16Compute"
	checkGemm(fn, transA, transB, m, n, k, a, lda, b, ldb, "c", c, ldc)
	checkLen(fn, "bias", bias, n)
	if m == 0 || n == 0 {
		return
	}
	checkNoOverlap(fn, "c", c, m, n, ldc, "bias", bias, 1, n, n)
	p.set.GemmBiasBF16Compute(transA, transB, m, n, k, a, lda, b, ldb, bias, c, ldc)
}

// GemmBiasGELUBF16Compute is GemmBiasGELU in bfloat16 compute: it sets
// pre = op(A)·op(B) + bias and out = gelu(pre), the product rounded and
// summed as GemmBF16Compute's. Arguments and panics are GemmBiasGELU's.
// On every implementation the results are bitwise those of
//
//	GemmBF16Compute(transA, transB, m, n, k, 1, a, lda, b, ldb, 0, pre, ldpre)
//	BiasGELU(m, n, pre, ldpre, bias, out, ldout)
//
// on that implementation.
func (p *Impl) GemmBiasGELUBF16Compute(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, pre []float32, ldpre int, out []float32, ldout int) {
	const fn = "GemmBiasGELUBF16Compute"
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
	p.set.GemmBiasGELUBF16Compute(transA, transB, m, n, k, a, lda, b, ldb, bias, pre, ldpre, out, ldout)
}

// GemmBF16ComputeWeights computes C = alpha*A·Wᵀ + beta*C for the
// row-major m×w.K matrix A and the bfloat16 weights W (w.N×w.K), as
// GemmBF16Compute does with op(B) = Wᵀ: A is rounded to bfloat16, W is
// read as it is stored (its packed panels are made from its bfloat16
// words, with no float32 round trip), and the products are summed in
// float32 (see the error contract above). Arguments and panics are
// GemmBF16's; unlike GemmBF16, which multiplies the weights by A in
// float32, A is rounded here.
func (p *Impl) GemmBF16ComputeWeights(m int, alpha float32, a []float32, lda int, w *lowbit.BF16, beta float32, c []float32, ldc int) {
	const fn = "GemmBF16ComputeWeights"
	w.Check("kernels." + fn)
	checkLowbit(fn, m, w.N, w.K, a, lda, unsafe.Pointer(unsafe.SliceData(w.Data)), 2*len(w.Data), c, ldc)
	if m == 0 || w.N == 0 {
		return
	}
	p.set.GemmBF16ComputeWeights(m, alpha, a, lda, w, beta, c, ldc)
}

// BF16Dot reports whether GemmBF16Compute and its family run on the
// CPU's bfloat16 dot-product instruction (VDPBF16PS, BFDOT). Where they
// do not, the operands are rounded to bfloat16 for the float32 GEMM, on
// CPUs without the instruction and on classes whose float32 FMAs are
// faster than it (Intel's two 512-bit FMA units), and the FMA peak
// (FMAPeakLoop), not BF16PeakLoop, is their yardstick. The results are
// within the same error contract either way.
func (p *Impl) BF16Dot() bool { return p.set.Instruments.BF16Dot }

// BF16PeakLoop runs iters iterations of a generated loop of independent
// bfloat16 dot products (VDPBF16PS on AVX512_BF16, BFDOT on FEAT_BF16)
// and returns the number of floating-point operations it performed (two
// per product: 0 for implementations without such an instruction on
// this CPU). Timing it gives the CPU's peak bfloat16 rate, the yardstick
// for GemmBF16Compute's figures. It panics if that number of operations
// does not fit in an int.
func (p *Impl) BF16PeakLoop(iters int) (flops int) {
	if p.set.Instruments.BF16Loop == nil || iters <= 0 {
		return 0
	}
	if iters > math.MaxInt/p.set.Instruments.BF16Flops {
		panic(fmt.Sprintf("kernels.Impl.BF16PeakLoop: iters = %d times %d operations per iteration overflows int (%s: at most %d iterations)", iters, p.set.Instruments.BF16Flops, p.set.Name, math.MaxInt/p.set.Instruments.BF16Flops))
	}
	p.set.Instruments.BF16Loop(iters)
	return iters * p.set.Instruments.BF16Flops
}
