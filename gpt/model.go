package gpt

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/simdgpt/simdgpt/attention"
	"github.com/simdgpt/simdgpt/gpt/rng"
	"github.com/simdgpt/simdgpt/kernels"
)

// Config is the shape of a model.
type Config struct {
	Vocab     int // tokens in the vocabulary
	BlockSize int // longest context (rows of the position embedding)
	Layers    int // transformer blocks
	Heads     int // attention heads per block; 0 means 1 (single-head path)
	Width     int // model width C (a multiple of Heads)
}

// heads returns Heads with its default of 1.
func (c Config) heads() int { return max(c.Heads, 1) }

// Validate reports the first impossible field.
func (c Config) Validate() error {
	switch {
	case c.Vocab < 1:
		return fmt.Errorf("gpt: Config.Vocab = %d, must be at least 1", c.Vocab)
	case c.BlockSize < 1:
		return fmt.Errorf("gpt: Config.BlockSize = %d, must be at least 1", c.BlockSize)
	case c.Layers < 1:
		return fmt.Errorf("gpt: Config.Layers = %d, must be at least 1", c.Layers)
	case c.Heads < 0:
		return fmt.Errorf("gpt: Config.Heads = %d, must be at least 1 (0 means 1)", c.Heads)
	case c.Width < 1:
		return fmt.Errorf("gpt: Config.Width = %d, must be at least 1", c.Width)
	case c.Width%c.heads() != 0:
		return fmt.Errorf("gpt: Config.Width = %d is not a multiple of Heads = %d", c.Width, c.heads())
	}
	return nil
}

// Tensor is one named parameter tensor: Params[Offset : Offset+Size()].
type Tensor struct {
	Name   string
	Shape  []int
	Offset int
}

// Size is the number of elements of t.
func (t Tensor) Size() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Tensors lists the model's parameter tensors in their order in the flat
// parameter vector: wte [V,C], wpe [T,C]; per block h.i: ln1.w, ln1.b,
// attn.w_qkv [C,3C], attn.b_qkv, attn.w_proj [C,C], attn.b_proj, ln2.w,
// ln2.b, mlp.w_fc [C,4C], mlp.b_fc, mlp.w_out [4C,C], mlp.b_out; then
// ln_f.w, ln_f.b, w_lm [C,V], b_lm [V].
func (c Config) Tensors() []Tensor {
	C, V, T := c.Width, c.Vocab, c.BlockSize
	var ts []Tensor
	off := 0
	add := func(name string, shape ...int) {
		t := Tensor{Name: name, Shape: shape, Offset: off}
		off += t.Size()
		ts = append(ts, t)
	}
	add("wte", V, C)
	add("wpe", T, C)
	for l := 0; l < c.Layers; l++ {
		p := fmt.Sprintf("h.%d.", l)
		add(p+"ln1.w", C)
		add(p+"ln1.b", C)
		// The order of attention.ViewParams.
		add(p+"attn.w_qkv", C, 3*C)
		add(p+"attn.b_qkv", 3*C)
		add(p+"attn.w_proj", C, C)
		add(p+"attn.b_proj", C)
		add(p+"ln2.w", C)
		add(p+"ln2.b", C)
		add(p+"mlp.w_fc", C, 4*C)
		add(p+"mlp.b_fc", 4*C)
		add(p+"mlp.w_out", 4*C, C)
		add(p+"mlp.b_out", C)
	}
	add("ln_f.w", C)
	add("ln_f.b", C)
	add("w_lm", C, V)
	add("b_lm", V)
	return ts
}

// NumParams is the length of the flat parameter vector.
func (c Config) NumParams() int {
	ts := c.Tensors()
	last := ts[len(ts)-1]
	return last.Offset + last.Size()
}

// weights are views into a flat vector laid out as Config.Tensors (used for
// both parameters and gradients).
type weights struct {
	wte, wpe   []float32
	blocks     []blockWeights
	lnfW, lnfB []float32
	wlm, blm   []float32
}

type blockWeights struct {
	ln1W, ln1B []float32
	attn       attention.Params
	ln2W, ln2B []float32
	wfc, bfc   []float32
	wout, bout []float32
}

func (c Config) view(buf []float32) weights {
	ts := c.Tensors()
	get := func(i int) []float32 { t := ts[i]; return buf[t.Offset : t.Offset+t.Size() : t.Offset+t.Size()] }
	w := weights{wte: get(0), wpe: get(1), blocks: make([]blockWeights, c.Layers)}
	i := 2
	for l := range w.blocks {
		b := &w.blocks[l]
		b.ln1W, b.ln1B = get(i), get(i+1)
		first := ts[i+2].Offset
		b.attn = attention.ViewParams(c.Width, buf[first:first+attention.NumParams(c.Width)])
		b.ln2W, b.ln2B = get(i+6), get(i+7)
		b.wfc, b.bfc, b.wout, b.bout = get(i+8), get(i+9), get(i+10), get(i+11)
		i += 12
	}
	w.lnfW, w.lnfB, w.wlm, w.blm = get(i), get(i+1), get(i+2), get(i+3)
	return w
}

