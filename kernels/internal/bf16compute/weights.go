package bf16compute

import (
	"sync"
	"unsafe"

	"github.com/simdgpt/simdgpt/kernels/internal/gemm"
	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

// ManyRows is the number of rows of A from which a set's GemmBF16 (the
// product of float32 A with bfloat16 weights) runs the float32 GEMM on
// the weights widened once (FloatWeights) instead of converting them in
// registers on every pass of up to 8 rows.
const ManyRows = 16

// FloatWeights computes C = alpha*A·Wᵀ + beta*C with g's float32 GEMM on
// W's weights as float32 (exact): the float32 GEMM's arithmetic on A and
// W's values. With g.PackBF16, and more rows of A than g's skinny
// kernels take, the GEMM packs its B panels from W where it is
// (GemmSource: the same blocking, tiles and sums as Gemm's blocked path,
// so the same bits); otherwise W is converted whole to float32 first
// (by g.WidenBF16, or in Go) for g.Gemm. Arguments are checked, m and
// w.N > 0, w.K > 0 and alpha != 0.
func FloatWeights(g *gemm.Family, m int, alpha float32, a []float32, lda int, w *lowbit.BF16, beta float32, c []float32, ldc int) {
	if g.PackBF16 != nil && !g.SmallM(true, m) {
		src := sourcePool.Get().(*weightsSource)
		src.w, src.pack = w, g.PackBF16
		g.GemmSource(m, w.N, w.K, alpha, a, lda, src, beta, c, ldc)
		*src = weightsSource{}
		sourcePool.Put(src)
		return
	}
	rw := getRounded()
	defer putRounded(rw)
	wf := weightsFloat32(&rw.b, w, g.WidenBF16)
	g.Gemm(false, true, m, w.N, w.K, alpha, a, lda, wf, w.K, beta, c, ldc)
}

// GemmBF16Rows returns a kernel set's GemmBF16: few, the kernels that
// convert the weights in registers on every pass of up to 8 rows of A,
// below ManyRows rows; from there the set's float32 GEMM g on the weights
// widened once, as it packs them (FloatWeights: the same float32 sums of
// the same exact products, in the GEMM's order).
func GemmBF16Rows(g *gemm.Family, few func(m int, alpha float32, a []float32, lda int, w *lowbit.BF16, beta float32, c []float32, ldc int)) func(m int, alpha float32, a []float32, lda int, w *lowbit.BF16, beta float32, c []float32, ldc int) {
	return func(m int, alpha float32, a []float32, lda int, w *lowbit.BF16, beta float32, c []float32, ldc int) {
		if m < ManyRows || alpha == 0 || w.K == 0 || w.N == 0 {
			few(m, alpha, a, lda, w, beta, c, ldc)
			return
		}
		FloatWeights(g, m, alpha, a, lda, w, beta, c, ldc)
	}
}

// packHalf is the k steps gemm.Family.PackBF16 widens at a time: half a
// group.
const packHalf = lowbit.GroupSize / 2

// weightsSource is op(B) = Wᵀ for bfloat16 weights W as a gemm.BSource:
// each panel the GEMM packs is widened from W as it is packed, with pack
// (nil: in Go) for the whole blocks of gemm.GroupedCols columns and 16 k
// steps of a panel, in Go for its edges. Its values are W.At's.
type weightsSource struct {
	w    *lowbit.BF16
	pack func(chunks int, w *byte, stride int, odd int, dst *float32, nr int)
}

// NewWeightsSource returns op(B) = Wᵀ widened with pack (nil: in Go) as
// the GEMM packs it, the B operand of FloatWeights' GemmSource, for
// tests of a set's gemm.Family.PackBF16.
func NewWeightsSource(w *lowbit.BF16, pack func(chunks int, w *byte, stride int, odd int, dst *float32, nr int)) gemm.BSource {
	return &weightsSource{w: w, pack: pack}
}

// sourcePool holds FloatWeights' weightsSources, so that a call
// allocates none once warm.
var sourcePool = sync.Pool{New: func() any { return new(weightsSource) }}

// PackB is gemm.BSource's: dst[q*nr+j] = W.At(j0+j, pc+q) for q < kc,
// j < w, and 0 for w <= j < nr (gemm.PackGrouped).
func (s *weightsSource) PackB(dst []float32, pc, kc, j0, w, nr int) {
	gemm.PackGrouped(s, s.pack != nil, dst, pc, kc, j0, w, nr)
}

// PackBlocks is gemm.GroupedSource's, by pack.
func (s *weightsSource) PackBlocks(dst *float32, pc, chunks, j, nr int) {
	const g = lowbit.GroupSize
	stride := s.w.Stride()
	at := &s.w.Data[j*stride+pc/g*g]
	s.pack(chunks, (*byte)(unsafe.Pointer(at)), 2*stride, (pc/packHalf)%2, dst, nr)
}

// At is gemm.GroupedSource's: W.At(j, p). Word d of a group holds its
// k steps d (low half) and 16+d (high half).
func (s *weightsSource) At(p, j int) float32 {
	const g = lowbit.GroupSize
	return lowbit.FromBF16(s.w.Data[j*s.w.Stride()+p/g*g+2*(p%packHalf)+(p%g)/packHalf])
}

// weightsFloat32 returns W's N×K weights as float32 (exact), row-major
// and contiguous, in buf: the whole groups of each row by widen (or
// widenGroups when widen is nil), a last partial group through a group
// of scratch in buf past the result.
func weightsFloat32(buf *[]float32, w *lowbit.BF16, widen func(dst []float32, src []uint16)) []float32 {
	if widen == nil {
		widen = widenGroups
	}
	const g = lowbit.GroupSize
	n, k, stride := w.N, w.K, w.Stride()
	if cap(*buf) < n*k+g {
		*buf = make([]float32, n*k+g, n*k+g+n*k/4)
	}
	dst := (*buf)[:n*k]
	last := (*buf)[n*k : n*k+g] // scratch past the result
	full := k / g * g
	for j := 0; j < n; j++ {
		row := w.Data[j*stride : (j+1)*stride]
		out := dst[j*k : (j+1)*k]
		widen(out[:full], row[:full])
		if full < k {
			widen(last, row[full:full+g])
			copy(out[full:], last[:k-full])
		}
	}
	return dst
}

// widenGroups sets dst[32g+d] = w[2d] and dst[32g+16+d] = w[2d+1] as
// float32 for d < 16, g < len(dst)/32 and w = src[32g:], a group of
// bfloat16 as lowbit.BF16 stores it: the Go form of the sets' widenBF16.
func widenGroups(dst []float32, src []uint16) {
	const g, h = lowbit.GroupSize, lowbit.GroupSize / 2
	for p0 := 0; p0+g <= len(dst); p0 += g {
		grp := src[p0 : p0+g]
		o := dst[p0 : p0+g]
		for d := 0; d < h; d++ {
			o[d] = lowbit.FromBF16(grp[2*d])
			o[h+d] = lowbit.FromBF16(grp[2*d+1])
		}
	}
}
