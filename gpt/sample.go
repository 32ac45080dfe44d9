package gpt

import (
	"errors"
	"fmt"
	"math"

	"github.com/simdgpt/simdgpt/attention"
	"github.com/simdgpt/simdgpt/gpt/rng"
)

// Sampler generates text from a model one token at a time, with a key/value
// cache per layer (attention.Decoder), so each new token costs one
// row of work instead of a forward pass over the whole context. It runs
// the model's own blocks (Model.blockForward) with attention over the
// caches.
type Sampler struct {
	m      *Model
	caches []*attention.Decoder // one per block, each with its own layer state and KV cache
	// Scratch for up to BlockSize rows: x is the residual stream, which
	// the blocks update in place, and blk the blocks' intermediates (one
	// set, shared by the blocks in turn; see NewSampler).
	x      []float32
	blk    blockActs
	logits []float32
	drawScratch
	history []int32
}

// NewSampler returns a sampler for m (which it only reads).
func (m *Model) NewSampler() *Sampler {
	cfg := m.Config
	T, C := cfg.BlockSize, cfg.Width
	x, ln := make([]float32, T*C), make([]float32, T*C)
	fcPre, fcAct := make([]float32, 4*T*C), make([]float32, 4*T*C)
	mean, rstd := make([]float32, T), make([]float32, T)
	s := &Sampler{m: m, x: x,
		// Nothing is kept for a backward pass: mid is the residual stream
		// itself, both LayerNorms share one output and statistics, and
		// the heads' input and output are the MLP's scratch.
		blk: blockActs{
			ln1: ln, ln1Mean: mean, ln1Rstd: rstd,
			qkv: fcPre, attnY: fcAct,
			attnOut: make([]float32, T*C),
			mid:     x,
			ln2:     ln, ln2Mean: mean, ln2Rstd: rstd,
			fcPre: fcPre, fcAct: fcAct,
		},
		logits: make([]float32, cfg.Vocab), drawScratch: newDrawScratch(m.k, cfg.Vocab)}
	for range cfg.Layers {
		a, err := m.newAttention()
		if err != nil {
			panic(err) // the config was validated when the model was made
		}
		s.caches = append(s.caches, a.NewDecoderKV(T, m.kv))
	}
	return s
}

// attend is the heads over block l's key/value cache: qkv [n,3C] are the
// next n positions of the sequence (see attention.Decoder.Decode), their
// per-head products in the model's precision.
func (s *Sampler) attend(l int, y, qkv []float32, n int) {
	c := s.caches[l]
	c.SetBF16Compute(s.m.prec == PrecisionBF16)
	c.Decode(y, qkv, n)
}

// feed runs the tokens through the model at the next positions of the
// caches and leaves the logits of the last one in s.logits.
func (s *Sampler) feed(toks []int32) {
	m := s.m
	C := m.Config.Width
	n := len(toks)
	x := s.x[:n*C]
	embedForward(m.k, x, m.p.wte, m.p.wpe, toks, n, n, s.caches[0].Len(), C)
	for l := range m.p.blocks {
		m.blockForward(l, x, x, &s.blk, n, s)
	}
	// Only the last row's logits are needed.
	last, h := x[(n-1)*C:][:C], s.blk.ln1[:C]
	layerNormForward(m.k, h, s.blk.ln1Mean, s.blk.ln1Rstd, last, m.p.lnfW, m.p.lnfB, 1, C)
	m.headForward(s.logits, h, 1)
}

// Logits returns the logits of the next token after feeding toks to a fresh
// context: 1 to BlockSize tokens, each in [0, Vocab). It panics, naming the
// argument, on any other toks.
func (s *Sampler) Logits(toks []int32) []float32 {
	cfg := s.m.Config
	if len(toks) < 1 || len(toks) > cfg.BlockSize {
		panic(fmt.Sprintf("gpt.Sampler.Logits: len(toks)=%d, need 1 to BlockSize=%d", len(toks), cfg.BlockSize))
	}
	for i, t := range toks {
		if t < 0 || int(t) >= cfg.Vocab {
			panic(fmt.Sprintf("gpt.Sampler.Logits: toks[%d]=%d is outside the vocabulary of %d", i, t, cfg.Vocab))
		}
	}
	for _, c := range s.caches {
		c.Reset()
	}
	s.feed(toks)
	return s.logits
}