// Model is a TinyGPT: its parameters and gradients (flat, laid out as
// Config.Tensors), and one or more replicas of everything a pass writes
// (attention layers, activations, gradients). A Forward with targets over
// several sequences splits the batch over up to GOMAXPROCS replicas that
// run at once (data parallel: whole GEMMs per goroutine scale better than
// one small GEMM split in two) and Backward adds their gradients in replica
// order, so results are deterministic for a given GOMAXPROCS. A Model is
// not safe for concurrent use.
type Model struct {
	Config Config
	Params []float32
	Grads  []float32

	p    weights
	reps []*replica // reps[0] always exists; its grads are Grads
	used int        // replicas used by the last Forward
	n    int        // rows of the last Forward
	hasT bool       // the last Forward had targets
}

// replica is one copy of what a forward and backward pass writes.
type replica struct {
	attn  []*attention.Layer
	acts  activations
	grads []float32
	g     weights
	loss  float64 // sum of -log p over its rows
}

// activations of one Forward over n = b·t rows.
type activations struct {
	b, t, n int
	tokens  []int32
	targets []int32
	res     [][]float32 // res[l]: input of block l [n,C]; res[L]: output of the last
	blocks  []blockActs
	lnf     []float32 // [n,C]
	lnfMean []float32
	lnfRstd []float32
	logits  []float32 // [n,V]; probabilities after a Forward with targets
	// backward scratch
	dres, dln []float32 // [n,C]
	dfc       []float32 // [n,4C]
}

type blockActs struct {
	ln1, ln1Mean, ln1Rstd []float32
	attnOut               []float32
	mid                   []float32 // res + attention
	ln2, ln2Mean, ln2Rstd []float32
	fcPre, fcTanh, fcAct  []float32 // [n,4C]
}

// New returns a model of config cfg with parameters initialised from seed:
// matrices and embeddings normal with standard deviation 0.02 (the output
// projections of attention and MLP scaled by 1/√(2·Layers)), biases 0,
// LayerNorm gains 1.
func New(cfg Config, seed uint64) (*Model, error) {
	m, err := newModel(cfg)
	if err != nil {
		return nil, err
	}
	r := rng.New(seed)
	proj := 0.02 / math.Sqrt(2*float64(cfg.Layers))
	for _, t := range cfg.Tensors() {
		v := m.Params[t.Offset : t.Offset+t.Size()]
		std := 0.02
		switch {
		case len(t.Shape) == 1 && hasSuffix(t.Name, ".w"):
			for i := range v {
				v[i] = 1
			}
			continue
		case len(t.Shape) == 1:
			continue
		case hasSuffix(t.Name, "w_proj") || hasSuffix(t.Name, "w_out"):
			std = proj
		}
		for i := range v {
			v[i] = float32(r.Normal() * std)
		}
	}
	return m, nil
}

func hasSuffix(s, suf string) bool { return len(s) >= len(suf) && s[len(s)-len(suf):] == suf }

// newModel allocates a model with zero parameters.
func newModel(cfg Config) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Heads == 0 {
		cfg.Heads = 1
	}
	n := cfg.NumParams()
	m := &Model{Config: cfg, Params: make([]float32, n), Grads: make([]float32, n)}
	m.p = cfg.view(m.Params)
	r, err := m.newReplica(m.Grads)
	if err != nil {
		return nil, err
	}
	m.reps = []*replica{r}
	return m, nil
}

// newReplica returns a replica writing its gradients into grads.
func (m *Model) newReplica(grads []float32) (*replica, error) {
	cfg := m.Config
	r := &replica{grads: grads, g: cfg.view(grads)}
	for l := 0; l < cfg.Layers; l++ {
		var a *attention.Layer
		if cfg.Heads == 1 {
			a = attention.NewSingleHead(cfg.Width)
		} else {
			var err error
			if a, err = attention.NewMultiHead(cfg.Width, cfg.Heads); err != nil {
				return nil, err
			}
		}
		r.attn = append(r.attn, a)
	}
	return r, nil
}

// DecayMask tells, per parameter, whether AdamW decays it: the matrices and
// embeddings yes, biases and LayerNorm parameters no.
func (c Config) DecayMask() []bool {
	mask := make([]bool, c.NumParams())
	for _, t := range c.Tensors() {
		if len(t.Shape) == 2 {
			for i := t.Offset; i < t.Offset+t.Size(); i++ {
				mask[i] = true
			}
		}
	}
	return mask
}

