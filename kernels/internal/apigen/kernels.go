package main

// kernels is the one list of the kernels package kernels offers, in the
// order of kernelset.Set's fields. Each kernel's signature is written here
// once; the generator derives from it kernelset.Set's field, generic's
// wiring, the package-level function and bench.KernelFuncs' field. The
// checked method on *kernels.Impl (its full documentation and argument
// checks) is written by hand in the kernel's family file, with the same
// signature: the build fails where they disagree.
var kernels = []kernel{
	{
		name:     "Gemm",
		params:   "transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int",
		summary:  "computes C = alpha*op(A)*op(B) + beta*C",
		contract: "m, n > 0, k >= 0; every matrix fits its slice with its leading dimension; C overlaps neither A nor B; C is not read when beta is 0.",
	},
	{
		name:     "Gemv",
		params:   "trans bool, m, n int, alpha float32, a []float32, lda int, x []float32, beta float32, y []float32",
		summary:  "computes y = alpha*op(A)*x + beta*y",
		contract: "m, n >= 0; A (m×n) fits its slice with lda >= max(n, 1); len(x) and len(y) are at least n and m (m and n when trans); y overlaps neither A nor x; y is not read when beta is 0; A and x are not read when alpha is 0.",
	},
	{
		name:     "Softmax",
		params:   "m, n int, x []float32, ldx int, y []float32, ldy int",
		summary:  "writes the row-wise softmax of x into y",
		contract: "m, n > 0; both fit their slices; y is x (same start and leading dimension) or does not overlap it.",
	},
	{
		name:     "SoftmaxBackward",
		params:   "m, n int, y []float32, ldy int, dy []float32, lddy int, dx []float32, lddx int",
		summary:  "computes the gradient through a row-wise softmax",
		contract: "dx = y*(dy - rowsum(y*dy)) row by row. m, n > 0; all three fit their slices; dx is dy or apart from it, and apart from y.",
	},
	{
		name:     "MaskedScores",
		params:   "tq, tk, d int, scale float32, q []float32, ldq int, k []float32, ldk int, offset int, s []float32, lds int",
		summary:  "computes causally masked attention scores",
		contract: "S = scale*Q*Kᵀ with the causal mask. tq, tk > 0, d >= 0; every matrix fits its slice; S overlaps neither Q nor K.",
	},
	{
		name:     "Dot",
		params:   "x, y []float32",
		results:  "float32",
		summary:  "returns the dot product of x and y",
		contract: "len(x) == len(y).",
	},
	{
		name:     "Axpy",
		params:   "alpha float32, x, y []float32",
		summary:  "sets y[i] += alpha*x[i]",
		contract: "len(x) == len(y).",
	},
	{
		name:     "Scale",
		params:   "alpha float32, x []float32",
		summary:  "sets x[i] *= alpha",
		contract: "",
	},
	{
		name:     "Add",
		params:   "dst, x, y []float32",
		summary:  "sets dst[i] = x[i] + y[i]",
		contract: "All lengths equal; dst is x, y or apart from both.",
	},
	{
		name:     "Sum",
		params:   "x []float32",
		results:  "float32",
		summary:  "returns the sum of x",
		contract: "0 when empty.",
	},
	{
		name:     "Max",
		params:   "x []float32",
		results:  "float32",
		summary:  "returns the largest element of x",
		contract: "-Inf when empty, the first NaN element when there is one.",
	},
	{
		name:     "LayerNorm",
		params:   "m, n int, x []float32, ldx int, gamma, beta []float32, eps float32, y []float32, ldy int, mean, rstd []float32",
		summary:  "normalises the rows of x into y",
		contract: "m, n > 0; x and y fit their slices; y is x (same start and leading dimension) or apart from it; gamma and beta hold at least n; mean and rstd are nil or hold at least m.",
	},
	{
		name:     "LayerNormBackward",
		params:   "m, n int, dy []float32, lddy int, x []float32, ldx int, mean, rstd, gamma []float32, dx []float32, lddx int, dgamma, dbeta []float32",
		summary:  "accumulates the gradients of LayerNorm",
		contract: "The gradients go into dx, dgamma and dbeta. m, n > 0; dy, x and dx fit their slices, dx apart from dy and x; mean and rstd hold at least m; gamma, dgamma and dbeta at least n, dgamma apart from dbeta.",
	},
	{
		name:     "AdamW",
		params:   "params, grads, m, v []float32, h AdamWParams",
		summary:  "applies one AdamW step",
		contract: "Every element of params is updated from grads and the moments m and v, with the arithmetic of generic.AdamW (bit for bit). All four have the same length; none overlaps another.",
	},
	{
		name:     "SumSquares",
		params:   "x []float32",
		results:  "float64",
		summary:  "returns the sum of the squares of x in float64",
		contract: "Each square exact in float64 and summed in float64; 0 when empty.",
	},
	{
		name:     "SoftmaxCrossEntropy",
		params:   "m, n int, logits []float32, ldl int, targets []int32, scale float32, dlogits []float32, lddl int, losses []float32",
		summary:  "computes the row-wise cross-entropy losses and their gradient",
		contract: "Writes, per row i of the m×n logits, the loss logsumexp(logits[i,:]) - logits[i,targets[i]] into losses[i] and scale*(softmax(logits[i,:]) - onehot(targets[i])) into dlogits[i,:]. m, n > 0; both matrices fit their slices; len(targets), len(losses) >= m; every target is in [0, n); dlogits is logits (same start and leading dimension) or apart from it; losses overlaps neither.",
	},
	{
		name:     "GELU",
		params:   "dst, x []float32",
		summary:  "sets dst[i] = gelu(x[i])",
		contract: "Tanh form. len(dst) == len(x); dst is x or apart from it.",
	},
	{
		name:     "GELUBackward",
		params:   "dx, dy, x []float32",
		summary:  "sets dx[i] = dy[i]·gelu'(x[i])",
		contract: "All lengths equal; dx is dy or apart from it, and apart from x.",
	},
	{
		name:     "BiasGELU",
		params:   "m, n int, x []float32, ldx int, bias []float32, y []float32, ldy int",
		summary:  "adds bias to every row of x in place and writes gelu of the result into y",
		contract: "m, n > 0; x and y fit their slices, len(bias) >= n; y is x (same start and leading dimension) or apart from it; bias is apart from x and y.",
	},
	{
		name:     "GemmBiasGELU",
		params:   "transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, pre []float32, ldpre int, out []float32, ldout int",
		summary:  "sets pre = op(A)·op(B) + bias and out = gelu(pre)",
		contract: "With the arithmetic of Gemm (alpha 1, beta 0) followed by BiasGELU. m, n > 0, k >= 0; every matrix fits its slice, len(bias) >= n; pre and out overlap neither A nor B (when k > 0), nor each other, nor bias.",
	},
	{
		name:     "GemmBias",
		params:   "transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, c []float32, ldc int",
		summary:  "sets C = op(A)·op(B) + bias",
		contract: "With the arithmetic of Gemm (alpha 1, beta 0) followed by Add(C_i, C_i, bias) on each row i of C. m, n > 0, k >= 0; every matrix fits its slice, len(bias) >= n; C overlaps neither A nor B (when k > 0), nor bias.",
	},
	{
		name:     "GemmBF16",
		params:   "m int, alpha float32, a []float32, lda int, w *lowbit.BF16, beta float32, c []float32, ldc int",
		summary:  "computes C = alpha*A·Wᵀ + beta*C for the bfloat16 weights W",
		contract: "m >= 0; w is a valid matrix (lowbit.BF16.Check); A (m×w.K) and C (m×w.N) fit their slices with lda >= max(w.K, 1) and ldc >= max(w.N, 1); C overlaps neither A nor w.Data; C is not read when beta is 0; A and W are not read when alpha is 0 or w.K is 0.",
	},
	{
		name:     "GemmInt8",
		params:   "m int, alpha float32, a []float32, lda int, w *lowbit.Int8, beta float32, c []float32, ldc int",
		summary:  "computes C = alpha*A·Wᵀ + beta*C for the int8 weights W",
		contract: "m >= 0; w is a valid matrix (lowbit.Int8.Check); A (m×w.K) and C (m×w.N) fit their slices with lda >= max(w.K, 1) and ldc >= max(w.N, 1); C overlaps neither A nor w.Blocks; C is not read when beta is 0; A and W are not read when alpha is 0 or w.K is 0.",
	},
	{
		name:     "GemmBF16Compute",
		params:   "transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int",
		summary:  "computes C = alpha*op(A)*op(B) + beta*C with A and B rounded to bfloat16",
		contract: "As Gemm's; each product of bfloat16 operands is summed in float32. m, n > 0, k >= 0; every matrix fits its slice with its leading dimension; C overlaps neither A nor B; C is not read when beta is 0.",
	},
	{
		name:     "GemmBiasBF16Compute",
		params:   "transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, c []float32, ldc int",
		summary:  "sets C = op(A)·op(B) + bias with A and B rounded to bfloat16",
		contract: "With the arithmetic of GemmBF16Compute (alpha 1, beta 0) followed by Add(C_i, C_i, bias) on each row i of C. m, n > 0, k >= 0; every matrix fits its slice, len(bias) >= n; C overlaps neither A nor B (when k > 0), nor bias.",
	},
	{
		name:     "GemmBiasGELUBF16Compute",
		params:   "transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, pre []float32, ldpre int, out []float32, ldout int",
		summary:  "sets pre = op(A)·op(B) + bias and out = gelu(pre) with A and B rounded to bfloat16",
		contract: "With the arithmetic of GemmBF16Compute (alpha 1, beta 0) followed by BiasGELU. m, n > 0, k >= 0; every matrix fits its slice, len(bias) >= n; pre and out overlap neither A nor B (when k > 0), nor each other, nor bias.",
	},
	{
		name:     "GemmBF16ComputeWeights",
		params:   "m int, alpha float32, a []float32, lda int, w *lowbit.BF16, beta float32, c []float32, ldc int",
		summary:  "computes C = alpha*A·Wᵀ + beta*C with A rounded to bfloat16, for the bfloat16 weights W",
		contract: "As GemmBF16Compute with op(B) = Wᵀ. m >= 0; w is a valid matrix (lowbit.BF16.Check); A (m×w.K) and C (m×w.N) fit their slices with lda >= max(w.K, 1) and ldc >= max(w.N, 1); C overlaps neither A nor w.Data; C is not read when beta is 0; A and W are not read when alpha is 0 or w.K is 0.",
	},
	{
		name:      "GemvBF16",
		params:    "alpha float32, w *lowbit.BF16, x []float32, beta float32, y []float32",
		summary:   "computes y = alpha*W·x + beta*y for the bfloat16 weights W",
		composite: true,
	},
	{
		name:      "GemvInt8",
		params:    "alpha float32, w *lowbit.Int8, x []float32, beta float32, y []float32",
		summary:   "computes y = alpha*W·x + beta*y for the int8 weights W",
		composite: true,
	},
	{
		name:      "MatMul",
		params:    "m, n, k int, a, b, c []float32",
		summary:   "computes C = A*B for contiguous row-major matrices (A m×k, B k×n, C m×n)",
		composite: true,
	},
	{
		name:      "AddLayerNorm",
		params:    "m, n int, x []float32, ldx int, r []float32, ldr int, sum []float32, ldsum int, gamma, beta []float32, eps float32, y []float32, ldy int, mean, rstd []float32",
		summary:   "adds a residual and normalises the sum",
		composite: true,
	},
}
