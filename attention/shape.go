package attention

import (
	"fmt"
	"math"

	"github.com/simdgpt/simdgpt/internal/parallel"
	"github.com/simdgpt/simdgpt/kernels"
)

// maxC is the widest layer: 3c, a row of qkv, must be an int.
const maxC = math.MaxInt / 3

// rowBlock is the number of query rows processed together: a block of
// rows i0..i1-1 only reads keys 0..i1-1, which is how the causal mask
// saves work beyond the tiles MaskedScores skips.
const rowBlock = 64

// shape is what the three jobs of a layer (training in Layer, decoding in
// Decoder, fused inference in Fused) share: the layer's width, heads,
// head size and score scale, and the kernel implementation every kernel
// call goes through. Its methods are promoted to the three types.
type shape struct {
	c, h, d int
	scale   float32
	impl    *kernels.Impl
	// bf16: the per-head products of at least BF16MinRows rows in
	// bfloat16 compute (SetBF16Compute).
	bf16 bool
}

// BF16MinRows is the fewest rows, and the fewest terms summed per
// element (the head size for the scores, the keys for P·V), of a per-head
// product computed in bfloat16 with SetBF16Compute(true): smaller
// products, such as decoding one token, stay float32.
const BF16MinRows = 16

// SetBF16Compute sets the arithmetic of the per-head matrix products of
// the calls that follow: with on, the products of probabilities and
// values (P·V, and in Backward dS·K, Pᵀ·dY and dSᵀ·Q) and, in Layer and
// Decoder, the scores (Q·Kᵀ, and in Backward dP = dY·Vᵀ), each row
// block's computed whole and then masked, round both operands to bfloat16 and sum in float32
// (kernels.Impl.GemmBF16Compute) where the product is at least
// BF16MinRows in rows and terms, as torch.autocast computes attention's
// products on the CPU; the softmax and its gradient stay float32. With
// off (the default) every product is float32, Layer's scores by
// kernels.Impl.MaskedScores. A Decoder or Fused made from a layer starts
// with the layer's setting and keeps its own afterwards.
func (s *shape) SetBF16Compute(on bool) { s.bf16 = on }

// BF16Compute reports whether the per-head products compute in bfloat16
// (see SetBF16Compute).
func (s *shape) BF16Compute() bool { return s.bf16 }