// AttentionLayers returns the model's attention layers (for their Probs
// after a Forward without targets, which runs on these layers alone).
func (m *Model) AttentionLayers() []*attention.Layer { return m.reps[0].attn }

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// ensure sizes the activations of r for b sequences of t tokens
// (allocating only when they grow).
func (m *Model) ensure(r *replica, b, t int) {
	a := &r.acts
	C, V, L := m.Config.Width, m.Config.Vocab, m.Config.Layers
	n := b * t
	a.b, a.t, a.n = b, t, n
	if len(a.res) != L+1 {
		a.res = make([][]float32, L+1)
		a.blocks = make([]blockActs, L)
	}
	for l := range a.res {
		a.res[l] = grow(a.res[l], n*C)
	}
	for l := range a.blocks {
		k := &a.blocks[l]
		k.ln1, k.ln1Mean, k.ln1Rstd = grow(k.ln1, n*C), grow(k.ln1Mean, n), grow(k.ln1Rstd, n)
		k.attnOut, k.mid = grow(k.attnOut, n*C), grow(k.mid, n*C)
		k.ln2, k.ln2Mean, k.ln2Rstd = grow(k.ln2, n*C), grow(k.ln2Mean, n), grow(k.ln2Rstd, n)
		k.fcPre, k.fcTanh, k.fcAct = grow(k.fcPre, 4*n*C), grow(k.fcTanh, 4*n*C), grow(k.fcAct, 4*n*C)
	}
	a.lnf, a.lnfMean, a.lnfRstd = grow(a.lnf, n*C), grow(a.lnfMean, n), grow(a.lnfRstd, n)
	a.logits = grow(a.logits, n*V)
	a.dres, a.dln, a.dfc = grow(a.dres, n*C), grow(a.dln, n*C), grow(a.dfc, 4*n*C)
}

// Forward runs the model over tokens, b sequences of t tokens ([b·t]), and
// returns the mean cross-entropy loss against targets (the next tokens,
// [b·t]); with nil targets it returns 0 and Logits holds the logits. It keeps
// the activations for Backward. It panics on a shape or token id outside
// the config.
func (m *Model) Forward(tokens, targets []int32, b, t int) float64 {
	cfg := m.Config
	V := cfg.Vocab
	if b < 1 || t < 1 || t > cfg.BlockSize {
		panic(fmt.Sprintf("gpt.Model.Forward: b=%d t=%d, need b >= 1 and 1 <= t <= BlockSize=%d", b, t, cfg.BlockSize))
	}
	n := b * t
	if len(tokens) != n || (targets != nil && len(targets) != n) {
		panic(fmt.Sprintf("gpt.Model.Forward: len(tokens)=%d len(targets)=%d, want b*t=%d", len(tokens), len(targets), n))
	}
	for i, tok := range tokens {
		if tok < 0 || int(tok) >= V {
			panic(fmt.Sprintf("gpt.Model.Forward: token %d at %d is outside the vocabulary of %d", tok, i, V))
		}
	}
	k := 1
	if targets != nil {
		k = min(runtime.GOMAXPROCS(0), b)
	}
	for len(m.reps) < k {
		r, err := m.newReplica(make([]float32, len(m.Params)))
		if err != nil {
			panic(err) // the config was validated when the model was made
		}
		m.reps = append(m.reps, r)
	}
	m.used, m.n, m.hasT = k, n, targets != nil
	if k == 1 {
		m.forward(m.reps[0], tokens, targets, b, t)
	} else {
		replicasRunning.Add(1)
		defer replicasRunning.Add(-1)
		var wg sync.WaitGroup
		lo := 0
		for i := 0; i < k; i++ {
			bi := b / k
			if i < b%k {
				bi++
			}
			r, s, e := m.reps[i], lo*t, (lo+bi)*t
			lo += bi
			wg.Add(1)
			go func() {
				defer wg.Done()
				m.forward(r, tokens[s:e], targets[s:e], bi, t)
			}()
		}
		wg.Wait()
	}
	if targets == nil {
		return 0
	}
	var loss float64
	for _, r := range m.reps[:k] {
		loss += r.loss
	}
	return loss / float64(n)
}

