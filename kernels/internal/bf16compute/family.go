package bf16compute

import (
	"github.com/simdgpt/simdgpt/kernels/internal/gemm"
	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

// Family is a kernel set's bfloat16 products: the kernelset.Set fields
// GemmBF16Compute, GemmBiasBF16Compute, GemmBiasGELUBF16Compute and
// GemmBF16ComputeWeights, on Packed when it is not nil, else on Rounded.
// The fused products run the set's own epilogues: BiasRows adds the bias
// to each row (GemmBias's), BiasGELU is the set's BiasGELU.
type Family struct {
	Packed   *Driver
	Rounded  *Rounded
	BiasRows gemm.EpilogueFunc
	BiasGELU gemm.EpilogueFunc
}

// NewFamily returns the bfloat16 products of a set whose float32 GEMM
// family is g: on the driver of the kernel table t blocked for the caches
// c (New) when t is not nil, else the operands rounded to bfloat16 and
// multiplied on g's float32 GEMM (Rounded); the fused products run g's
// epilogues. It is the family's constructor, which the generated set
// literals call with their ISA's table, or nil where the CPU lacks its
// instructions.
func NewFamily(t *Kernels, g *gemm.Family, c gemm.Caches) *Family {
	f := &Family{
		Rounded: &Rounded{Gemm: g.Gemm, Epilogue: g.GemmEpilogue, GemmRounded: g.GemmRounded, EpilogueRounded: g.GemmEpilogueRounded,
			Round: g.RoundBF16, Widen: g.WidenBF16,
			Weights: func(m int, alpha float32, a []float32, lda int, w *lowbit.BF16, beta float32, c []float32, ldc int) {
				FloatWeights(g, m, alpha, a, lda, w, beta, c, ldc)
			}},
		BiasRows: g.Bias,
		BiasGELU: g.BiasGELU,
	}
	if t != nil {
		f.Packed = New(*t, c)
	}
	return f
}

// GemmBF16Compute is the set's field of that name.
func (f *Family) GemmBF16Compute(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if f.Packed != nil {
		f.Packed.Gemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	f.Rounded.GemmBF16Compute(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// GemmBiasBF16Compute is the set's field of that name.
func (f *Family) GemmBiasBF16Compute(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, c []float32, ldc int) {
	if f.Packed != nil {
		f.Packed.GemmEpilogue(transA, transB, m, n, k, a, lda, b, ldb, c, ldc, Epilogue{Fn: f.BiasRows, Vec: bias})
		return
	}
	f.Rounded.GemmEpilogue(transA, transB, m, n, k, a, lda, b, ldb, c, ldc, f.BiasRows, bias, nil, 0)
}

// GemmBiasGELUBF16Compute is the set's field of that name.
func (f *Family) GemmBiasGELUBF16Compute(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, pre []float32, ldpre int, out []float32, ldout int) {
	if f.Packed != nil {
		f.Packed.GemmEpilogue(transA, transB, m, n, k, a, lda, b, ldb, pre, ldpre, Epilogue{Fn: f.BiasGELU, Vec: bias, Mat: out, LdMat: ldout})
		return
	}
	f.Rounded.GemmEpilogue(transA, transB, m, n, k, a, lda, b, ldb, pre, ldpre, f.BiasGELU, bias, out, ldout)
}

// GemmBF16ComputeWeights is the set's field of that name.
func (f *Family) GemmBF16ComputeWeights(m int, alpha float32, a []float32, lda int, w *lowbit.BF16, beta float32, c []float32, ldc int) {
	if f.Packed != nil {
		f.Packed.GemmWeights(m, alpha, a, lda, w, beta, c, ldc)
		return
	}
	f.Rounded.GemmWeights(m, alpha, a, lda, w, beta, c, ldc)
}
