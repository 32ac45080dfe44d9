package main

// kernels is the one list of the kernels package kernels offers, in the
// order of kernelset.Set's fields. Each kernel's signature is written here
// once; the generator derives from it kernelset.Set's field, generic's
// wiring, the package-level function, bench.KernelFuncs' field, the
// field's wiring in every SIMD set (sets.go: the set literals of
// kernels/amd64 and kernels/arm64) and its row in README's kernel table
// (readme.go). The checked method on *kernels.Impl, its full
// documentation and argument checks, is written by hand in the kernel's
// family file, with the same signature (the build fails where they
// disagree): its checks are one or two calls of check.go's helpers on
// its own arguments, which a description here would only restate.
//
// A kernel's entry: name; params and results, the Go signature; summary
// and contract, what its implementations may assume (the checks of
// package kernels); simd, the Go expression that provides it in an ISA
// package with $ for the set's suffix (AVX2, AVX512, NEON; by default
// lowerFirst(name)+"$", such as dot$ for Dot; g is the set's GEMM family,
// gemm.Family, and a family table's value the family its driver builds,
// such as bf, the bfloat16 products: see the family tables), which a set
// that names it otherwise replaces in its overrides (sets.go); readme,
// its row in README's kernel table, placed by its name in readmeOrder;
// composite, for a kernel package kernels computes from the others (no
// field in Set). The other files a kernel takes, written by hand or
// generated, are listed in README ("Adding a kernel"); go generate ./...
// from the module's root writes what derives from this file.
var kernels = []kernel{
	{
		name:     "Gemm",
		simd:     "g.Gemm",
		params:   "transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int",
		summary:  "computes C = alpha*op(A)*op(B) + beta*C",
		contract: "m, n > 0, k >= 0; every matrix fits its slice with its leading dimension; C overlaps neither A nor B; C is not read when beta is 0.",
		readme:   "C = alpha·op(A)·op(B) + beta·C, all four transpose combinations, leading dimensions; packed, cache-blocked, register-blocked micro-kernels, several goroutines for large problems, and a path that streams B in place for few rows of op(A)",
	},
	{
		name:     "Gemv",
		simd:     "g.Gemv",
		params:   "trans bool, m, n int, alpha float32, a []float32, lda int, x []float32, beta float32, y []float32",
		summary:  "computes y = alpha*op(A)*x + beta*y",
		contract: "m, n >= 0; A (m×n) fits its slice with lda >= max(n, 1); len(x) and len(y) are at least n and m (m and n when trans); y overlaps neither A nor x; y is not read when beta is 0; A and x are not read when alpha is 0.",
		readme:   "y = alpha·op(A)·x + beta·y, as BLAS's sgemv; A read once, in place",
	},
	{
		name:     "Softmax",
		params:   "m, n int, x []float32, ldx int, y []float32, ldy int",
		summary:  "writes the row-wise softmax of x into y",
		contract: "m, n > 0; both fit their slices; y is x (same start and leading dimension) or does not overlap it.",
		readme:   "row-wise, numerically stable, in place or not; defined results for -Inf, NaN and fully masked rows",
	},
	{
		name:     "SoftmaxBackward",
		params:   "m, n int, y []float32, ldy int, dy []float32, lddy int, dx []float32, lddx int",
		summary:  "computes the gradient through a row-wise softmax",
		contract: "dx = y*(dy - rowsum(y*dy)) row by row. m, n > 0; all three fit their slices; dx is dy or apart from it, and apart from y.",
		readme:   "the gradient through a row-wise softmax, dx = y·(dy − rowsum(y·dy))",
	},
	{
		name:     "MaskedScores",
		simd:     "g.MaskedScores",
		params:   "tq, tk, d int, scale float32, q []float32, ldq int, k []float32, ldk int, offset int, s []float32, lds int",
		summary:  "computes causally masked attention scores",
		contract: "S = scale*Q*Kᵀ with the causal mask. tq, tk > 0, d >= 0; every matrix fits its slice; S overlaps neither Q nor K.",
		readme:   "S = scale·Q·Kᵀ with a causal mask (and a KV-cache offset); wholly masked tiles are skipped",
	},
	{
		name:     "Dot",
		params:   "x, y []float32",
		results:  "float32",
		summary:  "returns the dot product of x and y",
		contract: "len(x) == len(y).",
		readme:   "the dot product of x and y",
	},
	{
		name:     "Axpy",
		params:   "alpha float32, x, y []float32",
		summary:  "sets y[i] += alpha*x[i]",
		contract: "len(x) == len(y).",
		readme:   "y[i] += alpha·x[i]",
	},
	{
		name:     "Scale",
		params:   "alpha float32, x []float32",
		summary:  "sets x[i] *= alpha",
		contract: "",
		readme:   "x[i] *= alpha",
	},
	{
		name:     "Add",
		params:   "dst, x, y []float32",
		summary:  "sets dst[i] = x[i] + y[i]",
		contract: "All lengths equal; dst is x, y or apart from both.",
		readme:   "dst[i] = x[i] + y[i]",
	},
	{
		name:     "Sum",
		params:   "x []float32",
		results:  "float32",
		summary:  "returns the sum of x",
		contract: "0 when empty.",
		readme:   "the sum of x (0 when empty)",
	},
	{
		name:     "Max",
		params:   "x []float32",
		results:  "float32",
		summary:  "returns the largest element of x",
		contract: "-Inf when empty, the first NaN element when there is one.",
		readme:   "the largest element of x (-Inf when empty, the first NaN when there is one)",
	},
	{
		name:     "LayerNorm",
		simd:     "layernorm.LayerNorm(layerNormRow$)",
		params:   "m, n int, x []float32, ldx int, gamma, beta []float32, eps float32, y []float32, ldy int, mean, rstd []float32",
		summary:  "normalises the rows of x into y",
		contract: "m, n > 0; x and y fit their slices; y is x (same start and leading dimension) or apart from it; gamma and beta hold at least n; mean and rstd are nil or hold at least m.",
		readme:   "per-row normalisation with γ and β, saving each row's mean and 1/std",
	},
	{
		name:     "LayerNormBackward",
		simd:     "layernorm.LayerNormBackward(layerNormBackwardRow$)",
		params:   "m, n int, dy []float32, lddy int, x []float32, ldx int, mean, rstd, gamma []float32, dx []float32, lddx int, dgamma, dbeta []float32",
		summary:  "accumulates the gradients of LayerNorm",
		contract: "The gradients go into dx, dgamma and dbeta. m, n > 0; dy, x and dx fit their slices, dx apart from dy and x; mean and rstd hold at least m; gamma, dgamma and dbeta at least n, dgamma apart from dbeta.",
		readme:   "LayerNorm's gradients: dx, and dγ and dβ accumulated",
	},
	{
		name:     "AdamW",
		simd:     "adamwSet$",
		params:   "params, grads, m, v []float32, h AdamWParams",
		summary:  "applies one AdamW step",
		contract: "Every element of params is updated from grads and the moments m and v, with the arithmetic of generic.AdamW (bit for bit). All four have the same length; none overlaps another.",
		readme:   "one AdamW step over parameters, gradients and moments in one pass, bitwise the same on every implementation",
	},
	{
		name:     "SumSquares",
		params:   "x []float32",
		results:  "float64",
		summary:  "returns the sum of the squares of x in float64",
		contract: "Each square exact in float64 and summed in float64; 0 when empty.",
		readme:   "the sum of the squares of x in float64 (the squared gradient norm)",
	},
	{
		name:     "SoftmaxCrossEntropy",
		simd:     "xent$",
		params:   "m, n int, logits []float32, ldl int, targets []int32, scale float32, dlogits []float32, lddl int, losses []float32",
		summary:  "computes the row-wise cross-entropy losses and their gradient",
		contract: "Writes, per row i of the m×n logits, the loss logsumexp(logits[i,:]) - logits[i,targets[i]] into losses[i] and scale*(softmax(logits[i,:]) - onehot(targets[i])) into dlogits[i,:]. m, n > 0; both matrices fit their slices; len(targets), len(losses) >= m; every target is in [0, n); dlogits is logits (same start and leading dimension) or apart from it; losses overlaps neither.",
		readme:   "per row, the loss logsumexp − logit[target] and the gradient scale·(softmax − onehot), fused, in place or not",
	},
	{
		name:     "GELU",
		simd:     "geluRow$",
		params:   "dst, x []float32",
		summary:  "sets dst[i] = gelu(x[i])",
		contract: "Tanh form. len(dst) == len(x); dst is x or apart from it.",
		readme:   "the tanh-form GELU as x·σ(2u) with a vectorised exp (documented, tested error against float64)",
	},
	{
		name:     "GELUBackward",
		simd:     "geluBackwardRow$",
		params:   "dx, dy, x []float32",
		summary:  "sets dx[i] = dy[i]·gelu'(x[i])",
		contract: "All lengths equal; dx is dy or apart from it, and apart from x.",
		readme:   "dx = dy·gelu'(x), the derivative recomputed from x",
	},
	{
		name:     "BiasGELU",
		simd:     "biasGelu$",
		params:   "m, n int, x []float32, ldx int, bias []float32, y []float32, ldy int",
		summary:  "adds bias to every row of x in place and writes gelu of the result into y",
		contract: "m, n > 0; x and y fit their slices, len(bias) >= n; y is x (same start and leading dimension) or apart from it; bias is apart from x and y.",
		readme:   "the bias add fused into the GELU pass: x += bias in place, y = gelu(x)",
	},
	{
		name:     "GemmBiasGELU",
		simd:     "g.GemmBiasGELU",
		params:   "transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, pre []float32, ldpre int, out []float32, ldout int",
		summary:  "sets pre = op(A)·op(B) + bias and out = gelu(pre)",
		contract: "With the arithmetic of Gemm (alpha 1, beta 0) followed by BiasGELU. m, n > 0, k >= 0; every matrix fits its slice, len(bias) >= n; pre and out overlap neither A nor B (when k > 0), nor each other, nor bias.",
		readme:   "a linear layer with its bias and GELU, pre = op(A)·op(B) + bias and out = gelu(pre), both applied by the GEMM to each sliver of its result while it is in cache",
	},
	{
		name:     "GemmBias",
		simd:     "g.GemmBias",
		params:   "transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, c []float32, ldc int",
		summary:  "sets C = op(A)·op(B) + bias",
		contract: "With the arithmetic of Gemm (alpha 1, beta 0) followed by Add(C_i, C_i, bias) on each row i of C. m, n > 0, k >= 0; every matrix fits its slice, len(bias) >= n; C overlaps neither A nor B (when k > 0), nor bias.",
		readme:   "a linear layer with its bias, C = op(A)·op(B) + bias, the bias added by the GEMM to each sliver of C while it is in cache (bitwise Gemm followed by Add over each row)",
	},
	{
		name:     "GemmBF16",
		simd:     "bf16compute.GemmBF16Rows(g, lowbit$.GemmBF16)",
		params:   "m int, alpha float32, a []float32, lda int, w *lowbit.BF16, beta float32, c []float32, ldc int",
		summary:  "computes C = alpha*A·Wᵀ + beta*C for the bfloat16 weights W",
		contract: "m >= 0; w is a valid matrix (lowbit.BF16.Check); A (m×w.K) and C (m×w.N) fit their slices with lda >= max(w.K, 1) and ldc >= max(w.N, 1); C overlaps neither A nor w.Data; C is not read when beta is 0; A and W are not read when alpha is 0 or w.K is 0.",
		readme:   "C = alpha·A·Wᵀ + beta·C for bfloat16 weights W (`lowbit.BF16`, 2 bytes a weight), built for few rows of A (decoding), W read once for up to 8 rows",
	},
	{
		name:     "GemmInt8",
		simd:     "lowbit$.GemmInt8",
		params:   "m int, alpha float32, a []float32, lda int, w *lowbit.Int8, beta float32, c []float32, ldc int",
		summary:  "computes C = alpha*A·Wᵀ + beta*C for the int8 weights W",
		contract: "m >= 0; w is a valid matrix (lowbit.Int8.Check); A (m×w.K) and C (m×w.N) fit their slices with lda >= max(w.K, 1) and ldc >= max(w.N, 1); C overlaps neither A nor w.Blocks; C is not read when beta is 0; A and W are not read when alpha is 0 or w.K is 0.",
		readme:   "C = alpha·A·Wᵀ + beta·C for int8 weights W (`lowbit.Int8`, one float32 scale a group of 32, 1.125 bytes a weight), the activations quantized to int16 and the products summed in integers; on `avx2` and `avx512` a row of C is bitwise the same whatever the rows of A computed with it (so decoding several sequences at once gives each one its logits alone)",
	},
	{
		name:     "DequantizeInt8",
		simd:     "lowbit$.DequantizeInt8",
		params:   "w *lowbit.Int8, j0, n int, d []float32, ldd int",
		summary:  "writes rows j0 .. j0+n-1 of the int8 weights W, dequantized, into D",
		contract: "D[r][p] = w.At(j0+r, p) (its group's scale times the int8 weight, rounded once to float32) for r < n, p < w.K, bit for bit in every implementation. w is a valid matrix (lowbit.Int8.Check); 0 <= j0 <= j0+n <= w.N; D (n×w.K) fits its slice with ldd >= max(w.K, 1).",
		readme:   "rows of int8 weights written out as float32 (`lowbit.Int8.At`, bit for bit on every implementation), for a product in another precision (`GemmBF16Compute`); `GemmDequantInt8` is the float32 product without the copy",
	},
	{
		name:     "GemmDequantInt8",
		simd:     "lowbit$.GemmDequantInt8On(g.Driver)",
		params:   "m int, alpha float32, a []float32, lda int, w *lowbit.Int8, beta float32, c []float32, ldc int",
		summary:  "computes C = alpha*A·Wᵀ + beta*C for the int8 weights W dequantized, with float32 products",
		contract: "Bitwise DequantizeInt8 of all of W into D followed by Gemm(false, true, m, w.N, w.K, alpha, A, lda, D, w.K, beta, C, ldc). m > 0, w.N > 0; w is a valid matrix (lowbit.Int8.Check); A (m×w.K) and C (m×w.N) fit their slices with lda >= max(w.K, 1) and ldc >= max(w.N, 1); C overlaps neither A nor w.Blocks; C is not read when beta is 0; A and W are not read when alpha is 0 or w.K is 0.",
		readme:   "C = alpha·A·Wᵀ + beta·C for int8 weights W dequantized (bitwise `DequantizeInt8` then `Gemm`), built for many rows of A (prompt processing); on AVX2 and AVX-512 the GEMM packs its panels straight from the int8 weights, with no dequantized copy",
	},
	{
		name:     "GemmBF16Compute",
		simd:     "bf.GemmBF16Compute",
		params:   "transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int",
		summary:  "computes C = alpha*op(A)*op(B) + beta*C with A and B rounded to bfloat16",
		contract: "As Gemm's; each product of bfloat16 operands is summed in float32. m, n > 0, k >= 0; every matrix fits its slice with its leading dimension; C overlaps neither A nor B; C is not read when beta is 0.",
		readme:   "C = alpha·op(A)·op(B) + beta·C with A and B rounded to bfloat16 and the products summed in float32 (Gemm's arguments), on VDPBF16PS where the CPU has AVX512_BF16 (except on Intel Xeons, whose two 512-bit FMA units outrun it: `Impl.BF16Dot`) and on BFDOT where it has FEAT_BF16 (Arm), elsewhere the float32 GEMM on the rounded operands; the error bound is in the package documentation",
	},
	{
		name:     "GemmBiasBF16Compute",
		simd:     "bf.GemmBiasBF16Compute",
		params:   "transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, c []float32, ldc int",
		summary:  "sets C = op(A)·op(B) + bias with A and B rounded to bfloat16",
		contract: "With the arithmetic of GemmBF16Compute (alpha 1, beta 0) followed by Add(C_i, C_i, bias) on each row i of C. m, n > 0, k >= 0; every matrix fits its slice, len(bias) >= n; C overlaps neither A nor B (when k > 0), nor bias.",
		readme:   "GemmBias in bfloat16 compute (bitwise GemmBF16Compute followed by Add over each row)",
	},
	{
		name:     "GemmBiasGELUBF16Compute",
		simd:     "bf.GemmBiasGELUBF16Compute",
		params:   "transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, pre []float32, ldpre int, out []float32, ldout int",
		summary:  "sets pre = op(A)·op(B) + bias and out = gelu(pre) with A and B rounded to bfloat16",
		contract: "With the arithmetic of GemmBF16Compute (alpha 1, beta 0) followed by BiasGELU. m, n > 0, k >= 0; every matrix fits its slice, len(bias) >= n; pre and out overlap neither A nor B (when k > 0), nor each other, nor bias.",
		readme:   "GemmBiasGELU in bfloat16 compute (bitwise GemmBF16Compute followed by BiasGELU)",
	},
	{
		name:     "GemmBF16ComputeWeights",
		simd:     "bf.GemmBF16ComputeWeights",
		params:   "m int, alpha float32, a []float32, lda int, w *lowbit.BF16, beta float32, c []float32, ldc int",
		summary:  "computes C = alpha*A·Wᵀ + beta*C with A rounded to bfloat16, for the bfloat16 weights W",
		contract: "As GemmBF16Compute with op(B) = Wᵀ. m >= 0; w is a valid matrix (lowbit.BF16.Check); A (m×w.K) and C (m×w.N) fit their slices with lda >= max(w.K, 1) and ldc >= max(w.N, 1); C overlaps neither A nor w.Data; C is not read when beta is 0; A and W are not read when alpha is 0 or w.K is 0.",
		readme:   "C = alpha·A·Wᵀ + beta·C in bfloat16 compute for bfloat16 weights W (`lowbit.BF16`), the weights' words packed as they are, A rounded",
	},
	{
		name:      "GemvBF16",
		params:    "alpha float32, w *lowbit.BF16, x []float32, beta float32, y []float32",
		summary:   "computes y = alpha*W·x + beta*y for the bfloat16 weights W",
		composite: true,
		readme:    "y = alpha·W·x + beta·y for bfloat16 weights; on CPUs with AVX512_BF16 the `avx512` implementation holds x as two bfloat16 (within 2⁻¹⁶ of float32) on `VDPBF16PS`, which streams the weights faster than converting them",
	},
	{
		name:      "GemvInt8",
		params:    "alpha float32, w *lowbit.Int8, x []float32, beta float32, y []float32",
		summary:   "computes y = alpha*W·x + beta*y for the int8 weights W",
		composite: true,
		readme:    "y = alpha·W·x + beta·y for int8 weights",
	},
	{
		name:      "MatMul",
		params:    "m, n, k int, a, b, c []float32",
		summary:   "computes C = A*B for contiguous row-major matrices (A m×k, B k×n, C m×n)",
		composite: true,
		readme:    "C = A·B for contiguous row-major matrices, Gemm without the options",
	},
	{
		name:      "AddLayerNorm",
		params:    "m, n int, x []float32, ldx int, r []float32, ldr int, sum []float32, ldsum int, gamma, beta []float32, eps float32, y []float32, ldy int, mean, rstd []float32",
		summary:   "adds a residual and normalises the sum",
		composite: true,
		readme:    "the residual add fused into the LayerNorm that follows it (each row normalised while in L1, bitwise as the two calls)",
	},
}