// gemm is impl.Gemm, or impl.GemmBF16Compute when the products are in
// bfloat16 and both m and k are at least BF16MinRows.
func (s *shape) gemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if s.bf16 && m >= BF16MinRows && k >= BF16MinRows {
		s.impl.GemmBF16Compute(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	s.impl.Gemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// C returns the layer's width (model dimension).
func (s shape) C() int { return s.c }

// Heads returns the number of heads (1 for a single-head layer).
func (s shape) Heads() int { return s.h }

// HeadDim returns the size D = C/H of one head.
func (s shape) HeadDim() int { return s.d }

// Scale returns the factor applied to the scores: 1/sqrt(HeadDim()).
func (s shape) Scale() float32 { return s.scale }

// Impl returns the kernel implementation the layer computes with.
func (s shape) Impl() *kernels.Impl { return s.impl }

// Option configures a layer made by NewSingleHead or NewMultiHead.
type Option func(*options)

type options struct {
	impl *kernels.Impl
}

// WithImpl makes the layer compute with the kernel implementation p (one
// of kernels.Implementations()) instead of kernels.Default(), which is
// read when the layer is made. A nil p keeps that default. Decoders and
// fused forwards made from the layer use the same implementation.
func WithImpl(p *kernels.Impl) Option {
	return func(o *options) { o.impl = p }
}

// newShape applies opts to the shape of c, h heads of size d.
func newShape(c, h, d int, opts []Option) shape {
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if o.impl == nil {
		o.impl = kernels.Default()
	}
	return shape{c: c, h: h, d: d, scale: float32(1 / math.Sqrt(float64(d))), impl: o.impl}
}

// NewSingleHead returns the single-head layer of width c: Q, K and V are
// used whole and the scores are scaled by 1/sqrt(c). It panics if c < 1
// or if a row of qkv (3c floats) would not fit in an int.
func NewSingleHead(c int, opts ...Option) *Layer {
	if c < 1 {
		panic(fmt.Sprintf("attention.NewSingleHead: c = %d, must be >= 1", c))
	}
	if c > maxC {
		panic(fmt.Sprintf("attention.NewSingleHead: c = %d, must be <= %d (a row of qkv, 3c floats, must fit in an int)", c, maxC))
	}
	return &Layer{shape: newShape(c, 1, c, opts)}
}

// NewMultiHead returns the layer of width c with h heads of size
// d = c/h; the scores of each head are scaled by 1/sqrt(d). It returns an
// error if c or h is less than 1, if h does not divide c or if a row of
// qkv (3c floats) would not fit in an int. With h = 1 it computes exactly
// what NewSingleHead(c) does.
func NewMultiHead(c, h int, opts ...Option) (*Layer, error) {
	if c < 1 || h < 1 {
		return nil, fmt.Errorf("attention.NewMultiHead: C = %d and H = %d must both be >= 1", c, h)
	}
	if c > maxC {
		return nil, fmt.Errorf("attention.NewMultiHead: C = %d, must be <= %d (a row of qkv, 3C floats, must fit in an int)", c, maxC)
	}
	if c%h != 0 {
		return nil, fmt.Errorf("attention.NewMultiHead: C = %d is not divisible by H = %d heads (C must be H*D)", c, h)
	}
	return &Layer{shape: newShape(c, h, c/h, opts)}, nil
}

// workersFor is how many goroutines (and per-worker scratch areas) a
// parallel.Run over items parts uses: the runtime's budget (GOMAXPROCS),
// at most items, at least 1. It depends only on items and GOMAXPROCS; the
// parts are the items themselves, so no result depends on it.
func workersFor(items int) int {
	return max(min(parallel.Budget(), items), 1)
}

// grow returns s with length n, reusing its storage when large enough.
func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// checkBT panics unless b >= 1 and t >= 1.
func checkBT(fn string, b, t int) {
	if b < 1 {
		panic(fmt.Sprintf("attention.%s: b = %d, must be >= 1", fn, b))
	}
	if t < 1 {
		panic(fmt.Sprintf("attention.%s: t = %d, must be >= 1", fn, t))
	}
}

// checkRows panics unless len(s) >= b*t*c (b, t, c >= 1), without
// computing a product that overflows.
func checkRows(fn, name string, s []float32, b, t, c int) {
	if need, ok := product(b, t, c); !ok || len(s) < need {
		panic(fmt.Sprintf("attention.%s: len(%s) = %d, want >= b*t*C = %d*%d*%d = %s", fn, name, len(s), b, t, c, productString(b, t, c)))
	}
}

// checkProduct panics unless the product of vals (each >= 1), the size
// of a workspace named what, is an int.
func checkProduct(fn, what, expr string, vals ...int) {
	if _, ok := product(vals...); !ok {
		panic(fmt.Sprintf("attention.%s: %s %s = %s overflows int", fn, what, expr, productString(vals...)))
	}
}

// product returns the product of vals (each >= 0) and whether it is an
// int; it never overflows.
func product(vals ...int) (int, bool) {
	p := 1
	for _, v := range vals {
		if v != 0 && p > math.MaxInt/v {
			return 0, false
		}
		p *= v
	}
	return p, true
}

// productString formats the product of vals (each >= 0), or the factors
// themselves where the product is not an int.
func productString(vals ...int) string {
	if p, ok := product(vals...); ok {
		return fmt.Sprint(p)
	}
	s := ""
	for i, v := range vals {
		if i > 0 {
			s += "*"
		}
		s += fmt.Sprint(v)
	}
	return s + " (more than an int holds)"
}