// Generate continues prompt (at least one token) by n tokens, calling emit
// with each as soon as it is drawn; it stops early if emit returns an
// error. Tokens are drawn from softmax(logits/temperature) restricted to
// the topK most likely (topK <= 0: all); temperature 0 picks the most
// likely token. When the context reaches BlockSize, the caches are rebuilt
// from the last BlockSize/2 tokens. It is GenerateWith without top-p.
func (s *Sampler) Generate(prompt []int32, n int, temperature float64, topK int, r *rng.RNG, emit func(int32) error) error {
	return s.GenerateWith(prompt, n, SampleOptions{Temperature: temperature, TopK: topK}, r, emit)
}

// GenerateWith is Generate with the options o: temperature, top-k and
// then top-p (nucleus sampling, see SampleOptions.TopP) restrict the
// distribution each token is drawn from, in that order. Logits that are
// not all finite stop it with an error wrapping ErrNotFinite, before a
// token is drawn from them (the tokens emitted before stay emitted).
func (s *Sampler) GenerateWith(prompt []int32, n int, o SampleOptions, r *rng.RNG, emit func(int32) error) error {
	if err := s.start(prompt, o); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		tok, err := s.next(o, r)
		if err != nil {
			return err
		}
		if err := emit(tok); err != nil {
			return err
		}
		if i == n-1 {
			break
		}
		if !s.rebuildIfFull() {
			s.feed(s.history[len(s.history)-1:])
		}
	}
	return nil
}

// start checks prompt and o as GenerateWith does and feeds the prompt's
// last BlockSize tokens to fresh caches.
func (s *Sampler) start(prompt []int32, o SampleOptions) error {
	temperature := o.Temperature
	cfg := s.m.Config
	if len(prompt) == 0 {
		return fmt.Errorf("gpt: Generate needs a prompt of at least one token")
	}
	if temperature < 0 || math.IsNaN(temperature) {
		return fmt.Errorf("gpt: temperature %g must be >= 0", temperature)
	}
	for _, t := range prompt {
		if t < 0 || int(t) >= cfg.Vocab {
			return fmt.Errorf("gpt: prompt token %d is outside the vocabulary of %d", t, cfg.Vocab)
		}
	}
	if !(o.TopP >= 0 && o.TopP <= 1) {
		return fmt.Errorf("gpt: top-p %g must be in [0, 1]", o.TopP)
	}
	s.history = append(s.history[:0], prompt...)
	ctx := prompt
	if len(ctx) > cfg.BlockSize {
		ctx = ctx[len(ctx)-cfg.BlockSize:]
	}
	s.Logits(ctx)
	return nil
}

// next checks the logits and draws the next token from them with r,
// appending it to the history.
func (s *Sampler) next(o SampleOptions, r *rng.RNG) (int32, error) {
	cfg := s.m.Config
	if err := s.checkLogits(len(s.history)); err != nil {
		return 0, err
	}
	tok := s.draw(o.Temperature, o.TopK, o.TopP, r)
	if len(s.history) >= 2*cfg.BlockSize {
		// Only the last BlockSize tokens are ever read again: memory
		// stays bounded however many tokens are generated.
		s.history = append(s.history[:0], s.history[len(s.history)-cfg.BlockSize:]...)
	}
	s.history = append(s.history, tok)
	return tok, nil
}

// rebuildIfFull rebuilds the caches from the last BlockSize/2 tokens of
// the history when they hold BlockSize positions, leaving the next
// token's logits, and reports whether it did; otherwise the last token
// is still to be fed.
func (s *Sampler) rebuildIfFull() bool {
	cfg := s.m.Config
	if s.caches[0].Len() < cfg.BlockSize {
		return false
	}
	keep := max(cfg.BlockSize/2, 1)
	s.Logits(s.history[len(s.history)-keep:])
	return true
}

// ErrNotFinite is what the errors of a model that computes a NaN or an
// infinite logit or loss are (errors.Is): its weights or activations
// overflow float32 (finite weights near ±3e38 do), and nothing drawn or
// averaged from them means anything.
var ErrNotFinite = errors.New("not finite")

// checkLogits returns an error wrapping ErrNotFinite when a logit of
// s.logits (the next token's after pos tokens) is NaN or infinite: O(V).
func (s *Sampler) checkLogits(pos int) error {
	for i, l := range s.logits {
		if math.IsNaN(float64(l)) || math.IsInf(float64(l), 0) {
			return fmt.Errorf("gpt: the next-token logits at position %d are %w (token %d's is %v): the model's weights or activations overflow float32", pos, ErrNotFinite, i, l)
		}
	}
	return nil
}