// readmeOrder is the order of the rows of README's kernel table (see
// readme.go): every kernel of the list once, by what they compute.
var readmeOrder = []string{
	// Matrix products: float32, then bfloat16 and int8.
	"Gemm", "MatMul", "Gemv", "GemmBias", "GemmBiasGELU",
	"GemmBF16", "GemmBF16Compute", "GemmBiasBF16Compute", "GemmBiasGELUBF16Compute",
	"GemmBF16ComputeWeights", "GemmInt8", "GemvBF16", "GemvInt8", "DequantizeInt8", "GemmDequantInt8",
	// Attention and the row-wise kernels.
	"MaskedScores", "Softmax", "SoftmaxBackward", "SoftmaxCrossEntropy",
	"LayerNorm", "LayerNormBackward", "AddLayerNorm",
	"GELU", "GELUBackward", "BiasGELU",
	// Vectors and the optimizer.
	"Dot", "Axpy", "Scale", "Add", "Sum", "Max", "SumSquares", "AdamW",
}

// The family tables: each is the Go type a family's driver takes its
// assembly functions in (asmKind.in and rows name the fields the
// functions fill). A family whose kernels are methods of a value the
// driver builds (build) says how every SIMD set makes it: the variable
// its kernels' simd expressions name (value), the driver's constructor
// (build), and which sets give the constructor their table, under which
// CPU condition (sets; the other sets give nil, and the constructor
// falls back to Go or to other kernels). The generators write each ISA's
// table literals (families_gen.go) and apigen the sets' calls of build
// (sets_gen.go), so that a new family's wiring is these lines.
var (
	skinny = &familyTable{name: "skinny", typ: "gemm.Skinny", pkg: "github.com/simdgpt/simdgpt/kernels/internal/gemm"}
	lowbit = &familyTable{
		name: "lowbit", typ: "*lowbit.Kernels", pkg: "github.com/simdgpt/simdgpt/kernels/internal/lowbit",
		about: "the driver of the products over low-bit weights (`GemmBF16`, `GemmInt8`)",
	}
	bf16Kernels = &familyTable{
		name: "bf16Kernels", typ: "bf16compute.Kernels", pkg: "github.com/simdgpt/simdgpt/kernels/internal/bf16compute",
		value: "bf", build: "bf16compute.NewFamily",
		about: "the driver of the bfloat16-compute products: operands packed once into bfloat16 pairs, blocked over a VDPBF16PS (AVX512_BF16) or BFDOT (FEAT_BF16) micro-kernel, or rounded as the float32 GEMM packs them where the CPU has no bfloat16 dot product or its float32 FMAs are faster",
		// VDPBF16PS on AVX512_BF16 where it is the faster
		// (bf16DotAVX512), BFDOT on FEAT_BF16; the avx2 set, and a CPU
		// without them, round the operands for the float32 GEMM.
		sets: map[string]string{"AVX512": "bf16DotAVX512", "NEON": "hasBF16"},
	}
)

