package gpt

import (
	"fmt"
	"github.com/simdgpt/simdgpt/internal/hugepage"
	"math"
	"strconv"

	"github.com/simdgpt/simdgpt/attention"
	"github.com/simdgpt/simdgpt/gpt/rng"
	"github.com/simdgpt/simdgpt/internal/parallel"
	"github.com/simdgpt/simdgpt/kernels"
)

// Config is the shape of a model.
type Config struct {
	Vocab     int // tokens in the vocabulary
	BlockSize int // longest context (rows of the position embedding)
	Layers    int // transformer blocks
	Heads     int // attention heads per block; 0 means 1 (single-head path)
	Width     int // model width C (a multiple of Heads)
	// TieEmbeddings makes the LM head the transposed token embedding
	// (logits = ln_f(x)·wteᵀ, no bias: GPT-2's layout) instead of its own
	// w_lm and b_lm; the head's gradient then flows into wte.
	TieEmbeddings bool
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
// ln_f.w, ln_f.b, w_lm [C,V], b_lm [V] (these last two only when the
// embeddings are not tied).
func (c Config) Tensors() []Tensor {
	var ts []Tensor
	off := 0
	c.eachTensor(nil, func(name string, shape []int, _ initKind, _ *[]float32) {
		t := Tensor{Name: name, Shape: shape, Offset: off}
		off += t.Size()
		ts = append(ts, t)
	})
	return ts
}

// NumParams is the length of the flat parameter vector.
func (c Config) NumParams() int {
	n := 0
	c.eachTensor(nil, func(_ string, shape []int, _ initKind, _ *[]float32) {
		n += Tensor{Shape: shape}.Size()
	})
	return n
}

// weights are views into a flat vector laid out as Config.Tensors (used for
// both parameters and gradients).
type weights struct {
	wte, wpe   []float32
	blocks     []blockWeights
	lnfW, lnfB []float32
	wlm, blm   []float32 // nil when the embeddings are tied
}

type blockWeights struct {
	ln1W, ln1B   []float32
	wqkv, bqkv   []float32 // attention's query/key/value projection
	wproj, bproj []float32 // attention's output projection
	ln2W, ln2B   []float32
	wfc, bfc     []float32
	wout, bout   []float32
}

// dim is one dimension of a parameter tensor in terms of the config: mul
// times the width C, the vocabulary V or the block size T.
type dim struct {
	of  byte // 'C', 'V' or 'T'
	mul int
}

var (
	dimC  = dim{'C', 1}
	dim3C = dim{'C', 3}
	dim4C = dim{'C', 4}
	dimV  = dim{'V', 1}
	dimT  = dim{'T', 1}
)

func (d dim) size(c Config) int {
	switch d.of {
	case 'V':
		return d.mul * c.Vocab
	case 'T':
		return d.mul * c.BlockSize
	}
	return d.mul * c.Width
}

// initKind is how New initialises a tensor.
type initKind uint8

const (
	initNormal initKind = iota // normal, standard deviation 0.02
	initProj                   // normal, 0.02/√(2·Layers): projections back into the residual stream
	initOnes                   // LayerNorm gains
	initZeros                  // biases
)

// tensorSpec is one row of the parameter layout: a tensor's name (within
// its block for a block's tensors), its shape, how New initialises it and
// the field of W (weights or blockWeights) that views it.
type tensorSpec[W any] struct {
	name  string
	shape []dim
	init  initKind
	field func(*W) *[]float32
}

// The parameter layout, written once: Tensors (and so NumParams,
// DecaySpans and checkpoints), view (the named views of the parameters and
// of every replica's gradients) and New's initialisation are all derived
// from these four tables by eachTensor. Checkpoints store the tensors by
// these names in this order: neither may change.
var (
	// embedTensors come first,
	embedTensors = []tensorSpec[weights]{
		{"wte", []dim{dimV, dimC}, initNormal, func(w *weights) *[]float32 { return &w.wte }},
		{"wpe", []dim{dimT, dimC}, initNormal, func(w *weights) *[]float32 { return &w.wpe }},
	}
	// then blockTensors for each block l, named "h.<l>." + name,
	blockTensors = []tensorSpec[blockWeights]{
		{"ln1.w", []dim{dimC}, initOnes, func(b *blockWeights) *[]float32 { return &b.ln1W }},
		{"ln1.b", []dim{dimC}, initZeros, func(b *blockWeights) *[]float32 { return &b.ln1B }},
		{"attn.w_qkv", []dim{dimC, dim3C}, initNormal, func(b *blockWeights) *[]float32 { return &b.wqkv }},
		{"attn.b_qkv", []dim{dim3C}, initZeros, func(b *blockWeights) *[]float32 { return &b.bqkv }},
		{"attn.w_proj", []dim{dimC, dimC}, initProj, func(b *blockWeights) *[]float32 { return &b.wproj }},
		{"attn.b_proj", []dim{dimC}, initZeros, func(b *blockWeights) *[]float32 { return &b.bproj }},
		{"ln2.w", []dim{dimC}, initOnes, func(b *blockWeights) *[]float32 { return &b.ln2W }},
		{"ln2.b", []dim{dimC}, initZeros, func(b *blockWeights) *[]float32 { return &b.ln2B }},
		{"mlp.w_fc", []dim{dimC, dim4C}, initNormal, func(b *blockWeights) *[]float32 { return &b.wfc }},
		{"mlp.b_fc", []dim{dim4C}, initZeros, func(b *blockWeights) *[]float32 { return &b.bfc }},
		{"mlp.w_out", []dim{dim4C, dimC}, initProj, func(b *blockWeights) *[]float32 { return &b.wout }},
		{"mlp.b_out", []dim{dimC}, initZeros, func(b *blockWeights) *[]float32 { return &b.bout }},
	}
	// then headTensors,
	headTensors = []tensorSpec[weights]{
		{"ln_f.w", []dim{dimC}, initOnes, func(w *weights) *[]float32 { return &w.lnfW }},
		{"ln_f.b", []dim{dimC}, initZeros, func(w *weights) *[]float32 { return &w.lnfB }},
	}
	// and lmTensors last, only when the embeddings are not tied (a tied
	// head is wteᵀ).
	lmTensors = []tensorSpec[weights]{
		{"w_lm", []dim{dimC, dimV}, initNormal, func(w *weights) *[]float32 { return &w.wlm }},
		{"b_lm", []dim{dimV}, initZeros, func(w *weights) *[]float32 { return &w.blm }},
	}
)

// eachTensor calls f with every parameter tensor of c in layout order: its
// name, its shape, how New initialises it and the field of w that views it
// (nil when w is nil; otherwise w.blocks must have c.Layers entries); the
// LM head's own tensors (lmTensors) are left out when c.TieEmbeddings.
func (c Config) eachTensor(w *weights, f func(name string, shape []int, init initKind, field *[]float32)) {
	shape := func(ds []dim) []int {
		s := make([]int, len(ds))
		for i, d := range ds {
			s[i] = d.size(c)
		}
		return s
	}
	outer := func(specs []tensorSpec[weights]) {
		for _, s := range specs {
			var fld *[]float32
			if w != nil {
				fld = s.field(w)
			}
			f(s.name, shape(s.shape), s.init, fld)
		}
	}
	outer(embedTensors)
	for l := 0; l < c.Layers; l++ {
		prefix := "h." + strconv.Itoa(l) + "."
		for _, s := range blockTensors {
			var fld *[]float32
			if w != nil {
				fld = s.field(&w.blocks[l])
			}
			f(prefix+s.name, shape(s.shape), s.init, fld)
		}
	}
	outer(headTensors)
	if !c.TieEmbeddings {
		outer(lmTensors)
	}
}

// view returns the named views of buf, a flat vector of c.NumParams()
// values laid out as c.Tensors(); each view's capacity is its length.
func (c Config) view(buf []float32) weights {
	w := weights{blocks: make([]blockWeights, c.Layers)}
	off := 0
	c.eachTensor(&w, func(_ string, shape []int, _ initKind, field *[]float32) {
		n := Tensor{Shape: shape}.Size()
		*field = buf[off : off+n : off+n]
		off += n
	})
	return w
}

// Model is a TinyGPT: its parameters and gradients (flat, laid out as
// Config.Tensors), and one or more replicas of everything a pass writes
// (attention layers, activations, gradients). A Forward with targets over
// several sequences splits the batch over up to GOMAXPROCS replicas that
// run at once on the module's parallel runtime (data parallel: whole GEMMs
// per goroutine scale better than one small GEMM split in two) and
// Backward adds their gradients in replica order, so results are
// deterministic for a given GOMAXPROCS. A Model computes with one kernel
// implementation (WithImpl). A Model is not safe for concurrent use.
type Model struct {
	Config Config
	Params []float32
	Grads  []float32

	k *kernels.Impl
	p weights
	// The matrices the forward pass multiplies by, in format wf: views
	// of p's (float32), or converted copies (WithWeights).
	wf   Weights
	lin  []blockLinears
	head linear
	reps []*replica // reps[0] always exists; its grads are Grads
	used int        // replicas used by the last Forward
	n    int        // rows of the last Forward
	hasT bool       // the last Forward had targets
	run  replicaTask
	infs []*inference      // the inference forward's workspaces, one per part (inferLoss)
	prec Precision         // the arithmetic of the matrix products (SetPrecision)
	kv   attention.KVCache // the format of new samplers' key/value caches (SetKVCache)
}

// replica is one copy of what a forward and backward pass writes.
type replica struct {
	attn  []*attention.Layer
	acts  activations
	grads []float32
	g     weights
	// accum are the tensors of g that backward accumulates into, zeroed
	// first; the others (wholeGrads) it writes whole.
	accum [][]float32
	loss  float64 // sum of -log p over its rows
}

// replicaTask runs the replicas of a Forward or Backward as the parts of a
// parallel.Run: part i is replica i, over sequences split(i) of the batch.
type replicaTask struct {
	m               *Model
	backward        bool
	tokens, targets []int32
	b, t, k         int
}

// split returns the first sequence and the number of sequences of part i:
// b/k each, the first b%k parts one more.
func (rt *replicaTask) split(i int) (lo, bi int) {
	q, r := rt.b/rt.k, rt.b%rt.k
	lo, bi = i*q+min(i, r), q
	if i < r {
		bi++
	}
	return lo, bi
}

// RunPart runs replica part's forward or backward pass.
func (rt *replicaTask) RunPart(_, part int) {
	r := rt.m.reps[part]
	for _, a := range r.attn {
		a.SetBF16Compute(rt.m.prec == PrecisionBF16)
	}
	if rt.backward {
		rt.m.backward(r)
		return
	}
	lo, bi := rt.split(part)
	s, e := lo*rt.t, (lo+bi)*rt.t
	rt.m.forward(r, rt.tokens[s:e], rt.targets[s:e], bi, rt.t)
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
	logits  []float32 // [n,V]; after a Forward with targets, the gradient of the mean loss
	losses  []float32 // [n], each row's loss (scratch of crossEntropy)
	// backward scratch
	dres, dln []float32 // [n,C]
	dfc       []float32 // [n,4C]
}

type blockActs struct {
	ln1, ln1Mean, ln1Rstd []float32
	qkv                   []float32 // [n,3C]: ln1·w_qkv + b_qkv, the heads' input
	attnY                 []float32 // the heads' output, input of w_proj
	attnOut               []float32
	mid                   []float32 // res + attention
	ln2, ln2Mean, ln2Rstd []float32
	fcPre, fcAct          []float32 // [n,4C]: pre-activation (bias added) and GELU
}

// Option is an option of New and LoadGPT2.
type Option func(*options)

type options struct {
	impl *kernels.Impl
	load Weights // LoadGPT2's format of the matrices
}

// newOptions applies opts over the defaults.
func newOptions(opts []Option) options {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.impl == nil {
		o.impl = kernels.Default()
	}
	return o
}

// WithLoadWeights makes LoadGPT2 return a model for inference with its
// matrices in format f, the model Model.WithWeights(f) makes of the
// float32 one, read without the float32 model (see LoadGPT2). New ignores
// it; WeightsF32 is the default.
func WithLoadWeights(f Weights) Option {
	return func(o *options) { o.load = f }
}

// WithImpl makes the model compute with the kernel implementation p (one
// of kernels.Implementations()) instead of kernels.Default(); nil means
// kernels.Default().
func WithImpl(p *kernels.Impl) Option {
	return func(o *options) { o.impl = p }
}

// New returns a model of config cfg with parameters initialised from seed:
// matrices and embeddings normal with standard deviation 0.02 (the output
// projections of attention and MLP scaled by 1/√(2·Layers)), biases 0,
// LayerNorm gains 1. It computes with kernels.Default() unless an option
// says otherwise.
func New(cfg Config, seed uint64, opts ...Option) (*Model, error) {
	m, err := newModel(cfg, opts...)
	if err != nil {
		return nil, err
	}
	r := rng.New(seed)
	proj := 0.02 / math.Sqrt(2*float64(cfg.Layers))
	m.Config.eachTensor(&m.p, func(_ string, _ []int, init initKind, field *[]float32) {
		v := *field
		std := 0.02
		switch init {
		case initOnes:
			for i := range v {
				v[i] = 1
			}
			return
		case initZeros:
			return
		case initProj:
			std = proj
		}
		for i := range v {
			v[i] = float32(r.Normal() * std)
		}
	})
	return m, nil
}

// newModel allocates a model with zero parameters.
func newModel(cfg Config, opts ...Option) (*Model, error) {
	if err := cfg.CheckLimits(); err != nil {
		return nil, err
	}
	if err := CheckMemory("the model", ModelBytes(cfg, false)); err != nil {
		return nil, err
	}
	o := newOptions(opts)
	if cfg.Heads == 0 {
		cfg.Heads = 1
	}
	n := cfg.NumParams()
	m := &Model{Config: cfg, Params: make([]float32, n), Grads: make([]float32, n), k: o.impl}
	hugepage.Advise(m.Params)
	hugepage.Advise(m.Grads)
	m.p = cfg.view(m.Params)
	m.lin, m.head = f32Linears(cfg, &m.p)
	m.run.m = m
	r, err := m.newReplica(m.Grads)
	if err != nil {
		return nil, err
	}
	m.reps = []*replica{r}
	return m, nil
}

// Impl returns the kernel implementation the model computes with.
func (m *Model) Impl() *kernels.Impl { return m.k }

// newReplica returns a replica writing its gradients into grads (nil for
// a model without gradients, see WithWeights).
func (m *Model) newReplica(grads []float32) (*replica, error) {
	cfg := m.Config
	r := &replica{grads: grads}
	if grads != nil {
		r.g = cfg.view(grads)
		whole := r.g.wholeGrads()
		cfg.eachTensor(&r.g, func(_ string, _ []int, _ initKind, field *[]float32) {
			if !whole[field] {
				r.accum = append(r.accum, *field)
			}
		})
	}
	for l := 0; l < cfg.Layers; l++ {
		a, err := m.newAttention()
		if err != nil {
			return nil, err
		}
		r.attn = append(r.attn, a)
	}
	return r, nil
}

// wholeGrads returns the fields of the gradient views g that backward
// writes whole, each in one product that does not read it (the blocks'
// four projections and the untied LM head's, through linearBackward), so
// that they need no zeroing first. Every other gradient is accumulated
// into.
func (g *weights) wholeGrads() map[*[]float32]bool {
	whole := map[*[]float32]bool{&g.wlm: true}
	for l := range g.blocks {
		b := &g.blocks[l]
		for _, f := range []*[]float32{&b.wqkv, &b.wproj, &b.wfc, &b.wout} {
			whole[f] = true
		}
	}
	return whole
}

// newAttention returns a new attention layer of the model's shape,
// computing with the model's kernel implementation: the one place gpt
// makes attention layers (for its replicas and its samplers).
func (m *Model) newAttention() (*attention.Layer, error) {
	if m.Config.Heads == 1 {
		return attention.NewSingleHead(m.Config.Width, attention.WithImpl(m.k)), nil
	}
	return attention.NewMultiHead(m.Config.Width, m.Config.Heads, attention.WithImpl(m.k))
}

// DecaySpans returns the parameters AdamW decays (AdamW.Decay): the
// matrices and embeddings (the 2-D tensors of Tensors), not the biases
// and LayerNorm parameters; one span per run of adjacent such tensors, in
// order (wte and wpe make one).
func (c Config) DecaySpans() []Span {
	var spans []Span
	for _, t := range c.Tensors() {
		if len(t.Shape) != 2 {
			continue
		}
		if k := len(spans) - 1; k >= 0 && spans[k].Offset+spans[k].Len == t.Offset {
			spans[k].Len += t.Size()
			continue
		}
		spans = append(spans, Span{t.Offset, t.Size()})
	}
	return spans
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
		k.qkv, k.attnY = grow(k.qkv, 3*n*C), grow(k.attnY, n*C)
		k.attnOut, k.mid = grow(k.attnOut, n*C), grow(k.mid, n*C)
		k.ln2, k.ln2Mean, k.ln2Rstd = grow(k.ln2, n*C), grow(k.ln2Mean, n), grow(k.ln2Rstd, n)
		k.fcPre, k.fcAct = grow(k.fcPre, 4*n*C), grow(k.fcAct, 4*n*C)
	}
	a.lnf, a.lnfMean, a.lnfRstd = grow(a.lnf, n*C), grow(a.lnfMean, n), grow(a.lnfRstd, n)
	a.logits = grow(a.logits, n*V)
	a.losses = grow(a.losses, n)
	if m.wf == WeightsF32 { // a low-bit model has no backward pass
		a.dres, a.dln, a.dfc = grow(a.dres, n*C), grow(a.dln, n*C), grow(a.dfc, 4*n*C)
	}
}

