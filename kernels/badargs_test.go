//go:build unix

package kernels

import (
	"fmt"
	"math"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/simdgpt/simdgpt/kernels/internal/guard"
	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

// kernelAPI is every kernel of the package with an argument to check:
// each *Impl has these methods, and pkgLevel calls the package-level
// functions of the same names. (Scale, Sum, Max and SumSquares take one
// slice of any length and have nothing to reject.)
type kernelAPI interface {
	Gemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)
	MatMul(m, n, k int, a, b, c []float32)
	GemmBiasGELU(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, pre []float32, ldpre int, out []float32, ldout int)
	GemmBias(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, c []float32, ldc int)
	GemmBF16Compute(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)
	GemmBiasBF16Compute(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, c []float32, ldc int)
	GemmBiasGELUBF16Compute(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, pre []float32, ldpre int, out []float32, ldout int)
	GemmBF16ComputeWeights(m int, alpha float32, a []float32, lda int, w *lowbit.BF16, beta float32, c []float32, ldc int)
	Softmax(m, n int, x []float32, ldx int, y []float32, ldy int)
	SoftmaxBackward(m, n int, y []float32, ldy int, dy []float32, lddy int, dx []float32, lddx int)
	MaskedScores(tq, tk, d int, scale float32, q []float32, ldq int, k []float32, ldk int, offset int, s []float32, lds int)
	Dot(x, y []float32) float32
	Axpy(alpha float32, x, y []float32)
	Add(dst, x, y []float32)
	LayerNorm(m, n int, x []float32, ldx int, gamma, beta []float32, eps float32, y []float32, ldy int, mean, rstd []float32)
	LayerNormBackward(m, n int, dy []float32, lddy int, x []float32, ldx int, mean, rstd, gamma []float32, dx []float32, lddx int, dgamma, dbeta []float32)
	AddLayerNorm(m, n int, x []float32, ldx int, r []float32, ldr int, sum []float32, ldsum int, gamma, beta []float32, eps float32, y []float32, ldy int, mean, rstd []float32)
	AdamW(params, grads, m, v []float32, h AdamWParams)
	SoftmaxCrossEntropy(m, n int, logits []float32, ldl int, targets []int32, scale float32, dlogits []float32, lddl int, losses []float32)
	GELU(dst, x []float32)
	GELUBackward(dx, dy, x []float32)
	BiasGELU(m, n int, x []float32, ldx int, bias []float32, y []float32, ldy int)
	GemmBF16(m int, alpha float32, a []float32, lda int, w *lowbit.BF16, beta float32, c []float32, ldc int)
	GemmInt8(m int, alpha float32, a []float32, lda int, w *lowbit.Int8, beta float32, c []float32, ldc int)
	GemvBF16(alpha float32, w *lowbit.BF16, x []float32, beta float32, y []float32)
	GemvInt8(alpha float32, w *lowbit.Int8, x []float32, beta float32, y []float32)
	DequantizeInt8(w *lowbit.Int8, j0, n int, d []float32, ldd int)
	GemmDequantInt8(m int, alpha float32, a []float32, lda int, w *lowbit.Int8, beta float32, c []float32, ldc int)
}

// kernelAPIType lists the methods of kernelAPI.
var kernelAPIType = reflect.TypeFor[kernelAPI]()

// pkgLevel is the package-level API seen as a kernelAPI.
type pkgLevel struct{}

