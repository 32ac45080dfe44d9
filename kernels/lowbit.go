package kernels

import (
	"fmt"
	"unsafe"

	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

// Products over low-bit weights (package lowbit): W is N×K, stored a row
// an output, and the products read it once, in place, a group of
// lowbit.GroupSize weights at a time.
//
// BF16 weights are converted to float32 in registers (exactly) and
// multiplied by A's elements in float32: each output is the float32 dot
// product of a row of A (or x) with the weights, whose summation order
// differs between implementations: generic sums over p in order; the SIMD
// kernels keep one accumulator of vector lanes per output (lane l
// summing, with FMAs, the products of the p ≡ l modulo the lane count,
// group after group in order, within a group in an order fixed by the
// kernel, the zero-padded last group included), then add the lanes
// pairwise. Against the sum in float64 of the same products,
// |y - y_exact| is at most about (K+2)·2⁻²³·(|alpha|·Σ_p |w(j,p)·x[p]| +
// |beta·y[j]|), as for Gemv.
//
// One exception: on CPUs with AVX512_BF16 the avx512 implementation
// multiplies a single row x of A (GemvBF16, GemmBF16 with m = 1: decoding)
// by the weights as the sum of two bfloat16 vectors: x is scaled by the
// power of two 2ˢ that puts max|x| in [2⁶³, 2⁶⁴) (2¹²⁷ when max|x| < 2⁻⁶⁴),
// and v = 2ˢ·x held as hi = bf16(v) and lo = bf16(v - hi), each rounded
// to nearest even, so hi + lo is within 2⁻¹⁶·|v[p]| of each element;
// VDPBF16PS multiplies them by the weights exactly and adds the products
// in float32, and the sum times alpha·2⁻ˢ (exact in float64) is rounded
// once to float32: two instructions per 32 weights, which are loaded once,
// where converting the weights to float32 takes five on ZMM and ten on
// YMM, so that the product streams its weights from memory faster. This
// adds at most 2⁻¹⁶·|alpha|·Σ_p |w(j,p)·x[p]| to the bound above (the
// weights' own rounding to bfloat16 is 2⁻⁹ of each), plus
// |alpha|·K'·2⁻¹⁸⁷·max(max|x|, 2⁻⁶⁴), K' being K rounded up to a multiple
// of 32, for the partial sums below 2⁻¹²⁶ (after scaling) that VDPBF16PS
// flushes to zero. VDPBF16PS also counts subnormal inputs as 0, so the
// product falls back to the float32 computation above where that or an
// overflow could matter: a row x with an element that is not finite, or
// with a nonzero element whose 2ˢ·x[p] or lo part is subnormal (x spans
// more than about 2¹⁶⁶), is computed in float32 as a whole; so is each
// output whose weights hold a subnormal, or whose sum comes out infinite
// or NaN (an infinite or NaN weight, or products beyond float32's range
// after scaling: weights near 2⁶⁴/K and above), so that these come out as
// in float32 (infinities and NaN propagate, subnormal weights count); the
// other outputs do not depend on them.
//
// Int8 weights are multiplied in integers: each row x of A is quantized
// to int16 by lowbit.QuantizeInt16 (scale sx = max|x|/32767, each element
// within sx/2), each group's 32 products of int8 weights and int16
// activations summed exactly in int32, and the group sums converted to
// float32 and multiplied by the group's scale into a float32 sum (in
// groups, or vector lanes of them, as above), finally multiplied by
// alpha·sx. This reads each weight with two instructions where converting
// it to float32 takes three, so that the products stay bound by memory.
// Against the weights of lowbit's At, the activations' rounding adds at
// most |alpha|·(sx/2)·Σ_p|w(j,p)| to the error bound above, and so may
// underflow below 2⁻¹²⁶ within the sums (each lane's product with a
// subnormal scale is at most 2⁻¹⁵⁰ off, under half of the weight that
// made it): |alpha|·sx·Σ_p|w(j,p)| for both; and an output in float32's
// subnormal range is rounded to a multiple of 2⁻¹⁴⁹.
//
// At the ends of float32's range no intermediate overflows where the
// result does not: a row of A with an element that is not finite, whose
// elements are all below 32767·2⁻¹²⁶ in magnitude, or whose alpha·sx is
// outside [2⁻¹²⁶, MaxFloat32] (computed in float64), is computed instead
// from the weights of At in float64, each product exact and the result
// rounded once to float32; and so is any output of the integer path that
// comes out infinite or NaN (a group's sum times its scale, or their
// total, beyond float32 with huge weights), from C's value before the
// call. So an output is finite and within the bound whenever the bound
// and the exact result together stay below MaxFloat32, and NaN and
// infinities in A or C propagate as in float32.
//
// For a given implementation results are deterministic and do not depend
// on GOMAXPROCS: large W are split by output columns between goroutines,
// each output computed the same way in any part.

// GemmBF16 computes C = alpha*A·Wᵀ + beta*C for the row-major m×w.K
// matrix A (leading dimension lda >= max(w.K, 1)), the bfloat16 matrix W
// (w.N×w.K) and the row-major m×w.N matrix C (leading dimension
// ldc >= max(w.N, 1)): C[i][j] is the dot product of row i of A with row
// j of W. It is built for few rows of A (decoding: m = 1..8 tokens), where
// reading W dominates; the kernels take up to 8 rows of A for each pass
// over W. From 16 rows of A on (prompt processing), the SIMD
// implementations instead run the float32 Gemm on W converted once to
// float32 (exactly): from 17 rows as the GEMM packs its panels of W, at
// 16 into a float32 copy of W, so that W is not converted again for
// every 8 rows: the same float32 sums of the same products, in Gemm's
// order, within the same bound.
//
// When beta is 0, C is only written, never read; when alpha is 0 or w.K
// is 0, A and W are not read and C = beta*C. C must overlap neither A nor
// w.Data. See the section's comment for the accuracy.
func (p *Impl) GemmBF16(m int, alpha float32, a []float32, lda int, w *lowbit.BF16, beta float32, c []float32, ldc int) {
	const fn = "GemmBF16"
	w.Check("kernels." + fn)
	checkLowbit(fn, m, w.N, w.K, a, lda, unsafe.Pointer(unsafe.SliceData(w.Data)), 2*len(w.Data), c, ldc)
	p.set.GemmBF16(m, alpha, a, lda, w, beta, c, ldc)
}

// GemmInt8 computes C = alpha*A·Wᵀ + beta*C as GemmBF16 does, for the int8
// matrix W (w.N×w.K, one scale a group of lowbit.GroupSize along K). C
// must overlap neither A nor w.Blocks.
func (p *Impl) GemmInt8(m int, alpha float32, a []float32, lda int, w *lowbit.Int8, beta float32, c []float32, ldc int) {
	const fn = "GemmInt8"
	w.Check("kernels." + fn)
	checkLowbit(fn, m, w.N, w.K, a, lda, unsafe.Pointer(unsafe.SliceData(w.Blocks)), int(unsafe.Sizeof(lowbit.Int8Block{}))*len(w.Blocks), c, ldc)
	p.set.GemmInt8(m, alpha, a, lda, w, beta, c, ldc)
}

// GemvBF16 computes y = alpha*W·x + beta*y for the bfloat16 matrix W
// (w.N×w.K), x of w.K and y of w.N elements (only the first w.K or w.N of
// a longer slice are used): GemmBF16 with one row. When beta is 0, y is
// only written; when alpha is 0 or w.K is 0, W and x are not read. y must
// overlap neither x nor w.Data.
func (p *Impl) GemvBF16(alpha float32, w *lowbit.BF16, x []float32, beta float32, y []float32) {
	const fn = "GemvBF16"
	w.Check("kernels." + fn)
	checkGemvLowbit(fn, w.N, w.K, unsafe.Pointer(unsafe.SliceData(w.Data)), 2*len(w.Data), x, y)
	p.set.GemmBF16(1, alpha, x, max(w.K, 1), w, beta, y, max(w.N, 1))
}

// GemvInt8 computes y = alpha*W·x + beta*y for the int8 matrix W
// (w.N×w.K), as GemvBF16 does. y must overlap neither x nor w.Blocks.
func (p *Impl) GemvInt8(alpha float32, w *lowbit.Int8, x []float32, beta float32, y []float32) {
	const fn = "GemvInt8"
	w.Check("kernels." + fn)
	checkGemvLowbit(fn, w.N, w.K, unsafe.Pointer(unsafe.SliceData(w.Blocks)), int(unsafe.Sizeof(lowbit.Int8Block{}))*len(w.Blocks), x, y)
	p.set.GemmInt8(1, alpha, x, max(w.K, 1), w, beta, y, max(w.N, 1))
}

// GemmDequantInt8 computes C = alpha*A·Wᵀ + beta*C for the row-major
// m×w.K matrix A (leading dimension lda >= max(w.K, 1)), the int8 matrix
// W (w.N×w.K) and the row-major m×w.N matrix C (leading dimension
// ldc >= max(w.N, 1)) with W's weights dequantized (lowbit.Int8.At) and
// float32 products: bit for bit
//
//	p.DequantizeInt8(w, 0, w.N, d, w.K)
//	p.Gemm(false, true, m, w.N, w.K, alpha, a, lda, d, w.K, beta, c, ldc)
//
// without the N×K copy d. It is how prompt processing multiplies int8
// weights: the float32 GEMM takes many rows of A per pass over W, where
// the int8 kernels (GemmInt8) take up to 8. On implementations with a
// packing kernel for int8 weights (avx2, avx512), the GEMM packs its B panels
// straight from W; the others dequantize W a panel of 256 rows at a time.
//
// When beta is 0, C is only written, never read; when alpha is 0 or w.K
// is 0, A and W are not read and C = beta*C. C must overlap neither A nor
// w.Blocks.
func (p *Impl) GemmDequantInt8(m int, alpha float32, a []float32, lda int, w *lowbit.Int8, beta float32, c []float32, ldc int) {
	const fn = "GemmDequantInt8"
	w.Check("kernels." + fn)
	checkLowbit(fn, m, w.N, w.K, a, lda, unsafe.Pointer(unsafe.SliceData(w.Blocks)), int(unsafe.Sizeof(lowbit.Int8Block{}))*len(w.Blocks), c, ldc)
	if m == 0 || w.N == 0 {
		return
	}
	p.set.GemmDequantInt8(m, alpha, a, lda, w, beta, c, ldc)
}

// DequantizeInt8 writes rows j0 .. j0+n-1 of the int8 matrix W (w.N×w.K)
// into the row-major n×w.K matrix D (leading dimension ldd >= max(w.K,
// 1)), each weight as lowbit.Int8.At gives it: D[r][p] = W(j0+r, p), its
// group's scale times the int8 value, rounded once to float32, the same
// bit for bit in every implementation: for products over int8 weights in
// another precision (GemmBF16Compute on D); GemmDequantInt8 is the
// float32 product without the copy. It panics unless 0 <= j0 <= j0+n <=
// w.N and D fits its slice.
func (p *Impl) DequantizeInt8(w *lowbit.Int8, j0, n int, d []float32, ldd int) {
	const fn = "DequantizeInt8"
	w.Check("kernels." + fn)
	checkDims(fn, []string{"j0", "n"}, j0, n)
	if n > w.N-j0 {
		panic(fmt.Sprintf("kernels.%s: rows j0 = %d to j0+n = %s are outside w's %d rows", fn, j0, bigSum(j0, n), w.N))
	}
	if ldd < max(w.K, 1) {
		panic(fmt.Sprintf("kernels.%s: ldd = %d, want >= max(w.K, 1) = %d", fn, ldd, max(w.K, 1)))
	}
	checkMatrix(fn, "d", d, n, w.K, ldd)
	p.set.DequantizeInt8(w, j0, n, d, ldd)
}
