package gpt

import (
	"fmt"

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
}

// lowGemm sets out [rows,n] = x [rows,k]·W + beta·out for a low-bit W.
func (w *linear) lowGemm(p *kernels.Impl, out, x []float32, rows int, beta float32) {
	if w.bf != nil {
		p.GemmBF16(rows, 1, x, w.k, w.bf, beta, out, w.n)
		return
	}
	p.GemmInt8(rows, 1, x, w.k, w.i8, beta, out, w.n)
}

// forward sets out [rows,n] = x [rows,k]·W + bias.
func (w *linear) forward(p *kernels.Impl, out, x []float32, rows int) {
	switch {
	case w.f32 != nil && w.nk:
		p.Gemm(false, true, rows, w.n, w.k, 1, x, w.k, w.f32, w.k, 0, out, w.n)
	case w.f32 != nil:
		linearForward(p, out, x, w.f32, w.bias, rows, w.k, w.n)
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
		p.Gemm(false, false, rows, w.n, w.k, 1, x, w.k, w.f32, w.n, 1, out, w.n)
		return
	}
	w.lowGemm(p, out, x, rows, 1)
}

// biasGELU sets pre [rows,n] = x·W + bias and act = gelu(pre): for
// float32 weights in GemmBiasGELU's epilogue, else the product and then
// kernels.BiasGELU.
func (w *linear) biasGELU(p *kernels.Impl, pre, act, x []float32, rows int) {
	if w.f32 != nil {
		p.GemmBiasGELU(false, false, rows, w.n, w.k, x, w.k, w.f32, w.n, w.bias, pre, w.n, act, w.n)
		return
	}
	w.lowGemm(p, pre, x, rows, 0)
	parallelFor(rows, rowChunk, func(lo, hi int) {
		p.BiasGELU(hi-lo, w.n, pre[lo*w.n:hi*w.n], w.n, w.bias, act[lo*w.n:hi*w.n], w.n)
	})
}

// copyBias writes bias into each of the rows of out [rows,len(bias)].
func copyBias(out, bias []float32, rows int) {
	o := len(bias)
	parallelFor(rows, rowChunk*4, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			copy(out[r*o:][:o], bias)
		}
	})
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
			qkv:  linear{k: C, n: 3 * C, f32: b.attn.WQKV, bias: b.attn.BQKV},
			proj: linear{k: C, n: C, f32: b.attn.WProj, bias: b.attn.BProj},
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

// WithWeights returns a model for inference with m's parameters, its
// block's four projections (w_qkv, w_proj, w_fc, w_out) and its LM head
// converted to format f (bf16 rounded to nearest even, int8 quantized by
// groups of 32, see package lowbit); the embeddings, LayerNorms and
// biases stay float32, as do the activations and every sum. Its Sampler
// and its Forward (and so EvalSequential) compute the same blocks as m's
// with the low-bit products (kernels.GemmBF16, kernels.GemmInt8).
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
	cfg := m.Config
	if err := CheckMemory("the "+f.String()+" model", InferenceBytes(cfg, f)); err != nil {
		return nil, err
	}
	n := &Model{Config: cfg, k: m.k, wf: f}
	n.run.m = n
	// The float32 parameters that stay: copies, so that m's buffer is
	// not kept alive.
	n.p = weights{blocks: make([]blockWeights, cfg.Layers)}
	n.p.wte = append([]float32(nil), m.p.wte...)
	n.p.wpe = append([]float32(nil), m.p.wpe...)
	n.p.lnfW = append([]float32(nil), m.p.lnfW...)
	n.p.lnfB = append([]float32(nil), m.p.lnfB...)
	if m.p.blm != nil {
		n.p.blm = append([]float32(nil), m.p.blm...)
	}
	for l := range m.p.blocks {
		s, d := &m.p.blocks[l], &n.p.blocks[l]
		d.ln1W, d.ln1B = append([]float32(nil), s.ln1W...), append([]float32(nil), s.ln1B...)
		d.ln2W, d.ln2B = append([]float32(nil), s.ln2W...), append([]float32(nil), s.ln2B...)
		d.attn.BQKV, d.attn.BProj = append([]float32(nil), s.attn.BQKV...), append([]float32(nil), s.attn.BProj...)
		d.bfc, d.bout = append([]float32(nil), s.bfc...), append([]float32(nil), s.bout...)
	}
	// The new model's linears take its own biases.
	nb, _ := f32Linears(cfg, &n.p)
	n.lin = make([]blockLinears, cfg.Layers)
	var err error
	for l := range m.lin {
		s, d := &m.lin[l], &n.lin[l]
		for _, x := range []struct {
			src linear
			dst *linear
			b   []float32
		}{
			{s.qkv, &d.qkv, nb[l].qkv.bias}, {s.proj, &d.proj, nb[l].proj.bias},
			{s.fc, &d.fc, nb[l].fc.bias}, {s.out, &d.out, nb[l].out.bias},
		} {
			if *x.dst, err = x.src.convert(f); err != nil {
				return nil, fmt.Errorf("gpt: WithWeights(%v): block %d: %v", f, l, err)
			}
			x.dst.bias = x.b
		}
	}
	if n.head, err = m.head.convert(f); err != nil {
		return nil, fmt.Errorf("gpt: WithWeights(%v): LM head: %v", f, err)
	}
	n.head.bias = n.p.blm
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