func (pkgLevel) Gemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	Gemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}
func (pkgLevel) MatMul(m, n, k int, a, b, c []float32) { MatMul(m, n, k, a, b, c) }
func (pkgLevel) GemmBiasGELU(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, pre []float32, ldpre int, out []float32, ldout int) {
	GemmBiasGELU(transA, transB, m, n, k, a, lda, b, ldb, bias, pre, ldpre, out, ldout)
}
func (pkgLevel) GemmBias(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, c []float32, ldc int) {
	GemmBias(transA, transB, m, n, k, a, lda, b, ldb, bias, c, ldc)
}
func (pkgLevel) GemmBF16Compute(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	GemmBF16Compute(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}
func (pkgLevel) GemmBiasBF16Compute(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, c []float32, ldc int) {
	GemmBiasBF16Compute(transA, transB, m, n, k, a, lda, b, ldb, bias, c, ldc)
}
func (pkgLevel) GemmBiasGELUBF16Compute(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, pre []float32, ldpre int, out []float32, ldout int) {
	GemmBiasGELUBF16Compute(transA, transB, m, n, k, a, lda, b, ldb, bias, pre, ldpre, out, ldout)
}
func (pkgLevel) GemmBF16ComputeWeights(m int, alpha float32, a []float32, lda int, w *lowbit.BF16, beta float32, c []float32, ldc int) {
	GemmBF16ComputeWeights(m, alpha, a, lda, w, beta, c, ldc)
}
func (pkgLevel) Softmax(m, n int, x []float32, ldx int, y []float32, ldy int) {
	Softmax(m, n, x, ldx, y, ldy)
}
func (pkgLevel) SoftmaxBackward(m, n int, y []float32, ldy int, dy []float32, lddy int, dx []float32, lddx int) {
	SoftmaxBackward(m, n, y, ldy, dy, lddy, dx, lddx)
}
func (pkgLevel) MaskedScores(tq, tk, d int, scale float32, q []float32, ldq int, k []float32, ldk int, offset int, s []float32, lds int) {
	MaskedScores(tq, tk, d, scale, q, ldq, k, ldk, offset, s, lds)
}
func (pkgLevel) Dot(x, y []float32) float32         { return Dot(x, y) }
func (pkgLevel) Axpy(alpha float32, x, y []float32) { Axpy(alpha, x, y) }
func (pkgLevel) Add(dst, x, y []float32)            { Add(dst, x, y) }
func (pkgLevel) LayerNorm(m, n int, x []float32, ldx int, gamma, beta []float32, eps float32, y []float32, ldy int, mean, rstd []float32) {
	LayerNorm(m, n, x, ldx, gamma, beta, eps, y, ldy, mean, rstd)
}
func (pkgLevel) LayerNormBackward(m, n int, dy []float32, lddy int, x []float32, ldx int, mean, rstd, gamma []float32, dx []float32, lddx int, dgamma, dbeta []float32) {
	LayerNormBackward(m, n, dy, lddy, x, ldx, mean, rstd, gamma, dx, lddx, dgamma, dbeta)
}
func (pkgLevel) AddLayerNorm(m, n int, x []float32, ldx int, r []float32, ldr int, sum []float32, ldsum int, gamma, beta []float32, eps float32, y []float32, ldy int, mean, rstd []float32) {
	AddLayerNorm(m, n, x, ldx, r, ldr, sum, ldsum, gamma, beta, eps, y, ldy, mean, rstd)
}
func (pkgLevel) AdamW(params, grads, m, v []float32, h AdamWParams) { AdamW(params, grads, m, v, h) }
func (pkgLevel) SoftmaxCrossEntropy(m, n int, logits []float32, ldl int, targets []int32, scale float32, dlogits []float32, lddl int, losses []float32) {
	SoftmaxCrossEntropy(m, n, logits, ldl, targets, scale, dlogits, lddl, losses)
}
func (pkgLevel) GELU(dst, x []float32)            { GELU(dst, x) }
func (pkgLevel) GELUBackward(dx, dy, x []float32) { GELUBackward(dx, dy, x) }
func (pkgLevel) BiasGELU(m, n int, x []float32, ldx int, bias []float32, y []float32, ldy int) {
	BiasGELU(m, n, x, ldx, bias, y, ldy)
}
func (pkgLevel) GemmBF16(m int, alpha float32, a []float32, lda int, w *lowbit.BF16, beta float32, c []float32, ldc int) {
	GemmBF16(m, alpha, a, lda, w, beta, c, ldc)
}
func (pkgLevel) GemmInt8(m int, alpha float32, a []float32, lda int, w *lowbit.Int8, beta float32, c []float32, ldc int) {
	GemmInt8(m, alpha, a, lda, w, beta, c, ldc)
}
func (pkgLevel) GemvBF16(alpha float32, w *lowbit.BF16, x []float32, beta float32, y []float32) {
	GemvBF16(alpha, w, x, beta, y)
}
func (pkgLevel) GemvInt8(alpha float32, w *lowbit.Int8, x []float32, beta float32, y []float32) {
	GemvInt8(alpha, w, x, beta, y)
}
func (pkgLevel) DequantizeInt8(w *lowbit.Int8, j0, n int, d []float32, ldd int) {
	DequantizeInt8(w, j0, n, d, ldd)
}
func (pkgLevel) GemmDequantInt8(m int, alpha float32, a []float32, lda int, w *lowbit.Int8, beta float32, c []float32, ldc int) {
	GemmDequantInt8(m, alpha, a, lda, w, beta, c, ldc)
}

// badArgCase is one call with a bad argument: fn is the function's name,
// which the panic message must start with ("kernels.fn: "), and want a
// part of the message naming the argument and its numbers.
type badArgCase struct {
	fn, want string
	call     func(k kernelAPI)
}

// badArgCases returns the bad calls, every slice a part of arena (at
// least 1024 long), whose last element is flush against an unmapped page:
// a slice made short by tail ends there, so that a kernel going past it
// faults.
func badArgCases(arena []float32) []badArgCase {
	s := func(off, n int) []float32 { return arena[off : off+n : off+n] }
	tail := func(n int) []float32 { return arena[len(arena)-n:] }
	const big = math.MaxInt
	adam := AdamWParams{LR: 1e-3, Beta1: 0.9, Beta2: 0.95, Eps: 1e-8, GradScale: 1, InvBiasCorr1: 10, InvBiasCorr2: 20}
	targets := []int32{0, 1, 2, 3}
	// Low-bit weights, 4×40, apart from the arena; and matrices whose
	// N·K elements overflow int (to 0 for 2⁴⁰×2⁴⁰) with no storage.
	wb, wq := lowbit.NewBF16(4, 40), lowbit.NewInt8(4, 40)
	hugeB, hugeQ := &lowbit.BF16{N: pow2(40), K: pow2(40)}, &lowbit.Int8{N: pow2(40), K: pow2(40)}
	return []badArgCase{
		// The products over low-bit weights: A 2×40, C 2×4 at 0 and 200.
		{"GemmBF16", "m = -1, must be >= 0", func(k kernelAPI) { k.GemmBF16(-1, 1, s(0, 80), 40, wb, 0, s(200, 8), 4) }},
		{"GemmBF16", "lda = 39, want >= max(w.K, 1) = 40", func(k kernelAPI) { k.GemmBF16(2, 1, s(0, 80), 39, wb, 0, s(200, 8), 4) }},
		{"GemmBF16", "len(c) = 7, want >= 8", func(k kernelAPI) { k.GemmBF16(2, 1, s(0, 80), 40, wb, 1, tail(7), 4) }},
		{"GemmBF16", "BF16 1099511627776×1099511627776: ", func(k kernelAPI) { k.GemmBF16(2, 1, s(0, 80), 40, hugeB, 0, s(200, 8), 4) }},
		{"GemmInt8", "ldc = 3, want >= max(w.N, 1) = 4", func(k kernelAPI) { k.GemmInt8(2, 1, s(0, 80), 40, wq, 0, s(200, 8), 3) }},
		{"GemmInt8", "len(a) = 79, want >= 80", func(k kernelAPI) { k.GemmInt8(2, 1, tail(79), 40, wq, 0, s(200, 8), 4) }},
		{"GemmInt8", "Int8 1099511627776×1099511627776: ", func(k kernelAPI) { k.GemmInt8(2, 1, s(0, 80), 40, hugeQ, 0, s(200, 8), 4) }},
		{"GemmInt8", "nil *lowbit.Int8", func(k kernelAPI) { k.GemmInt8(2, 1, s(0, 80), 40, nil, 0, s(200, 8), 4) }},
		{"GemmDequantInt8", "m = -1, must be >= 0", func(k kernelAPI) { k.GemmDequantInt8(-1, 1, s(0, 80), 40, wq, 0, s(200, 8), 4) }},
		{"GemmDequantInt8", "lda = 39, want >= max(w.K, 1) = 40", func(k kernelAPI) { k.GemmDequantInt8(2, 1, s(0, 80), 39, wq, 0, s(200, 8), 4) }},
		{"GemmDequantInt8", "len(c) = 7, want >= 8", func(k kernelAPI) { k.GemmDequantInt8(2, 1, s(0, 80), 40, wq, 1, tail(7), 4) }},
		{"GemmDequantInt8", "Int8 1099511627776×1099511627776: ", func(k kernelAPI) { k.GemmDequantInt8(2, 1, s(0, 80), 40, hugeQ, 0, s(200, 8), 4) }},
		{"GemmDequantInt8", "nil *lowbit.Int8", func(k kernelAPI) { k.GemmDequantInt8(2, 1, s(0, 80), 40, nil, 0, s(200, 8), 4) }},
		{"GemmDequantInt8", "c overlaps a", func(k kernelAPI) { k.GemmDequantInt8(2, 1, s(0, 80), 40, wq, 0, s(70, 8), 4) }},
		{"GemvBF16", "len(x) = 39, want >= 40", func(k kernelAPI) { k.GemvBF16(1, wb, tail(39), 0, s(200, 4)) }},
		{"GemvBF16", "BF16 1099511627776×1099511627776: ", func(k kernelAPI) { k.GemvBF16(1, hugeB, s(0, 40), 0, s(200, 4)) }},
		{"GemvInt8", "len(y) = 3, want >= 4", func(k kernelAPI) { k.GemvInt8(1, wq, s(0, 40), 0, tail(3)) }},
		{"GemvInt8", "Int8 1099511627776×1099511627776: ", func(k kernelAPI) { k.GemvInt8(1, hugeQ, s(0, 40), 0, s(200, 4)) }},
		{"GemvInt8", "y overlaps x", func(k kernelAPI) { k.GemvInt8(1, wq, s(0, 40), 0, s(38, 4)) }},
		{"DequantizeInt8", "j0 = -1, must be >= 0", func(k kernelAPI) { k.DequantizeInt8(wq, -1, 2, s(0, 80), 40) }},
		{"DequantizeInt8", "n = -2, must be >= 0", func(k kernelAPI) { k.DequantizeInt8(wq, 0, -2, s(0, 80), 40) }},
		{"DequantizeInt8", "rows j0 = 3 to j0+n = 5 are outside w's 4 rows", func(k kernelAPI) { k.DequantizeInt8(wq, 3, 2, s(0, 80), 40) }},
		{"DequantizeInt8", "rows j0 = 5 to j0+n = 5 are outside w's 4 rows", func(k kernelAPI) { k.DequantizeInt8(wq, 5, 0, s(0, 80), 40) }},
		{"DequantizeInt8", "rows j0 = 1 to j0+n = 9223372036854775808 are outside", func(k kernelAPI) { k.DequantizeInt8(wq, 1, big, s(0, 80), 40) }},
		{"DequantizeInt8", "ldd = 39, want >= max(w.K, 1) = 40", func(k kernelAPI) { k.DequantizeInt8(wq, 0, 2, s(0, 80), 39) }},
		{"DequantizeInt8", "len(d) = 79, want >= 80", func(k kernelAPI) { k.DequantizeInt8(wq, 0, 2, tail(79), 40) }},
		{"DequantizeInt8", "Int8 1099511627776×1099511627776: ", func(k kernelAPI) { k.DequantizeInt8(hugeQ, 0, 1, s(0, 80), 40) }},
		{"DequantizeInt8", "nil *lowbit.Int8", func(k kernelAPI) { k.DequantizeInt8(nil, 0, 1, s(0, 80), 40) }},

		// Gemm, MatMul and the fused GEMMs: 4×4×4 with a, b, c at 0, 100, 200.
		{"Gemm", "m = -1, must be >= 0", func(k kernelAPI) { k.Gemm(false, false, -1, 4, 4, 1, s(0, 16), 4, s(100, 16), 4, 0, s(200, 16), 4) }},
		{"Gemm", "k = -2, must be >= 0", func(k kernelAPI) { k.Gemm(false, false, 4, 4, -2, 1, s(0, 16), 4, s(100, 16), 4, 0, s(200, 16), 4) }},
		{"Gemm", "lda = 3 is smaller than the row length 4", func(k kernelAPI) { k.Gemm(true, false, 4, 4, 4, 1, s(0, 16), 3, s(100, 16), 4, 0, s(200, 16), 4) }},
		{"Gemm", "len(c) = 15, want >= 16", func(k kernelAPI) { k.Gemm(false, false, 4, 4, 4, 1, s(0, 16), 4, s(100, 16), 4, 1, tail(15), 4) }},
		{"Gemm", "len(b) = 15, want >= 16", func(k kernelAPI) { k.Gemm(false, true, 4, 4, 4, 1, s(0, 16), 4, tail(15), 4, 0, s(200, 16), 4) }},
		{"Gemm", "more than the address space", func(k kernelAPI) { k.Gemm(false, false, 4, 4, 4, 1, s(0, 16), 4, s(100, 16), 4, 0, s(200, 16), big) }},
		{"Gemm", "c overlaps a", func(k kernelAPI) { k.Gemm(false, false, 4, 4, 4, 1, s(0, 16), 4, s(100, 16), 4, 0, s(8, 16), 4) }},
		{"MatMul", "k = -1, must be >= 0", func(k kernelAPI) { k.MatMul(4, 4, -1, s(0, 16), s(100, 16), s(200, 16)) }},
		{"MatMul", "len(b) = 15, want >= 16", func(k kernelAPI) { k.MatMul(4, 4, 4, s(0, 16), tail(15), s(200, 16)) }},
		{"MatMul", "more than the address space", func(k kernelAPI) { k.MatMul(big/2, 4, 4, s(0, 16), s(100, 16), s(200, 16)) }},
		{"MatMul", "c overlaps b", func(k kernelAPI) { k.MatMul(4, 4, 4, s(0, 16), s(100, 16), s(108, 16)) }},
		{"GemmBiasGELU", "n = -3, must be >= 0", func(k kernelAPI) {
			k.GemmBiasGELU(false, false, 4, -3, 4, s(0, 16), 4, s(100, 16), 4, s(300, 4), s(200, 16), 4, s(400, 16), 4)
		}},
		{"GemmBiasGELU", "len(bias) = 3, want >= 4", func(k kernelAPI) {
			k.GemmBiasGELU(false, false, 4, 4, 4, s(0, 16), 4, s(100, 16), 4, tail(3), s(200, 16), 4, s(400, 16), 4)
		}},
		{"GemmBiasGELU", "len(out) = 15, want >= 16", func(k kernelAPI) {
			k.GemmBiasGELU(false, false, 4, 4, 4, s(0, 16), 4, s(100, 16), 4, s(300, 4), s(200, 16), 4, tail(15), 4)
		}},
		{"GemmBiasGELU", "more than the address space", func(k kernelAPI) {
			k.GemmBiasGELU(false, false, 4, 4, 4, s(0, 16), 4, s(100, 16), 4, s(300, 4), s(200, 16), big, s(400, 16), 4)
		}},
		{"GemmBiasGELU", "out overlaps pre", func(k kernelAPI) {
			k.GemmBiasGELU(false, false, 4, 4, 4, s(0, 16), 4, s(100, 16), 4, s(300, 4), s(200, 16), 4, s(210, 16), 4)
		}},
		{"GemmBiasGELU", "pre overlaps b", func(k kernelAPI) {
			k.GemmBiasGELU(false, false, 4, 4, 4, s(0, 16), 4, s(100, 16), 4, s(300, 4), s(104, 16), 4, s(400, 16), 4)
		}},
		{"GemmBiasGELU", "out overlaps bias", func(k kernelAPI) {
			k.GemmBiasGELU(false, false, 4, 4, 4, s(0, 16), 4, s(100, 16), 4, s(402, 4), s(200, 16), 4, s(400, 16), 4)
		}},
		{"GemmBias", "m = -2, must be >= 0", func(k kernelAPI) {
			k.GemmBias(false, false, -2, 4, 4, s(0, 16), 4, s(100, 16), 4, s(300, 4), s(200, 16), 4)
		}},
		{"GemmBias", "len(bias) = 3, want >= 4", func(k kernelAPI) {
			k.GemmBias(false, false, 4, 4, 4, s(0, 16), 4, s(100, 16), 4, tail(3), s(200, 16), 4)
		}},
		{"GemmBias", "len(c) = 15, want >= 16", func(k kernelAPI) {
			k.GemmBias(false, false, 4, 4, 4, s(0, 16), 4, s(100, 16), 4, s(300, 4), tail(15), 4)
		}},
		{"GemmBias", "c overlaps a", func(k kernelAPI) {
			k.GemmBias(false, false, 4, 4, 4, s(0, 16), 4, s(100, 16), 4, s(300, 4), s(12, 16), 4)
		}},
		{"GemmBias", "c overlaps bias", func(k kernelAPI) {
			k.GemmBias(false, false, 4, 4, 4, s(0, 16), 4, s(100, 16), 4, s(215, 4), s(200, 16), 4)
		}},
		{"GemmBias", "more than the address space", func(k kernelAPI) {
			k.GemmBias(false, false, 4, 4, 4, s(0, 16), 4, s(100, 16), 4, s(300, 4), s(200, 16), big)
		}},
		{"GemmBF16Compute", "m = -1, must be >= 0", func(k kernelAPI) {
			k.GemmBF16Compute(false, false, -1, 4, 4, 1, s(0, 16), 4, s(100, 16), 4, 0, s(200, 16), 4)
		}},
		{"GemmBF16Compute", "ldb = 3 is smaller than the row length 4", func(k kernelAPI) {
			k.GemmBF16Compute(false, true, 4, 4, 4, 1, s(0, 16), 4, s(100, 16), 3, 0, s(200, 16), 4)
		}},
		{"GemmBF16Compute", "len(a) = 15, want >= 16", func(k kernelAPI) {
			k.GemmBF16Compute(true, false, 4, 4, 4, 1, tail(15), 4, s(100, 16), 4, 0, s(200, 16), 4)
		}},
		{"GemmBF16Compute", "more than the address space", func(k kernelAPI) {
			k.GemmBF16Compute(false, false, 4, 4, 4, 1, s(0, 16), big, s(100, 16), 4, 0, s(200, 16), 4)
		}},
		{"GemmBF16Compute", "c overlaps b", func(k kernelAPI) {
			k.GemmBF16Compute(false, false, 4, 4, 4, 1, s(0, 16), 4, s(100, 16), 4, 0, s(110, 16), 4)
		}},
		{"GemmBiasBF16Compute", "len(bias) = 3, want >= 4", func(k kernelAPI) {
			k.GemmBiasBF16Compute(false, false, 4, 4, 4, s(0, 16), 4, s(100, 16), 4, tail(3), s(200, 16), 4)
		}},
		{"GemmBiasBF16Compute", "k = -1, must be >= 0", func(k kernelAPI) {
			k.GemmBiasBF16Compute(false, false, 4, 4, -1, s(0, 16), 4, s(100, 16), 4, s(300, 4), s(200, 16), 4)
		}},
		{"GemmBiasBF16Compute", "c overlaps bias", func(k kernelAPI) {
			k.GemmBiasBF16Compute(false, false, 4, 4, 4, s(0, 16), 4, s(100, 16), 4, s(215, 4), s(200, 16), 4)
		}},
		{"GemmBiasGELUBF16Compute", "len(out) = 15, want >= 16", func(k kernelAPI) {
			k.GemmBiasGELUBF16Compute(false, false, 4, 4, 4, s(0, 16), 4, s(100, 16), 4, s(300, 4), s(200, 16), 4, tail(15), 4)
		}},
		{"GemmBiasGELUBF16Compute", "out overlaps pre", func(k kernelAPI) {
			k.GemmBiasGELUBF16Compute(false, false, 4, 4, 4, s(0, 16), 4, s(100, 16), 4, s(300, 4), s(200, 16), 4, s(210, 16), 4)
		}},
		{"GemmBiasGELUBF16Compute", "pre overlaps a", func(k kernelAPI) {
			k.GemmBiasGELUBF16Compute(false, false, 4, 4, 4, s(0, 16), 4, s(100, 16), 4, s(300, 4), s(4, 16), 4, s(400, 16), 4)
		}},
		{"GemmBF16ComputeWeights", "m = -1, must be >= 0", func(k kernelAPI) { k.GemmBF16ComputeWeights(-1, 1, s(0, 80), 40, wb, 0, s(200, 8), 4) }},
		{"GemmBF16ComputeWeights", "ldc = 3, want >= max(w.N, 1) = 4", func(k kernelAPI) { k.GemmBF16ComputeWeights(2, 1, s(0, 80), 40, wb, 0, s(200, 8), 3) }},
		{"GemmBF16ComputeWeights", "BF16 1099511627776×1099511627776: ", func(k kernelAPI) {
			k.GemmBF16ComputeWeights(2, 1, s(0, 80), 40, hugeB, 0, s(200, 8), 4)
		}},
		{"GemmBF16ComputeWeights", "nil *lowbit.BF16", func(k kernelAPI) { k.GemmBF16ComputeWeights(2, 1, s(0, 80), 40, nil, 0, s(200, 8), 4) }},
		{"GemmBF16ComputeWeights", "c overlaps a", func(k kernelAPI) { k.GemmBF16ComputeWeights(2, 1, s(0, 80), 40, wb, 0, s(70, 8), 4) }},

		// Softmax and SoftmaxBackward: 4×4.
		{"Softmax", "m = -1, must be >= 0", func(k kernelAPI) { k.Softmax(-1, 4, s(0, 16), 4, s(100, 16), 4) }},
		{"Softmax", "ldx = 3 is smaller than the row length 4", func(k kernelAPI) { k.Softmax(4, 4, s(0, 16), 3, s(100, 16), 4) }},
		{"Softmax", "len(y) = 15, want >= 16", func(k kernelAPI) { k.Softmax(4, 4, s(0, 16), 4, tail(15), 4) }},
		{"Softmax", "more than the address space", func(k kernelAPI) { k.Softmax(4, 4, s(0, 16), 4, s(100, 16), big) }},
		{"Softmax", "y overlaps x", func(k kernelAPI) { k.Softmax(4, 4, s(0, 16), 4, s(1, 16), 4) }},
		{"Softmax", "y overlaps x", func(k kernelAPI) { k.Softmax(4, 4, s(0, 19), 5, s(0, 19), 4) }},
		{"SoftmaxBackward", "n = -1, must be >= 0", func(k kernelAPI) { k.SoftmaxBackward(4, -1, s(0, 16), 4, s(100, 16), 4, s(200, 16), 4) }},
		{"SoftmaxBackward", "len(dy) = 15, want >= 16", func(k kernelAPI) { k.SoftmaxBackward(4, 4, s(0, 16), 4, tail(15), 4, s(200, 16), 4) }},
		{"SoftmaxBackward", "dx overlaps y", func(k kernelAPI) { k.SoftmaxBackward(4, 4, s(0, 16), 4, s(100, 16), 4, s(8, 16), 4) }},
		{"SoftmaxBackward", "dx overlaps dy", func(k kernelAPI) { k.SoftmaxBackward(4, 4, s(0, 16), 4, s(100, 16), 4, s(101, 16), 4) }},

		// MaskedScores: 4 queries, 4 keys, d = 4.
		{"MaskedScores", "tq = -1, must be >= 0", func(k kernelAPI) { k.MaskedScores(-1, 4, 4, 1, s(0, 16), 4, s(100, 16), 4, 0, s(200, 16), 4) }},
		{"MaskedScores", fmt.Sprintf("offset = %d with tq = 4 overflows int", big), func(k kernelAPI) {
			k.MaskedScores(4, 4, 4, 1, s(0, 16), 4, s(100, 16), 4, big, s(200, 16), 4)
		}},
		{"MaskedScores", fmt.Sprintf("offset = %d with tq = 4 overflows int (offset+tq = %d, want <= %d)", big-3, uint64(big)+1, big), func(k kernelAPI) {
			k.MaskedScores(4, 4, 4, 1, s(0, 16), 4, s(100, 16), 4, big-3, s(200, 16), 4)
		}},
		{"MaskedScores", "len(s) = 15, want >= 16", func(k kernelAPI) { k.MaskedScores(4, 4, 4, 1, s(0, 16), 4, s(100, 16), 4, 0, tail(15), 4) }},
		{"MaskedScores", "s overlaps q", func(k kernelAPI) { k.MaskedScores(4, 4, 4, 1, s(0, 16), 4, s(100, 16), 4, 0, s(12, 16), 4) }},
		{"MaskedScores", "s overlaps k", func(k kernelAPI) { k.MaskedScores(4, 4, 4, 1, s(0, 16), 4, s(100, 16), 4, 0, s(90, 16), 4) }},

		// Vector operations.
		{"Dot", "len(x) = 3 but len(y) = 4", func(k kernelAPI) { k.Dot(s(0, 3), s(100, 4)) }},
		{"Axpy", "len(x) = 4 but len(y) = 3", func(k kernelAPI) { k.Axpy(2, s(0, 4), tail(3)) }},
		{"Axpy", "y overlaps x", func(k kernelAPI) { k.Axpy(2, s(0, 40), s(1, 40)) }},
		{"Axpy", "y overlaps x", func(k kernelAPI) { k.Axpy(2, s(3, 40), s(0, 40)) }},
		{"Add", "len(dst) = 3 but len(x) = 4", func(k kernelAPI) { k.Add(tail(3), s(0, 4), s(100, 4)) }},
		{"Add", "len(dst) = 4 but len(y) = 5", func(k kernelAPI) { k.Add(s(200, 4), s(0, 4), s(100, 5)) }},
		{"Add", "dst overlaps x", func(k kernelAPI) { k.Add(s(1, 40), s(0, 40), s(100, 40)) }},
		{"Add", "dst overlaps y", func(k kernelAPI) { k.Add(s(99, 40), s(0, 40), s(100, 40)) }},
		{"Add", "dst overlaps y", func(k kernelAPI) { k.Add(s(0, 40), s(0, 40), s(39, 40)) }},
		{"GELU", "len(dst) = 3 but len(x) = 4", func(k kernelAPI) { k.GELU(tail(3), s(0, 4)) }},
		{"GELU", "dst overlaps x", func(k kernelAPI) { k.GELU(s(1, 40), s(0, 40)) }},
		{"GELUBackward", "len(dx) = 4 but len(x) = 5", func(k kernelAPI) { k.GELUBackward(s(0, 4), s(100, 4), s(200, 5)) }},
		{"GELUBackward", "dx overlaps dy", func(k kernelAPI) { k.GELUBackward(s(0, 40), s(20, 40), s(200, 40)) }},
		{"GELUBackward", "dx overlaps x", func(k kernelAPI) { k.GELUBackward(s(0, 40), s(100, 40), s(0, 40)) }},
		{"BiasGELU", "m = -1, must be >= 0", func(k kernelAPI) { k.BiasGELU(-1, 4, s(0, 16), 4, s(100, 4), s(200, 16), 4) }},
		{"BiasGELU", "len(bias) = 3, want >= 4", func(k kernelAPI) { k.BiasGELU(4, 4, s(0, 16), 4, tail(3), s(200, 16), 4) }},
		{"BiasGELU", "more than the address space", func(k kernelAPI) { k.BiasGELU(4, 4, s(0, 16), 4, s(100, 4), s(200, 16), big) }},
		{"BiasGELU", "y overlaps x", func(k kernelAPI) { k.BiasGELU(4, 4, s(0, 16), 4, s(100, 4), s(3, 16), 4) }},
		{"BiasGELU", "x overlaps bias", func(k kernelAPI) { k.BiasGELU(4, 4, s(0, 16), 4, s(12, 4), s(200, 16), 4) }},
		{"BiasGELU", "y overlaps bias", func(k kernelAPI) { k.BiasGELU(4, 4, s(0, 16), 4, s(212, 4), s(200, 16), 4) }},

		// LayerNorm: x, gamma, beta, y, mean, rstd at 0, 100, 110, 200, 300, 310.
		{"LayerNorm", "m = -1, must be >= 0", func(k kernelAPI) {
			k.LayerNorm(-1, 4, s(0, 16), 4, s(100, 4), s(110, 4), 1e-5, s(200, 16), 4, s(300, 4), s(310, 4))
		}},
		{"LayerNorm", "len(gamma) = 3, want >= 4", func(k kernelAPI) {
			k.LayerNorm(4, 4, s(0, 16), 4, tail(3), s(110, 4), 1e-5, s(200, 16), 4, s(300, 4), s(310, 4))
		}},
		{"LayerNorm", "len(mean) = 3, want >= 4 (or nil)", func(k kernelAPI) {
			k.LayerNorm(4, 4, s(0, 16), 4, s(100, 4), s(110, 4), 1e-5, s(200, 16), 4, tail(3), s(310, 4))
		}},
		{"LayerNorm", "y overlaps x", func(k kernelAPI) {
			k.LayerNorm(4, 4, s(0, 16), 4, s(100, 4), s(110, 4), 1e-5, s(2, 16), 4, s(300, 4), s(310, 4))
		}},
		{"LayerNorm", "mean overlaps rstd", func(k kernelAPI) {
			k.LayerNorm(4, 4, s(0, 16), 4, s(100, 4), s(110, 4), 1e-5, s(200, 16), 4, s(300, 4), s(302, 4))
		}},
		{"LayerNorm", "mean overlaps beta", func(k kernelAPI) {
			k.LayerNorm(4, 4, s(0, 16), 4, s(100, 4), s(110, 4), 1e-5, s(200, 16), 4, s(111, 4), nil)
		}},
		{"LayerNorm", "y overlaps gamma", func(k kernelAPI) {
			k.LayerNorm(4, 4, s(0, 16), 4, s(204, 4), s(110, 4), 1e-5, s(200, 16), 4, s(300, 4), s(310, 4))
		}},
		{"LayerNorm", "mean overlaps x", func(k kernelAPI) {
			k.LayerNorm(4, 4, s(0, 16), 4, s(100, 4), s(110, 4), 1e-5, s(200, 16), 4, s(4, 4), s(310, 4))
		}},
		{"LayerNorm", "rstd overlaps y", func(k kernelAPI) {
			k.LayerNorm(4, 4, s(0, 16), 4, s(100, 4), s(110, 4), 1e-5, s(200, 16), 4, nil, s(212, 4))
		}},

		// LayerNormBackward: dy, x, mean, rstd, gamma, dx, dgamma, dbeta
		// at 0, 100, 200, 210, 220, 300, 400, 410.
		{"LayerNormBackward", "n = -1, must be >= 0", func(k kernelAPI) {
			k.LayerNormBackward(4, -1, s(0, 16), 4, s(100, 16), 4, s(200, 4), s(210, 4), s(220, 4), s(300, 16), 4, s(400, 4), s(410, 4))
		}},
		{"LayerNormBackward", "len(rstd) = 3, want >= 4", func(k kernelAPI) {
			k.LayerNormBackward(4, 4, s(0, 16), 4, s(100, 16), 4, s(200, 4), tail(3), s(220, 4), s(300, 16), 4, s(400, 4), s(410, 4))
		}},
		{"LayerNormBackward", "dx overlaps dy", func(k kernelAPI) {
			k.LayerNormBackward(4, 4, s(0, 16), 4, s(100, 16), 4, s(200, 4), s(210, 4), s(220, 4), s(8, 16), 4, s(400, 4), s(410, 4))
		}},
		{"LayerNormBackward", "dgamma overlaps dbeta", func(k kernelAPI) {
			k.LayerNormBackward(4, 4, s(0, 16), 4, s(100, 16), 4, s(200, 4), s(210, 4), s(220, 4), s(300, 16), 4, s(400, 4), s(402, 4))
		}},
		{"LayerNormBackward", "dgamma overlaps gamma", func(k kernelAPI) {
			k.LayerNormBackward(4, 4, s(0, 16), 4, s(100, 16), 4, s(200, 4), s(210, 4), s(220, 4), s(300, 16), 4, s(221, 4), s(410, 4))
		}},
		{"LayerNormBackward", "dx overlaps mean", func(k kernelAPI) {
			k.LayerNormBackward(4, 4, s(0, 16), 4, s(100, 16), 4, s(305, 4), s(210, 4), s(220, 4), s(300, 16), 4, s(400, 4), s(410, 4))
		}},
		{"LayerNormBackward", "dbeta overlaps x", func(k kernelAPI) {
			k.LayerNormBackward(4, 4, s(0, 16), 4, s(100, 16), 4, s(200, 4), s(210, 4), s(220, 4), s(300, 16), 4, s(400, 4), s(110, 4))
		}},

		// AddLayerNorm: x, r, sum, gamma, beta, y, mean, rstd at 0, 100,
		// 200, 300, 310, 400, 500, 510.
		{"AddLayerNorm", "m = -1, must be >= 0", func(k kernelAPI) {
			k.AddLayerNorm(-1, 4, s(0, 16), 4, s(100, 16), 4, s(200, 16), 4, s(300, 4), s(310, 4), 1e-5, s(400, 16), 4, s(500, 4), s(510, 4))
		}},
		{"AddLayerNorm", "len(r) = 15, want >= 16", func(k kernelAPI) {
			k.AddLayerNorm(4, 4, s(0, 16), 4, tail(15), 4, s(200, 16), 4, s(300, 4), s(310, 4), 1e-5, s(400, 16), 4, s(500, 4), s(510, 4))
		}},
		{"AddLayerNorm", "sum overlaps x", func(k kernelAPI) {
			k.AddLayerNorm(4, 4, s(0, 16), 4, s(100, 16), 4, s(1, 16), 4, s(300, 4), s(310, 4), 1e-5, s(400, 16), 4, s(500, 4), s(510, 4))
		}},
		{"AddLayerNorm", "y overlaps r", func(k kernelAPI) {
			k.AddLayerNorm(4, 4, s(0, 16), 4, s(100, 16), 4, s(200, 16), 4, s(300, 4), s(310, 4), 1e-5, s(104, 16), 4, s(500, 4), s(510, 4))
		}},
		{"AddLayerNorm", "sum overlaps gamma", func(k kernelAPI) {
			k.AddLayerNorm(4, 4, s(0, 16), 4, s(100, 16), 4, s(200, 16), 4, s(210, 4), s(310, 4), 1e-5, s(400, 16), 4, s(500, 4), s(510, 4))
		}},
		{"AddLayerNorm", "rstd overlaps sum", func(k kernelAPI) {
			k.AddLayerNorm(4, 4, s(0, 16), 4, s(100, 16), 4, s(200, 16), 4, s(300, 4), s(310, 4), 1e-5, s(400, 16), 4, s(500, 4), s(204, 4))
		}},

		// AdamW: params, grads, m, v at 0, 100, 200, 300.
		{"AdamW", "len(params) = 8 but len(v) = 7", func(k kernelAPI) { k.AdamW(s(0, 8), s(100, 8), s(200, 8), tail(7), adam) }},
		{"AdamW", "m overlaps v", func(k kernelAPI) { k.AdamW(s(0, 8), s(100, 8), s(200, 8), s(204, 8), adam) }},
		{"AdamW", "params overlaps grads", func(k kernelAPI) { k.AdamW(s(0, 8), s(0, 8), s(200, 8), s(300, 8), adam) }},

		// SoftmaxCrossEntropy: 4×4, logits, dlogits, losses at 0, 100, 200.
		{"SoftmaxCrossEntropy", "n = -1, must be >= 0", func(k kernelAPI) {
			k.SoftmaxCrossEntropy(4, -1, s(0, 16), 4, targets, 1, s(100, 16), 4, s(200, 4))
		}},
		{"SoftmaxCrossEntropy", "len(targets) = 3, want >= m = 4", func(k kernelAPI) {
			k.SoftmaxCrossEntropy(4, 4, s(0, 16), 4, targets[:3], 1, s(100, 16), 4, s(200, 4))
		}},
		{"SoftmaxCrossEntropy", "targets[2] = 4 is outside [0, n) for n = 4", func(k kernelAPI) {
			k.SoftmaxCrossEntropy(4, 4, s(0, 16), 4, []int32{0, 1, 4, 3}, 1, s(100, 16), 4, s(200, 4))
		}},
		{"SoftmaxCrossEntropy", "targets[1] = -1 is outside [0, n)", func(k kernelAPI) {
			k.SoftmaxCrossEntropy(4, 4, s(0, 16), 4, []int32{0, -1, 2, 3}, 1, s(100, 16), 4, s(200, 4))
		}},
		{"SoftmaxCrossEntropy", "len(losses) = 3, want >= 4", func(k kernelAPI) {
			k.SoftmaxCrossEntropy(4, 4, s(0, 16), 4, targets, 1, s(100, 16), 4, tail(3))
		}},
		{"SoftmaxCrossEntropy", "dlogits overlaps logits", func(k kernelAPI) {
			k.SoftmaxCrossEntropy(4, 4, s(0, 16), 4, targets, 1, s(2, 16), 4, s(200, 4))
		}},
		{"SoftmaxCrossEntropy", "losses overlaps dlogits", func(k kernelAPI) {
			k.SoftmaxCrossEntropy(4, 4, s(0, 16), 4, targets, 1, s(100, 16), 4, s(104, 4))
		}},
	}
}

// callForPanic runs f and returns what it panicked with (nil if it did
// not). A memory fault inside f panics with a runtime.Error instead of
// crashing the test.
func callForPanic(f func()) (v any) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() { v = recover() }()
	f()
	return nil
}

