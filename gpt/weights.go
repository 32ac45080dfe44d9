package gpt

import (
	"fmt"
	"github.com/simdgpt/simdgpt/internal/hugepage"
	"strconv"
	"strings"
	"sync"

	"github.com/simdgpt/simdgpt/attention"
	"github.com/simdgpt/simdgpt/kernels"
	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

// Weights is the format of a model's matrices: float32 (every model's,
// and the only one that trains) or, for inference, bfloat16 or int8 (see
// Model.WithWeights).
type Weights uint8

const (
	WeightsF32  Weights = iota // float32, 4 bytes a weight
	WeightsBF16                // bfloat16 (lowbit.BF16), 2 bytes a weight
	WeightsInt8                // 8-bit with a float32 scale a group of 32 (lowbit.Int8), 1.125 bytes a weight
)

// weightsNames are the formats' names, as String and ParseWeights spell them.
var weightsNames = [...]string{WeightsF32: "f32", WeightsBF16: "bf16", WeightsInt8: "int8"}

// String returns f's name: "f32", "bf16" or "int8".
func (f Weights) String() string {
	if int(f) < len(weightsNames) {
		return weightsNames[f]
	}
	return fmt.Sprintf("Weights(%d)", f)
}

// ParseWeights returns the format named s ("f32", "bf16" or "int8").
func ParseWeights(s string) (Weights, error) {
	for f, name := range weightsNames {
		if s == name {
			return Weights(f), nil
		}
	}
	return 0, fmt.Errorf("weights format %q is not one of f32, bf16, int8", s)
}

// matrixBytes is the memory of an n×k matrix (n outputs of k inputs) in
// format f.
func (f Weights) matrixBytes(n, k int) float64 {
	switch f {
	case WeightsBF16:
		return 2 * float64(n) * float64(lowbit.Groups(k)*lowbit.GroupSize)
	case WeightsInt8:
		return 36 * float64(n) * float64(lowbit.Groups(k))
	}
	return 4 * float64(n) * float64(k)
}

// linear is one of the matrices a forward pass multiplies by: the block's
// four projections and the LM head, y = x·W (+ bias) with W of k inputs
// and n outputs. Exactly one of f32, bf and i8 is set. f32 is W as the
// parameters lay it out, [k,n] row-major ([n,k] when nk, the tied head's
// wte); bf and i8 hold W as n rows of k (lowbit's layout). The products
// of the float32 matrix are the ones training's forward pass computes.
type linear struct {
	k, n int
	f32  []float32
	nk   bool
	bf   *lowbit.BF16
	i8   *lowbit.Int8
	bias []float32 // [n], nil for none
	// bf16: products of at least bf16MinRows rows in bfloat16 compute
	// (Model.SetPrecision); int8 weights dequantized first (int8Panels).
	bf16 bool
}

// bf16Rows reports whether a product of rows rows computes in bfloat16.
func (w *linear) bf16Rows(rows int) bool { return w.bf16 && rows >= bf16MinRows }

// lowGemm sets out [rows,n] = x [rows,k]·W + beta·out for a low-bit W:
// bfloat16 weights read directly by the bf16 kernels, int8 weights by the
// int8 kernels for fewer than int8MinRows rows and dequantized for more
// (kernels.GemmDequantInt8, or int8Panels in bfloat16 compute).
func (w *linear) lowGemm(p *kernels.Impl, out, x []float32, rows int, beta float32) {
	if w.bf != nil && w.bf16Rows(rows) {
		p.GemmBF16ComputeWeights(rows, 1, x, w.k, w.bf, beta, out, w.n)
		return
	}
	if w.bf != nil {
		p.GemmBF16(rows, 1, x, w.k, w.bf, beta, out, w.n)
		return
	}
	switch {
	case rows >= int8MinRows && w.bf16Rows(rows):
		w.int8Panels(p, out, x, rows, beta)
	case rows >= int8MinRows:
		p.GemmDequantInt8(rows, 1, x, w.k, w.i8, beta, out, w.n)
	default:
		p.GemmInt8(rows, 1, x, w.k, w.i8, beta, out, w.n)
	}
}

// int8MinRows is the fewest rows a product over int8 weights computes on
// the weights dequantized (kernels.GemmDequantInt8) rather than with the int8
// kernels (kernels.GemmInt8), which quantize the rows to int16 and run
// fewer rows at a time: from this many rows on, the product's work
// outweighs dequantizing the weights once.
const int8MinRows = 16

// int8PanelCols is the number of output columns of int8 weights
// dequantized at a time (a panel of int8PanelCols × k floats).
const int8PanelCols = 256

// int8PanelPool holds the dequantized panels of int8Panels, so that
// prompts processed one after another, or at once by several samplers of
// one model, allocate none once warm.
var int8PanelPool = sync.Pool{New: func() any { return new([]float32) }}

// int8Panels sets out [rows,n] = x·W + beta·out for int8 weights W in
// bfloat16 compute, by panels of int8PanelCols columns: each panel
// dequantized (kernels.DequantizeInt8) exactly as lowbit.Int8.At does
// (Scale·Q in float32), then multiplied by x with bfloat16 products
// (kernels.GemmBF16Compute). Its results are thus those of the bfloat16
// product with the dequantized weights; the float32 products take
// kernels.GemmDequantInt8, which needs no dequantized copy.
func (w *linear) int8Panels(p *kernels.Impl, out, x []float32, rows int, beta float32) {
	bp := int8PanelPool.Get().(*[]float32)
	nb := min(int8PanelCols, w.n)
	panel := grow(*bp, nb*w.k)
	for j0 := 0; j0 < w.n; j0 += nb {
		jn := min(nb, w.n-j0)
		parallelFor(jn, 16, func(lo, hi int) { p.DequantizeInt8(w.i8, j0+lo, hi-lo, panel[lo*w.k:], w.k) })
		gemm(p, true, false, true, rows, jn, w.k, 1, x, w.k, panel, w.k, beta, out[j0:], w.n)
	}
	*bp = panel
	int8PanelPool.Put(bp)
}

// forward sets out [rows,n] = x [rows,k]·W + bias.
func (w *linear) forward(p *kernels.Impl, out, x []float32, rows int) {
	switch {
	case w.f32 != nil && w.nk:
		gemm(p, w.bf16Rows(rows), false, true, rows, w.n, w.k, 1, x, w.k, w.f32, w.k, 0, out, w.n)
	case w.f32 != nil:
		linearForward(p, w.bf16Rows(rows), out, x, w.f32, w.bias, rows, w.k, w.n)
	case w.bias == nil:
		w.lowGemm(p, out, x, rows, 0)
	default:
		copyBias(out, w.bias, rows)
		w.lowGemm(p, out, x, rows, 1)
	}
}

// accumulate adds x [rows,k]·W to out [rows,n] (the bias is not added).
func (w *linear) accumulate(p *kernels.Impl, out, x []float32, rows int) {
	if w.f32 != nil {
		gemm(p, w.bf16Rows(rows), false, false, rows, w.n, w.k, 1, x, w.k, w.f32, w.n, 1, out, w.n)
		return
	}
	w.lowGemm(p, out, x, rows, 1)
}

// biasGELU sets pre [rows,n] = x·W + bias and act = gelu(pre): for
// float32 weights in GemmBiasGELU's epilogue, else the product and then
// kernels.BiasGELU.
func (w *linear) biasGELU(p *kernels.Impl, pre, act, x []float32, rows int) {
	if w.f32 != nil && w.bf16Rows(rows) {
		p.GemmBiasGELUBF16Compute(false, false, rows, w.n, w.k, x, w.k, w.f32, w.n, w.bias, pre, w.n, act, w.n)
		return
	}
	if w.f32 != nil {
		p.GemmBiasGELU(false, false, rows, w.n, w.k, x, w.k, w.f32, w.n, w.bias, pre, w.n, act, w.n)
		return
	}
	w.lowGemm(p, pre, x, rows, 0)
	if rows <= rowChunk {
		// One chunk (a decoded token's row): on this goroutine, with no
		// closure to allocate.
		p.BiasGELU(rows, w.n, pre, w.n, w.bias, act, w.n)
		return
	}
	parallelFor(rows, rowChunk, func(lo, hi int) {
		p.BiasGELU(hi-lo, w.n, pre[lo*w.n:hi*w.n], w.n, w.bias, act[lo*w.n:hi*w.n], w.n)
	})
}

// copyBias writes bias into each of the rows of out [rows,len(bias)].
func copyBias(out, bias []float32, rows int) {
	if rows <= rowChunk*4 {
		// One chunk: on this goroutine, with no closure to allocate.
		copyBiasRows(out, bias, 0, rows)
		return
	}
	parallelFor(rows, rowChunk*4, func(lo, hi int) { copyBiasRows(out, bias, lo, hi) })
}

// copyBiasRows writes bias into rows [lo, hi) of out [rows,len(bias)].
func copyBiasRows(out, bias []float32, lo, hi int) {
	o := len(bias)
	for r := lo; r < hi; r++ {
		copy(out[r*o:][:o], bias)
	}
}

// blockLinears are the four projections of a block.
type blockLinears struct {
	qkv, proj, fc, out linear
}

// f32Linears returns the linears of the float32 weights w of config c.
func f32Linears(c Config, w *weights) ([]blockLinears, linear) {
	C, V := c.Width, c.Vocab
	bl := make([]blockLinears, len(w.blocks))
	for l := range w.blocks {
		b := &w.blocks[l]
		bl[l] = blockLinears{
			qkv:  linear{k: C, n: 3 * C, f32: b.wqkv, bias: b.bqkv},
			proj: linear{k: C, n: C, f32: b.wproj, bias: b.bproj},
			fc:   linear{k: C, n: 4 * C, f32: b.wfc, bias: b.bfc},
			out:  linear{k: 4 * C, n: C, f32: b.wout, bias: b.bout},
		}
	}
	head := linear{k: C, n: V, f32: w.wlm, bias: w.blm}
	if c.TieEmbeddings {
		head = linear{k: C, n: V, f32: w.wte, nk: true}
	}
	return bl, head
}

// convert returns w (float32, [k,n] or [n,k] when nk) as a linear in
// format f, with the same bias.
func (w linear) convert(f Weights) (linear, error) {
	out := linear{k: w.k, n: w.n, bias: w.bias}
	var err error
	switch {
	case f == WeightsBF16 && w.nk:
		out.bf = lowbit.BF16FromNK(w.f32, w.n, w.k)
	case f == WeightsBF16:
		out.bf = lowbit.BF16FromKN(w.f32, w.k, w.n)
	case f == WeightsInt8 && w.nk:
		out.i8, err = lowbit.Int8FromNK(w.f32, w.n, w.k)
	case f == WeightsInt8:
		out.i8, err = lowbit.Int8FromKN(w.f32, w.k, w.n)
	default:
		panic(fmt.Sprintf("gpt: linear.convert to %v", f))
	}
	return out, err
}

// InferenceBytes estimates the memory of a model of config c for
// inference with weights in format f: for WeightsF32 ModelBytes(c,
// false) (a float32 model has its gradients too); for a low-bit format
// the four projections of every block and the LM head in that format
// (a tied head a copy of wte, which the embedding still reads as
// float32) and every other parameter in float32. c must pass
// CheckLimits.
func InferenceBytes(c Config, f Weights) int64 {
	if f == WeightsF32 {
		return ModelBytes(c, false)
	}
	C, V, L := c.Width, c.Vocab, float64(c.Layers)
	matrices := 4*C*C + 4*C*C + 4*C*C // w_qkv, w_proj, w_fc, w_out
	small := float64(c.NumParams()) - L*float64(matrices)
	b := L * (f.matrixBytes(3*C, C) + f.matrixBytes(C, C) + f.matrixBytes(4*C, C) + f.matrixBytes(C, 4*C))
	if !c.TieEmbeddings {
		small -= float64(C) * float64(V)
	}
	b += f.matrixBytes(V, C)
	return saturate(4*small + b)
}

// TokenWeightBytes returns the bytes of parameters that decoding one
// token reads from a model of config c whose matrices are in format f:
// the blocks' four projections and the LM head in format f, as
// InferenceBytes counts them, and at 4 bytes each every float32 parameter
// the token reads: the biases, the LayerNorms' gains and biases, the row
// of wpe at the token's position and the row of wte of the token (the
// whole of wte when it is the float32 tied head). The key/value cache
// and the activations are not counted. For WeightsF32 it is
// 4·(NumParams − (BlockSize−1)·Width), and 4·(Vocab−1)·Width less when
// the head is untied. Divided by the time of a token, it is the rate at
// which decoding reads weights. c must pass CheckLimits.
func TokenWeightBytes(c Config, f Weights) int64 {
	C, V, T, L := float64(c.Width), float64(c.Vocab), float64(c.BlockSize), float64(c.Layers)
	w := int(C)
	mats := L*(f.matrixBytes(3*w, w)+f.matrixBytes(w, w)+f.matrixBytes(4*w, w)+f.matrixBytes(w, 4*w)) + f.matrixBytes(c.Vocab, w)
	// The float32 parameters: all but the blocks' matrices, wte and wpe
	// (and the untied w_lm), then one row each of wpe and wte.
	small := float64(c.NumParams()) - L*12*C*C - V*C - T*C + 2*C
	if !c.TieEmbeddings {
		small -= V * C
	} else if f == WeightsF32 {
		small -= C // the row of wte is in the head, counted whole
	}
	return saturate(mats + 4*small)
}

// TokenCacheBytes returns the bytes of the key/value cache that decoding
// one token reads from a model of config c when the cache holds
// positions positions, the token's own included: every layer's keys and
// values of those positions, float32 (attention.Decoder), 8·Layers·
// Width·positions bytes. Added to TokenWeightBytes it is what the token
// must read at least; at a long context the cache is a large part of it
// (GPT-2 small at 512 positions: 37.7 MB, against 139.5 MB of int8
// weights). c must pass CheckLimits; positions must be >= 0. It is
// TokenCacheBytesKV with attention.KVFloat32.
func TokenCacheBytes(c Config, positions int) int64 {
	return TokenCacheBytesKV(c, positions, attention.KVFloat32)
}

// TokenCacheBytesKV is TokenCacheBytes for a cache in format kv: with
// attention.KVBF16, 4·Layers·Width·positions bytes (18.9 MB for GPT-2
// small at 512 positions).
func TokenCacheBytesKV(c Config, positions int, kv attention.KVCache) int64 {
	per := 8.0
	if kv == attention.KVBF16 {
		per = 4
	}
	return saturate(per * float64(c.Layers) * float64(c.Width) * float64(positions))
}

// WithWeights returns a model for inference with m's parameters, its
// block's four projections (w_qkv, w_proj, w_fc, w_out) and its LM head
// converted to format f (bf16 rounded to nearest even, int8 quantized by
// groups of 32, see package lowbit); the embeddings, LayerNorms and
// biases stay float32, as do the activations and every sum. Its Sampler,
// its Forward and EvalSequential compute the same blocks as m's with the
// low-bit products (kernels.GemmBF16, kernels.GemmInt8).
//
// The new model holds no float32 copy of the converted matrices (m may be
// dropped) and no gradients: Params and Grads are nil, Backward panics,
// and NewTrainer, Save and WithBlockSize refuse it. For WeightsF32 it
// returns m itself. It errs if m is a low-bit model already, if f is not
// a format, or if int8 meets a weight that is not finite.
func (m *Model) WithWeights(f Weights) (*Model, error) {
	switch {
	case f == WeightsF32 && m.wf == WeightsF32:
		return m, nil
	case m.wf != WeightsF32:
		return nil, fmt.Errorf("gpt: WithWeights(%v): the model's weights are %v already", f, m.wf)
	case f != WeightsBF16 && f != WeightsInt8:
		return nil, fmt.Errorf("gpt: WithWeights(%v): not a weights format", f)
	}
	if err := CheckMemory("the "+f.String()+" model", InferenceBytes(m.Config, f)); err != nil {
		return nil, err
	}
	// The float32 parameters that stay are copied, so that m's buffer is
	// not kept alive; the matrices are converted from m's.
	src := map[string]linear{}
	m.Config.eachTensor(&m.p, func(name string, shape []int, _ initKind, field *[]float32) {
		if len(shape) == 2 {
			src[name] = linear{k: shape[0], n: shape[1], f32: *field}
		} else {
			src[name] = linear{f32: *field}
		}
	})
	n, err := newInference(m.Config, f, m.k,
		func(name string, dst []float32) error {
			copy(dst, src[name].f32)
			return nil
		},
		func(name string, _, _ int) (linear, error) { return src[name].convert(f) }, nil)
	if err != nil {
		return nil, fmt.Errorf("gpt: WithWeights(%v): %v", f, err)
	}
	n.SetPrecision(m.prec)
	n.kv = m.kv
	return n, nil
}

// lowMatrices are the names, within a block, of the matrices a low-bit
// model holds in its format; lowHead is the untied LM head's.
var lowMatrices = map[string]bool{"attn.w_qkv": true, "attn.w_proj": true, "mlp.w_fc": true, "mlp.w_out": true}

const lowHead = "w_lm"

// isLowMatrix reports whether the tensor named name (as Config.Tensors
// names it) is one a low-bit model holds in its format, not in float32.
func isLowMatrix(name string) bool {
	if name == lowHead {
		return true
	}
	if rest, ok := strings.CutPrefix(name, "h."); ok {
		if _, sub, ok := strings.Cut(rest, "."); ok {
			return lowMatrices[sub]
		}
	}
	return false
}

// newInference returns a model of config cfg (which must pass
// CheckLimits) for inference with its matrices in the low-bit format f,
// computing with impl: each float32 tensor (embeddings, LayerNorms,
// biases) allocated on its own and filled by small(name, dst), each of
// the blocks' four projections and the untied LM head made by
// matrix(name, k, n) (a linear in format f of k inputs and n outputs,
// its bias set here), one at a time in layout order, and a tied head
// converted from wte. Names are Config.Tensors'. Its errors are small's
// and matrix's, the latter after the block ("block 2: ...") or "LM head: ".
// A non-nil tiedHead makes the tied head (k inputs, n outputs) instead of
// converting wte (a checkpoint that holds it in format f already).
func newInference(cfg Config, f Weights, impl *kernels.Impl, small func(name string, dst []float32) error, matrix func(name string, k, n int) (linear, error), tiedHead func(k, n int) (linear, error)) (*Model, error) {
	n := &Model{Config: cfg, k: impl, wf: f}
	n.run.m = n
	n.p = weights{blocks: make([]blockWeights, cfg.Layers)}
	var err error
	cfg.eachTensor(&n.p, func(name string, shape []int, _ initKind, field *[]float32) {
		if err == nil && !isLowMatrix(name) {
			*field = make([]float32, Tensor{Shape: shape}.Size())
			hugepage.Advise(*field)
			err = small(name, *field)
		}
	})
	if err != nil {
		return nil, err
	}
	// f32Linears gives the shapes and the biases (n.p's); the matrices
	// are not there.
	nb, head := f32Linears(cfg, &n.p)
	n.lin = make([]blockLinears, cfg.Layers)
	for l := range nb {
		prefix := "h." + strconv.Itoa(l) + "."
		for _, x := range []struct {
			name string
			src  linear
			dst  *linear
		}{
			{"attn.w_qkv", nb[l].qkv, &n.lin[l].qkv}, {"attn.w_proj", nb[l].proj, &n.lin[l].proj},
			{"mlp.w_fc", nb[l].fc, &n.lin[l].fc}, {"mlp.w_out", nb[l].out, &n.lin[l].out},
		} {
			if *x.dst, err = matrix(prefix+x.name, x.src.k, x.src.n); err != nil {
				return nil, fmt.Errorf("block %d: %v", l, err)
			}
			x.dst.bias = x.src.bias
		}
	}
	switch {
	case cfg.TieEmbeddings && tiedHead != nil:
		n.head, err = tiedHead(head.k, head.n)
	case cfg.TieEmbeddings:
		n.head, err = head.convert(f)
	default:
		n.head, err = matrix(lowHead, head.k, head.n)
	}
	if err != nil {
		return nil, fmt.Errorf("LM head: %v", err)
	}
	n.head.bias = head.bias
	r, err := n.newReplica(nil)
	if err != nil {
		return nil, err
	}
	n.reps = []*replica{r}
	return n, nil
}

// Weights returns the format of the model's matrices: WeightsF32 unless
// the model was made by WithWeights.
func (m *Model) Weights() Weights { return m.wf }

// inferenceOnly returns an error naming what (the operation) if m is a
// low-bit model, which has no float32 parameters to train or save.
func (m *Model) inferenceOnly(what string) error {
	if m.wf == WeightsF32 {
		return nil
	}
	return fmt.Errorf("gpt: %s: the model's weights are %v, for inference only", what, m.wf)
}
