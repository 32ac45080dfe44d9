package gpt

import (
	"fmt"
	"math"
	"sort"

	"github.com/simdgpt/simdgpt/attention"
	"github.com/simdgpt/simdgpt/gpt/rng"
)

// Sampler generates text from a model one token at a time, with a key/value
// cache per layer (attention.Decoder), so each new token costs one
// row of work instead of a forward pass over the whole context.
type Sampler struct {
	m      *Model
	caches []*attention.Decoder // one per block, each with its own layer state and KV cache
	// scratch for up to BlockSize rows
	x, h, att, fc []float32
	mean, rstd    []float32
	logits        []float32
	order         []int
	probs         []float64
	history       []int32
}

// NewSampler returns a sampler for m (which it only reads).
func (m *Model) NewSampler() *Sampler {
	cfg := m.Config
	T, C := cfg.BlockSize, cfg.Width
	s := &Sampler{m: m,
		x: make([]float32, T*C), h: make([]float32, T*C), att: make([]float32, T*C),
		fc:   make([]float32, 4*T*C),
		mean: make([]float32, T), rstd: make([]float32, T),
		logits: make([]float32, cfg.Vocab), order: make([]int, cfg.Vocab), probs: make([]float64, cfg.Vocab)}
	for range cfg.Layers {
		a, err := m.newAttention()
		if err != nil {
			panic(err) // the config was validated when the model was made
		}
		s.caches = append(s.caches, a.NewDecoder(T))
	}
	return s
}

// feed runs the tokens through the model at the next positions of the
// caches and leaves the logits of the last one in s.logits.
func (s *Sampler) feed(toks []int32) {
	m := s.m
	C := m.Config.Width
	n, pos := len(toks), s.caches[0].Len()
	for i, tok := range toks {
		te, pe := m.p.wte[int(tok)*C:][:C], m.p.wpe[(pos+i)*C:][:C]
		xi := s.x[i*C:][:C]
		for j := range xi {
			xi[j] = te[j] + pe[j]
		}
	}
	x, h, att, fc := s.x[:n*C], s.h[:n*C], s.att[:n*C], s.fc[:4*n*C]
	for l := range m.p.blocks {
		w := &m.p.blocks[l]
		layerNormForward(m.k, h, s.mean, s.rstd, x, w.ln1W, w.ln1B, n, C)
		s.caches[l].Decode(att, h, n, w.attn)
		addLayerNormForward(m.k, x, h, s.mean, s.rstd, x, att, w.ln2W, w.ln2B, n, C)
		linearForward(m.k, fc, h, w.wfc, w.bfc, n, C, 4*C)
		geluForward(m.k, fc, fc, 4*n*C)
		linearForward(m.k, att, fc, w.wout, w.bout, n, 4*C, C)
		m.k.Add(x, x, att)
	}
	last := x[(n-1)*C:][:C]
	layerNormForward(m.k, h[:C], s.mean, s.rstd, last, m.p.lnfW, m.p.lnfB, 1, C)
	m.headForward(s.logits, h[:C], 1)
}

// Logits returns the logits of the next token after feeding toks to a fresh
// context (at most BlockSize tokens).
func (s *Sampler) Logits(toks []int32) []float32 {
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
// distribution each token is drawn from, in that order.
func (s *Sampler) GenerateWith(prompt []int32, n int, o SampleOptions, r *rng.RNG, emit func(int32) error) error {
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
	s.history = append(s.history[:0], prompt...)
	ctx := prompt
	if len(ctx) > cfg.BlockSize {
		ctx = ctx[len(ctx)-cfg.BlockSize:]
	}
	if !(o.TopP >= 0 && o.TopP <= 1) {
		return fmt.Errorf("gpt: top-p %g must be in [0, 1]", o.TopP)
	}
	s.Logits(ctx)
	for i := 0; i < n; i++ {
		tok := s.draw(temperature, o.TopK, o.TopP, r)
		if len(s.history) >= 2*cfg.BlockSize {
			// Only the last BlockSize tokens are ever read again: memory
			// stays bounded however many tokens are generated.
			s.history = append(s.history[:0], s.history[len(s.history)-cfg.BlockSize:]...)
		}
		s.history = append(s.history, tok)
		if err := emit(tok); err != nil {
			return err
		}
		if i == n-1 {
			break
		}
		if s.caches[0].Len() == cfg.BlockSize {
			keep := max(cfg.BlockSize/2, 1)
			s.Logits(s.history[len(s.history)-keep:])
		} else {
			s.feed(s.history[len(s.history)-1:])
		}
	}
	return nil
}

// draw picks the next token from s.logits.
func (s *Sampler) draw(temperature float64, topK int, topP float64, r *rng.RNG) int32 {
	V := len(s.logits)
	if temperature == 0 {
		// Greedy: the first largest logit (the lowest id among ties, as
		// the sorted order below would give), without sorting all V.
		best := 0
		for i, l := range s.logits {
			if l > s.logits[best] {
				best = i
			}
		}
		return int32(best)
	}
	for i := range s.order {
		s.order[i] = i
	}
	// Sort by logit, descending (ties by id, so sampling is deterministic).
	sort.Slice(s.order, func(a, b int) bool {
		la, lb := s.logits[s.order[a]], s.logits[s.order[b]]
		return la > lb || (la == lb && s.order[a] < s.order[b])
	})
	k := V
	if topK > 0 && topK < V {
		k = topK
	}
	top := float64(s.logits[s.order[0]])
	var sum float64
	for i := 0; i < k; i++ {
		p := math.Exp((float64(s.logits[s.order[i]]) - top) / temperature)
		s.probs[i] = p
		sum += p
	}
	if kept := nucleus(s.probs[:k], sum, topP); kept < k {
		k, sum = kept, 0
		for _, p := range s.probs[:k] {
			sum += p
		}
	}
	u := r.Float64() * sum
	for i := 0; i < k; i++ {
		u -= s.probs[i]
		if u < 0 {
			return int32(s.order[i])
		}
	}
	return int32(s.order[k-1])
}