// asmKinds is the one list of the kinds of assembly functions, for both
// architectures: each kind's Go signature, the architectures that have
// it, what takes it (a field of kernelset.Set, a driver's function type,
// or the Go wrapper that calls it) and the generic function that is the
// executable reference of its contract, if any (the stubs' doc comments
// name it). The generator writes it into
// asm/gen/internal/entry (list_gen.go), where the avo generators and the
// NEON emitter take each function's signature from its kind; see that
// package for the naming of the functions and its test, which checks
// every generated stub against the list. A kind that a family's driver
// takes in a table (skinny, lowbit, bf16Kernels, above) names the table
// and its field (asmKind.in), and the generators write each ISA's table
// from the functions they emitted (families_gen.go of kernels/amd64 and
// kernels/arm64); a driver's table lists nothing by hand. A new assembly
// function of a new kind needs its line here.
var asmKinds = []asmKind{
	// vecops: the vector operations, the set's kernels themselves
	// (generic.Dot ... generic.Max are their executable references).
	kind("dot", "func(x, y []float32) float32", both, "kernelset.Set.Dot", "generic.Dot"),
	kind("axpy", "func(alpha float32, x, y []float32)", both, "kernelset.Set.Axpy", "generic.Axpy"),
	kind("scale", "func(alpha float32, x []float32)", both, "kernelset.Set.Scale", "generic.Scale"),
	kind("add", "func(dst, x, y []float32)", both, "kernelset.Set.Add, gemm.AddRow", "generic.Add"),
	kind("sum", "func(x []float32) float32", both, "kernelset.Set.Sum", "generic.Sum"),
	kind("roundBF16", "func(dst, x []float32)", both, "gemm.Family.RoundBF16", ""),
	kind("widenBF16", "func(dst []float32, src []uint16)", both, "gemm.Family.WidenBF16", ""),
	kind("max", "func(x []float32) float32", both, "kernelset.Set.Max (NEON: maxFirstNaNNEON)", "generic.Max"),

	// gemm: the micro-kernels of the GEMM driver, and amd64's packing
	// and edge kernels.
	kind("gemmKernel", "func(k int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, rows, cols int, alpha, beta float32)", both, "gemm.KernelFunc", ""),
	kind("gemmColsKernel", "func(k int, a *float32, b *float32, cols int, dst *float32)", onAMD64, "gemm.Kernels.Cols", ""),
	kind("gemmDotKernel", "func(k int, a *float32, lda int, b *float32, c *float32, ldc int, alpha, beta float32)", onAMD64, "gemm.Kernels.Dot", ""),
	kind("packB", "func(dst *float32, src *float32, ldb int, w int, kc int, nr int)", onAMD64, "gemm.Kernels.PackN", ""),
	kind("packBTrans", "func(dst *float32, src *float32, ldb int, w int, kc int, nr int)", onAMD64, "gemm.Kernels.PackT", ""),
	kind("packPanels", "func(dst *float32, src *float32, lda int, m int, kc int)", onAMD64, "gemm.Kernels.PackPanels and PackBPanels", ""),

	// skinny: the GEMM driver's kernels for few rows of op(A).
	kind("skinnyDots", "func(rows, k int, w *float32, ldw int, x *float32, ldx int, c *float32, ldc int, alpha, beta float32)", both, "gemm.DotsFunc", "").rows(skinny, "Dots"),
	kind("skinnyAxpys", "func(k, n int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)", both, "gemm.AxpysFunc", "").rows(skinny, "Axpys"),
	kind("skinnyStream", "func(k, n int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, acc *float32)", onAMD64, "gemm.StreamFunc", "").rows(skinny, "Stream"),

	// lowbit: the products over low-bit weights.
	kind("lowbitBF16", "func(rows, groups int, w *byte, ldw int, x *float32, ldx int, xt *float32, c *float32, ldc int, alpha, beta float32)", both, "lowbit.Kernel", "").rows(lowbit, "BF16"),
	kind("lowbitInt8", "func(rows, groups int, w *byte, ldw int, x *int16, ldx int, xs *float32, c *float32, ldc int, beta float32)", both, "lowbit.Int8Kernel", "").rows(lowbit, "Int8"),
	kind("lowbitBF16Pair", "func(rows, groups int, w *byte, ldw int, x *uint16, ldx int, c *float32, alpha float64, beta float32) (done int)", onAMD64, "lowbit.PairKernel", "").in(lowbit, "BF16Pair").when("bf16DotAVX512"),
	kind("lowbitSplitBF16", "func(groups int, x *float32, out *uint16, ldo int, tail uint32) (scale float32, ok bool)", onAMD64, "lowbit.SplitFunc", "").in(lowbit, "SplitBF16").when("bf16DotAVX512"),
	kind("lowbitDequantInt8", "func(groups int, w *byte, dst *float32)", both, "lowbit.DequantFunc", "").in(lowbit, "DequantInt8"),
	kind("lowbitPackInt8", "func(chunks int, w *byte, stride int, odd int, dst *float32, nr int)", both, "lowbit.PackInt8Func", "").in(lowbit, "PackInt8"),
	kind("packBF16", "func(chunks int, w *byte, stride int, odd int, dst *float32, nr int)", both, "gemm.Family.PackBF16", ""),
	kind("lowbitQuantInt16", "func(blocks int, x *float32, inv float64, q *int16)", onAMD64, "lowbit.QuantFunc", "").in(lowbit, "QuantInt16"),

	// bf16compute: the micro-kernels of the bfloat16 products (VDPBF16PS
	// on AVX512_BF16, BFDOT on FEAT_BF16) and amd64's packers.
	kind("gemmBF16Kernel", "func(kp int, a *uint32, rsa, csa int, b *uint32, c *float32, ldc int, alpha, beta float32)", both, "bf16compute.Kernels.Micro", "").in(bf16Kernels, "Micro"),
	kind("gemmBF16PrefetchKernel", "func(kp int, a *uint32, rsa, csa int, b *uint32, c *float32, ldc int, alpha, beta float32, pf *float32, pfs int)", onAMD64, "bf16compute.Kernels.MicroPrefetch", "").in(bf16Kernels, "MicroPrefetch"),
	kind("bf16PackRows", "func(dst *uint32, src *float32, lds, rows, blocks, ldd int)", onAMD64, "bf16compute.Kernels.PackRows and PackRowsHalves", "").in(bf16Kernels, "PackRows"),
	kind("bf16PackPairs", "func(dst *uint32, src *float32, lds, kp, chunks, ldd int)", onAMD64, "bf16compute.Kernels.PackPairs", "").in(bf16Kernels, "PackPairs"),
	kind("bf16Transpose", "func(dst *uint32, src *uint32, lds, ldd, blocks int)", onAMD64, "bf16compute.Kernels.Transpose", "").in(bf16Kernels, "Transpose"),

	// softmax: the row kernels of Softmax, SoftmaxBackward and the
	// cross-entropy's exponentials.
	kind("softmaxRow", "func(dst, src []float32)", onAMD64, "softmaxAVX2, softmaxAVX512", "generic.SoftmaxRow"),
	kind("softmaxRows2", "func(dst0, src0, dst1, src1 []float32)", onAMD64, "softmaxAVX512", ""),
	kind("softmaxExpRow", "func(dst, src []float32) (c, sum float32)", onAMD64, "xent.ExpRow (through expRowAVX2, expRowAVX512)", ""),
	kind("softmaxBackwardRow", "func(dx, y, dy []float32)", both, "softmaxBackwardAVX2, softmaxBackwardAVX512, softmaxBackwardNEON", "generic.SoftmaxBackwardRow"),
	kind("expRow", "func(dst, src []float32, c, b, thr float32) float64", onARM64, "expShiftedNEON", ""),
	kind("expRowFar", "func(dst, src []float32, c, b, thr float32) float64", onARM64, "expShiftedNEON", ""),

	// layernorm: the one-row kernels of the LayerNorm driver.
	kind("layerNormRow", "func(y, x, gamma, beta []float32, eps float32) (mean, rstd float32)", both, "layernorm.LayerNormRow", "generic.LayerNormRow"),
	kind("layerNormBackwardRow", "func(dx, dy, x, gamma, dgamma, dbeta []float32, mean, rstd float32)", both, "layernorm.LayerNormBackwardRow", "generic.LayerNormBackwardRow"),

	// optim.
	kind("adamw", "func(p, g, m, v []float32, scale, b1, c1, b2, c2, ic1, ic2, eps, wd, lr float32)", both, "kernelset.Set.AdamW (through adamwSetAVX2 ...)", "generic.AdamW"),
	kind("sumSquares", "func(x []float32) float64", both, "kernelset.Set.SumSquares", "generic.SumSquares"),

	// gelu: the row kernels of GELU, GELUBackward and BiasGELU.
	kind("geluRow", "func(dst, x []float32)", both, "kernelset.Set.GELU (NEON: geluNEON)", "generic.GELU"),
	kind("geluBackwardRow", "func(dx, dy, x []float32)", both, "kernelset.Set.GELUBackward (NEON: geluBackwardNEON)", "generic.GELUBackward"),
	kind("biasGeluRow", "func(y, x, bias []float32)", both, "kernelset.Set.BiasGELU (through biasGeluAVX2 ...)", ""),

	// peak: the measuring loops of kernelset.Instruments.
	kind("fmaPeak", "func(n int)", both, "kernelset.Instruments.FMALoop", ""),
	kind("readAhead", "func(p *float32, n, dist int) float32", onAMD64, "kernelset.Instruments.ReadLoop", ""),
	kind("readStreams", "func(p *float32, n, streams, stride int) float32", onAMD64, "kernelset.Instruments.StreamsLoop", ""),
	kind("bf16Peak", "func(n int)", both, "kernelset.Instruments.BF16Loop", ""),
}