// TestBadArgumentsPanic calls every kernel with bad arguments (negative
// sizes, short slices, sizes whose span overflows int, overlapping
// outputs) through every implementation and through the package-level
// functions. Each call must panic with a string (never a runtime.Error
// such as an index out of range) that starts with the function's name,
// "kernels.Add: ...", and names the argument; and it must panic before
// anything runs: every slice lies in one guarded arena, which must be
// bitwise unchanged, and the short slices end at an unmapped page.
func TestBadArgumentsPanic(t *testing.T) {
	arena, buf := guard.Alloc(1024, guard.End)
	defer buf.Free()
	for i := range arena {
		arena[i] = float32(i%13)/8 - 0.75
	}
	before := append([]float32(nil), arena...)
	apis := map[string]kernelAPI{"package-level": pkgLevel{}}
	names := []string{"package-level"}
	for _, p := range Implementations() {
		apis[p.Name()] = p
		names = append(names, p.Name())
	}
	seen := map[string]bool{}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			for i, tc := range badArgCases(arena) {
				seen[tc.fn] = true
				v := callForPanic(func() { tc.call(apis[name]) })
				desc := fmt.Sprintf("case %d (%s, %q)", i, tc.fn, tc.want)
				for j := range arena {
					if math.Float32bits(arena[j]) != math.Float32bits(before[j]) {
						t.Errorf("%s: arena[%d] = %v, was %v: written before the panic", desc, j, arena[j], before[j])
						copy(arena, before)
						break
					}
				}
				if v == nil {
					t.Errorf("%s: no panic", desc)
					continue
				}
				if err, ok := v.(runtime.Error); ok {
					t.Errorf("%s: runtime error %v", desc, err)
					continue
				}
				msg, ok := v.(string)
				if !ok {
					t.Errorf("%s: panic value %#v is not a string", desc, v)
					continue
				}
				if prefix := "kernels." + tc.fn + ": "; !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, tc.want) {
					t.Errorf("%s: panic %q, want it to start with %q and contain %q", desc, msg, prefix, tc.want)
				}
			}
		})
	}
	// Every method of kernelAPI has a case.
	for i := 0; i < kernelAPIType.NumMethod(); i++ {
		if m := kernelAPIType.Method(i).Name; !seen[m] {
			t.Errorf("no bad-argument case for %s", m)
		}
	}
}

// pow2 returns 2ⁿ as an int, computed at run time so that sizes beyond a
// 32-bit int still compile there (the cases that use them assume a
// 64-bit int; on 32 bits they come out 0).
func pow2(n int) int { return 1 << n }
