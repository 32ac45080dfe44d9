package gemm

// AddRow is the signature of a set's Add: dst[i] = x[i] + y[i] over
// len(dst) elements (x and y exactly as long; dst may be x or y).
type AddRow func(dst, x, y []float32)

// Bias returns the epilogue of a kernel set's GemmBias (see
// EpilogueFunc) that adds with add: c_i += bias on each row i of
// the m×n block c. It takes no matrix.
func Bias(add AddRow) func(m, n int, c []float32, ldc int, bias, _ []float32, _ int) {
	return func(m, n int, c []float32, ldc int, bias, _ []float32, _ int) {
		bias = bias[:n]
		for i := 0; i < m; i++ {
			ci := c[i*ldc : i*ldc+n]
			add(ci, ci, bias)
		}
	}
}

// Family is the GEMM family of one kernel set on one driver: the fields
// of kernelset.Set the driver computes. Gemm, Gemv and MaskedScores are
// the driver's own; the fused GEMMs run its GEMM with an epilogue made of
// the set's own row kernels.
type Family struct {
	*Driver
	// BiasGELU is the epilogue of GemmBiasGELU: the set's BiasGELU.
	BiasGELU EpilogueFunc
	// Bias is the epilogue of GemmBias: Bias over the set's Add.
	Bias EpilogueFunc
	// RoundBF16, optional, sets dst[i] to x[i] rounded to a bfloat16
	// value (lowbit.FromBF16(lowbit.ToBF16(x[i]))) for i < len(dst):
	// the set's kernel for the bfloat16 products that round their
	// operands for this GEMM (bf16compute.Rounded).
	RoundBF16 func(dst, x []float32)
	// WidenBF16, optional, sets dst[32g+d] and dst[32g+16+d] to the
	// float32 values of the bfloat16 src[32g+2d] and src[32g+2d+1] for
	// d < 16 and g < len(dst)/32 (whole groups of lowbit.BF16): the
	// set's kernel for products that convert bfloat16 weights once to
	// float32 for this GEMM.
	WidenBF16 func(dst []float32, src []uint16)
	// PackBF16, optional, packs GroupedCols columns of op(B) = Wᵀ for
	// bfloat16 weights W (lowbit.BF16) into the GEMM's B panels, widened
	// to float32 (exact): dst[q*nr+j] = W(j, p0+q) for j < GroupedCols and
	// q < 16·chunks, where the GroupedCols rows of W start stride bytes
	// apart from w, each at the group of the first k step p0 (the group's
	// second half when odd is 1), and run on through the following
	// groups: the set's kernel for products that read bfloat16 weights
	// where they are (GemmSource).
	PackBF16 func(chunks int, w *byte, stride int, odd int, dst *float32, nr int)
}

// GemmBiasGELU is the kernel set's GemmBiasGELU (see kernelset.Set).
func (f *Family) GemmBiasGELU(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, pre []float32, ldpre int, out []float32, ldout int) {
	f.GemmEpilogue(transA, transB, m, n, k, a, lda, b, ldb, pre, ldpre, f.BiasGELU, bias, out, ldout)
}

// GemmBias is the kernel set's GemmBias (see kernelset.Set).
func (f *Family) GemmBias(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, c []float32, ldc int) {
	f.GemmEpilogue(transA, transB, m, n, k, a, lda, b, ldb, c, ldc, f.Bias, bias, nil, 0)
}