// Forward runs the model over tokens, b sequences of t tokens ([b·t]), and
// returns the mean cross-entropy loss against targets (the next tokens,
// [b·t]); with nil targets it returns 0 and Logits holds the logits. It keeps
// the activations for Backward. It panics on a shape or token id outside
// the config.
func (m *Model) Forward(tokens, targets []int32, b, t int) float64 {
	m.checkTokens("Model.Forward", tokens, targets, b, t)
	n := b * t
	k := 1
	if targets != nil {
		k = parallel.Parts(b, 1) // min(GOMAXPROCS, b)
	}
	for len(m.reps) < k {
		var grads []float32
		if m.wf == WeightsF32 {
			grads = make([]float32, len(m.Params))
		}
		r, err := m.newReplica(grads)
		if err != nil {
			panic(err) // the config was validated when the model was made
		}
		m.reps = append(m.reps, r)
	}
	m.used, m.n, m.hasT = k, n, targets != nil
	if k == 1 {
		m.forward(m.reps[0], tokens, targets, b, t)
	} else {
		m.runReplicas(false, tokens, targets, b, t, k)
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
	embedForward(m.k, a.res[0], m.p.wte, m.p.wpe, tokens, n, t, 0, C)
	for l := range m.p.blocks {
		m.blockForward(l, a.res[l+1], a.res[l], &a.blocks[l], n, r)
	}
	layerNormForward(m.k, a.lnf, a.lnfMean, a.lnfRstd, a.res[cfg.Layers], m.p.lnfW, m.p.lnfB, n, C)
	m.headForward(a.logits, a.lnf, n)
	if targets != nil {
		r.loss = crossEntropy(m.k, a.logits, a.losses, targets, n, V, 1/float32(m.n))
	}
}

// Logits returns the [b·t, Vocab] logits of the last Forward without
// targets (after a Forward with targets they hold the first replica's part
// of the loss gradient instead).
func (m *Model) Logits() []float32 { a := &m.reps[0].acts; return a.logits[:a.n*m.Config.Vocab] }

// Backward computes the gradient of the last Forward's loss (which must
// have had targets) into Grads, overwriting them.
func (m *Model) Backward() {
	if err := m.inferenceOnly("Model.Backward"); err != nil {
		panic(err.Error())
	}
	if !m.hasT {
		panic("gpt.Model.Backward: the last Forward had no targets")
	}
	k := m.used
	if k == 1 {
		m.backward(m.reps[0])
		return
	}
	m.runReplicas(true, nil, nil, 0, 0, k)
	// Grads (replica 0's) += the others', in replica order.
	parallelFor(len(m.Grads), 1<<14, func(lo, hi int) {
		g := m.Grads[lo:hi]
		for _, r := range m.reps[1:k] {
			m.k.Add(g, g, r.grads[lo:hi])
		}
	})
}

// runReplicas runs the forward (over b sequences of t tokens) or backward
// pass of replicas 0..k-1 as the parts of one parallel.Run, at most k at
// once. While they run, the element-wise loops inside them find the
// runtime's budget taken and stay on their replica's goroutine.
func (m *Model) runReplicas(backward bool, tokens, targets []int32, b, t, k int) {
	rt := &m.run
	rt.backward, rt.tokens, rt.targets, rt.b, rt.t, rt.k = backward, tokens, targets, b, t, k
	parallel.Run(rt, k, k)
	rt.tokens, rt.targets = nil, nil
}

// backward computes replica r's share of the gradient of the mean loss
// over all m.n rows into r.grads.
func (m *Model) backward(r *replica) {
	a := &r.acts
	cfg := m.Config
	C, n := cfg.Width, a.n
	g := &r.g
	for _, t := range r.accum {
		clear(t)
	}
	// a.logits holds d(mean loss)/d(logits) already (crossEntropy).
	m.headBackward(a.dln, g, a.logits, a.lnf, n)
	clear(a.dres)
	layerNormBackward(m.k, a.dres, g.lnfW, g.lnfB, a.dln, a.res[cfg.Layers], a.lnfMean, a.lnfRstd, m.p.lnfW, n, C)
	for l := cfg.Layers - 1; l >= 0; l-- {
		m.blockBackward(l, r)
	}
	embedBackward(m.k, g.wte, g.wpe, a.dres, a.tokens, n, a.t, C)
}

// attender is the heads of the attention of a block's forward pass, the
// one part of it that differs between training, inference and decoding:
// attend writes y [n,C], the heads of block l over the rows' queries,
// keys and values qkv [n,3C]. A replica attends causally within each of
// its sequences, keeping what the backward pass needs (replica.attend); a
// Sampler attends over its key/value cache (Sampler.attend).
type attender interface {
	attend(l int, y, qkv []float32, n int)
}

// attend is full causal attention over the replica's b sequences of t
// tokens (n = b·t rows), with the attention layer of block l.
func (r *replica) attend(l int, y, qkv []float32, _ int) {
	r.attn[l].Forward(y, qkv, r.acts.b, r.acts.t)
}

// blockForward runs transformer block l (pre-LayerNorm, GPT-2's layout)
// over n rows:
//
//	ln1 = LayerNorm(x)            qkv = ln1·w_qkv + b_qkv
//	y = heads(qkv)                mid = x + y·w_proj + b_proj
//	ln2 = LayerNorm(mid)          out = mid + gelu(ln2·w_fc + b_fc)·w_out + b_out
//
// writing every intermediate into k (what blockBackward reads) and the
// heads by att. It is the block of the training forward, of the
// inference forward and of the decoder. out may be x, and k.mid may be x
// (the residual stream updated in place); k.ln2 may be k.ln1 and
// k.ln2Mean, k.ln2Rstd may be k.ln1Mean, k.ln1Rstd, and k.qkv and
// k.attnY may share memory with k.fcPre and k.fcAct (when nothing is kept
// for a backward pass). Every product is one of the model's linears, in
// the model's weight format.
func (m *Model) blockForward(l int, out, x []float32, k *blockActs, n int, att attender) {
	C := m.Config.Width
	w, lw := &m.p.blocks[l], &m.lin[l]
	qkv, y := k.qkv[:3*n*C], k.attnY[:n*C]
	layerNormForward(m.k, k.ln1, k.ln1Mean, k.ln1Rstd, x, w.ln1W, w.ln1B, n, C)
	lw.qkv.forward(m.k, qkv, k.ln1, n)
	att.attend(l, y, qkv, n)
	lw.proj.forward(m.k, k.attnOut, y, n)
	addLayerNormForward(m.k, k.mid, k.ln2, k.ln2Mean, k.ln2Rstd, x, k.attnOut, w.ln2W, w.ln2B, n, C)
	// fcPre = ln2·w_fc + b_fc, fcAct = gelu(fcPre), the bias and GELU
	// applied as the GEMM's epilogue while its result is in cache.
	lw.fc.biasGELU(m.k, k.fcPre, k.fcAct, k.ln2, n)
	// out = mid + fcAct·w_out + b_out
	if n <= rowChunk {
		// One chunk (a decoded token): no closure to allocate.
		addBiasRows(m.k, out, k.mid, w.bout, 0, n)
	} else {
		parallelFor(n, rowChunk, func(lo, hi int) { addBiasRows(m.k, out, k.mid, w.bout, lo, hi) })
	}
	lw.out.accumulate(m.k, out, k.fcAct, n)
}

// addBiasRows sets rows [lo, hi) of out = x + bias with k.Add, out and x
// [rows,len(bias)] (out may be x).
func addBiasRows(k *kernels.Impl, out, x, bias []float32, lo, hi int) {
	c := len(bias)
	for i := lo; i < hi; i++ {
		k.Add(out[i*c:][:c], x[i*c:][:c], bias)
	}
}

// blockBackward is blockForward's backward pass for block l of replica r:
// on entry r.acts.dres is the gradient of the block's output, on return
// that of its input; the block's parameter gradients ACCUMULATE into r.g,
// but for its four matrices, which it OVERWRITES (weights.wholeGrads).
func (m *Model) blockBackward(l int, r *replica) {
	a := &r.acts
	C, n := m.Config.Width, a.n
	w, gb, k := &m.p.blocks[l], &r.g.blocks[l], &a.blocks[l]
	bf := m.prec == PrecisionBF16 && n >= bf16MinRows
	// MLP: dres is d(out) and also d(mid) through the residual.
	linearBackward(m.k, bf, a.dfc, gb.wout, gb.bout, a.dres, k.fcAct, w.wout, n, 4*C, C)
	geluBackward(m.k, a.dfc, a.dfc, k.fcPre, n*4*C)
	linearBackward(m.k, bf, a.dln, gb.wfc, gb.bfc, a.dfc, k.ln2, w.wfc, n, C, 4*C)
	layerNormBackward(m.k, a.dres, gb.ln2W, gb.ln2B, a.dln, k.mid, k.ln2Mean, k.ln2Rstd, w.ln2W, n, C)
	// Attention: dres is now d(mid), which is also d(x) through the
	// residual. dy (in dln) = d(mid)·w_projᵀ, dqkv (in the first 3nC of
	// dfc, free again) from the heads, then d(ln1) (in dln again).
	dy, dqkv := a.dln, a.dfc[:3*n*C]
	linearBackward(m.k, bf, dy, gb.wproj, gb.bproj, a.dres, k.attnY, w.wproj, n, C, C)
	r.attn[l].Backward(dqkv, dy, k.qkv)
	linearBackward(m.k, bf, a.dln, gb.wqkv, gb.bqkv, dqkv, k.ln1, w.wqkv, n, C, 3*C)
	layerNormBackward(m.k, a.dres, gb.ln1W, gb.ln1B, a.dln, a.res[l], k.ln1Mean, k.ln1Rstd, w.ln1W, n, C)
}

// headForward writes the logits [n,V] of the final LayerNorm's output x
// [n,C]: x·w_lm + b_lm, or x·wteᵀ with tied embeddings (the model's head
// linear, float32 or low-bit).
func (m *Model) headForward(logits, x []float32, n int) {
	m.head.forward(m.k, logits, x, n)
}

// headBackward is headForward's backward pass: dx = dlogits·w_lmᵀ (or
// dlogits·wte), OVERWRITTEN; the head's parameter gradients in g
// ACCUMULATE (with tied embeddings dwte += dlogitsᵀ·x), but w_lm's, which
// it OVERWRITES (weights.wholeGrads).
func (m *Model) headBackward(dx []float32, g *weights, dlogits, x []float32, n int) {
	C, V := m.Config.Width, m.Config.Vocab
	bf := m.prec == PrecisionBF16 && n >= bf16MinRows
	if m.Config.TieEmbeddings {
		gemm(m.k, bf, false, false, n, C, V, 1, dlogits, V, m.p.wte, C, 0, dx, C)
		gemm(m.k, bf, true, false, V, C, n, 1, dlogits, V, x, C, 1, g.wte, C)
		return
	}
	linearBackward(m.k, bf, dx, g.wlm, g.blm, dlogits, x, m.p.wlm, n, C, V)
}
