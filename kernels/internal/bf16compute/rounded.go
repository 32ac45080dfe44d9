package bf16compute

import (
	"math"
	"unsafe"

	"github.com/simdgpt/simdgpt/kernels/internal/gemm"
	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

// Rounded computes the bfloat16 products on a float32 GEMM: it rounds
// op(A) and op(B) to bfloat16 (lowbit.ToBF16, subnormals kept) and
// multiplies them, as the GEMM packs them (GemmRounded) or, where the
// GEMM would not pack them (few rows of op(A)), into float32 copies
// first; both give the same bits. Each product of two bfloat16 is exact
// in float32 (unless it underflows or overflows), so C is the float32
// GEMM's sum of the exact products.
type Rounded struct {
	// Gemm is the float32 GEMM; Epilogue its fused form (see
	// gemm.Driver.GemmEpilogue).
	Gemm     func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)
	Epilogue func(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, epi gemm.EpilogueFunc, vec, mat []float32, ldmat int)
	// GemmRounded and EpilogueRounded, optional, are the same GEMM
	// rounding its operands as it packs them (gemm.Driver.GemmRounded and
	// GemmEpilogueRounded); they report false where they do not.
	GemmRounded     func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, round gemm.RoundFunc) bool
	EpilogueRounded func(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, epi gemm.EpilogueFunc, vec, mat []float32, ldmat int, round gemm.RoundFunc) bool
	// Round, optional, is gemm.Family.RoundBF16: the set's kernel of
	// roundRow's contract.
	Round func(dst, x []float32)
	// Widen, optional, is gemm.Family.WidenBF16: the set's kernel of
	// widenGroups' contract.
	Widen func(dst []float32, src []uint16)
	// Weights, optional, is the float32 product over bfloat16 weights
	// read where they are: FloatWeights on the set's GEMM family.
	Weights func(m int, alpha float32, a []float32, lda int, w *lowbit.BF16, beta float32, c []float32, ldc int)
}

// roundedWork holds one call's rounded copies.
type roundedWork struct{ a, b []float32 }

// roundedPool hands out roundedWorks; it never frees them.
var roundedPool = make(chan *roundedWork, 64)

func getRounded() *roundedWork {
	select {
	case w := <-roundedPool:
		return w
	default:
		return new(roundedWork)
	}
}

func putRounded(w *roundedWork) {
	select {
	case roundedPool <- w:
	default:
	}
}

// round returns the set's rounding kernel, or roundRow.
func (r *Rounded) round() gemm.RoundFunc {
	if r.Round != nil {
		return r.Round
	}
	return roundRow
}

// roundCopy returns the rows×cols matrix src (leading dimension ld)
// rounded to bfloat16 into buf, contiguous (leading dimension cols).
func (r *Rounded) roundCopy(buf *[]float32, src []float32, rows, cols, ld int) []float32 {
	round := r.round()
	n := rows * cols
	if cap(*buf) < n {
		*buf = make([]float32, n, n+n/4)
	}
	dst := (*buf)[:n]
	for i := 0; i < rows; i++ {
		round(dst[i*cols:(i+1)*cols], src[i*ld:i*ld+cols])
	}
	return dst
}

// roundRow sets out[j] = FromBF16(ToBF16(in[j])) for j < len(out) (in
// at least as long), on the float32 bits: a NaN keeps its sign and
// payload's top bits and is made quiet, as ToBF16 makes it; any other
// value is rounded to nearest even at bit 16.
func roundRow(out, in []float32) {
	in = in[:len(out)]
	bits := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(out))), len(out))
	for j, v := range in {
		b := math.Float32bits(v)
		if b&0x7fffffff > 0x7f800000 {
			bits[j] = (b | 0x400000) &^ 0xffff
			continue
		}
		bits[j] = (b + 0x7fff + (b>>16)&1) &^ 0xffff
	}
}

// operands returns op(A) and op(B) rounded, stored as given but
// contiguous, and their leading dimensions.
func (r *Rounded) operands(w *roundedWork, transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int) ([]float32, int, []float32, int) {
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	return r.roundCopy(&w.a, a, ar, ac, lda), ac, r.roundCopy(&w.b, b, br, bc, ldb), bc
}

// GemmBF16Compute computes C = alpha*op(A)*op(B) + beta*C on the rounded
// operands; arguments are checked and m, n > 0.
func (r *Rounded) GemmBF16Compute(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if k == 0 || alpha == 0 {
		r.Gemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	if r.GemmRounded != nil && r.GemmRounded(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, r.round()) {
		return
	}
	w := getRounded()
	defer putRounded(w)
	ra, rlda, rb, rldb := r.operands(w, transA, transB, m, n, k, a, lda, b, ldb)
	r.Gemm(transA, transB, m, n, k, alpha, ra, rlda, rb, rldb, beta, c, ldc)
}

// GemmEpilogue is GemmBF16Compute with alpha 1 and beta 0 fused with
// epi, as gemm.Driver.GemmEpilogue.
func (r *Rounded) GemmEpilogue(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, epi gemm.EpilogueFunc, vec, mat []float32, ldmat int) {
	if k == 0 {
		r.Epilogue(transA, transB, m, n, k, a, lda, b, ldb, c, ldc, epi, vec, mat, ldmat)
		return
	}
	if r.EpilogueRounded != nil && r.EpilogueRounded(transA, transB, m, n, k, a, lda, b, ldb, c, ldc, epi, vec, mat, ldmat, r.round()) {
		return
	}
	w := getRounded()
	defer putRounded(w)
	ra, rlda, rb, rldb := r.operands(w, transA, transB, m, n, k, a, lda, b, ldb)
	r.Epilogue(transA, transB, m, n, k, ra, rlda, rb, rldb, c, ldc, epi, vec, mat, ldmat)
}

// GemmWeights computes C = alpha*A·Wᵀ + beta*C with A rounded and W's
// bfloat16 weights as float32 (exact), by Weights when set; arguments are
// checked and m, w.N > 0.
func (r *Rounded) GemmWeights(m int, alpha float32, a []float32, lda int, wt *lowbit.BF16, beta float32, c []float32, ldc int) {
	n, k := wt.N, wt.K
	if k == 0 || alpha == 0 {
		scaleC(m, n, beta, c, ldc)
		return
	}
	w := getRounded()
	defer putRounded(w)
	ra := r.roundCopy(&w.a, a, m, k, lda)
	if r.Weights != nil {
		r.Weights(m, alpha, ra, k, wt, beta, c, ldc)
		return
	}
	r.Gemm(false, true, m, n, k, alpha, ra, k, weightsFloat32(&w.b, wt, r.Widen), k, beta, c, ldc)
}