// forward runs replica r over b sequences of t tokens.
func (m *Model) forward(r *replica, tokens, targets []int32, b, t int) {
	cfg := m.Config
	C, V := cfg.Width, cfg.Vocab
	n := b * t
	m.ensure(r, b, t)
	a := &r.acts
	a.tokens, a.targets = tokens, targets
	embedForward(a.res[0], m.p.wte, m.p.wpe, tokens, n, t, C)
	for l := range m.p.blocks {
		w, k, x := &m.p.blocks[l], &a.blocks[l], a.res[l]
		layerNormForward(k.ln1, k.ln1Mean, k.ln1Rstd, x, w.ln1W, w.ln1B, n, C)
		r.attn[l].Forward(k.attnOut, k.ln1, b, t, w.attn)
		addInto(k.mid, x, k.attnOut)
		layerNormForward(k.ln2, k.ln2Mean, k.ln2Rstd, k.mid, w.ln2W, w.ln2B, n, C)
		kernels.Gemm(false, false, n, 4*C, C, 1, k.ln2, C, w.wfc, 4*C, 0, k.fcPre, 4*C)
		biasGeluForward(k.fcAct, k.fcTanh, k.fcPre, w.bfc, n, 4*C)
		// res[l+1] = mid + fcAct·w_out + b_out
		out := a.res[l+1]
		parallelFor(n, rowChunk, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				o, mi := out[i*C:][:C], k.mid[i*C:][:C]
				for j := range o {
					o[j] = mi[j] + w.bout[j]
				}
			}
		})
		kernels.Gemm(false, false, n, C, 4*C, 1, k.fcAct, 4*C, w.wout, C, 1, out, C)
	}
	layerNormForward(a.lnf, a.lnfMean, a.lnfRstd, a.res[cfg.Layers], m.p.lnfW, m.p.lnfB, n, C)
	linearForward(a.logits, a.lnf, m.p.wlm, m.p.blm, n, C, V)
	if targets != nil {
		r.loss = crossEntropy(a.logits, targets, n, V)
	}
}

// addInto sets dst = x + y, rows in parallel.
func addInto(dst, x, y []float32) {
	parallelFor(len(dst), 4096, func(lo, hi int) {
		d, xs, ys := dst[lo:hi], x[lo:hi], y[lo:hi]
		for i := range d {
			d[i] = xs[i] + ys[i]
		}
	})
}

// Logits returns the [b·t, Vocab] logits of the last Forward without
// targets (after a Forward with targets they are probabilities, and only
// those of the first replica's sequences).
func (m *Model) Logits() []float32 { a := &m.reps[0].acts; return a.logits[:a.n*m.Config.Vocab] }

// Backward computes the gradient of the last Forward's loss (which must
// have had targets) into Grads, overwriting them.
func (m *Model) Backward() {
	if !m.hasT {
		panic("gpt.Model.Backward: the last Forward had no targets")
	}
	k := m.used
	if k == 1 {
		m.backward(m.reps[0])
		return
	}
	var wg sync.WaitGroup
	replicasRunning.Add(1)
	for _, r := range m.reps[:k] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.backward(r)
		}()
	}
	wg.Wait()
	replicasRunning.Add(-1)
	// Grads (replica 0's) += the others', in replica order.
	parallelFor(len(m.Grads), 1<<14, func(lo, hi int) {
		g := m.Grads[lo:hi]
		for _, r := range m.reps[1:k] {
			kernels.Add(g, g, r.grads[lo:hi])
		}
	})
}

// backward computes replica r's share of the gradient of the mean loss
// over all m.n rows into r.grads.
func (m *Model) backward(r *replica) {
	a := &r.acts
	cfg := m.Config
	C, V, n := cfg.Width, cfg.Vocab, a.n
	g := &r.g
	clear(r.grads)
	crossEntropyBackward(a.logits, a.logits, a.targets, n, V, m.n)
	linearBackward(a.dln, g.wlm, g.blm, a.logits, a.lnf, m.p.wlm, n, C, V)
	clear(a.dres)
	layerNormBackward(a.dres, g.lnfW, g.lnfB, a.dln, a.res[cfg.Layers], a.lnfMean, a.lnfRstd, m.p.lnfW, n, C)
	for l := cfg.Layers - 1; l >= 0; l-- {
		w, gb, k := &m.p.blocks[l], &g.blocks[l], &a.blocks[l]
		// MLP: dres is d(res[l+1]) and also d(mid) through the residual.
		linearBackward(a.dfc, gb.wout, gb.bout, a.dres, k.fcAct, w.wout, n, 4*C, C)
		geluBackward(a.dfc, a.dfc, k.fcPre, k.fcTanh, n*4*C)
		linearBackward(a.dln, gb.wfc, gb.bfc, a.dfc, k.ln2, w.wfc, n, C, 4*C)
		layerNormBackward(a.dres, gb.ln2W, gb.ln2B, a.dln, k.mid, k.ln2Mean, k.ln2Rstd, w.ln2W, n, C)
		// Attention: dres is now d(mid), which is also d(res[l]) through
		// the residual.
		r.attn[l].Backward(a.dln, a.dres, w.attn, gb.attn)
		layerNormBackward(a.dres, gb.ln1W, gb.ln1B, a.dln, a.res[l], k.ln1Mean, k.ln1Rstd, w.ln1W, n, C)
	}
	embedBackward(g.wte, g.wpe, a.dres, a.tokens, n, a.t, C)
}
