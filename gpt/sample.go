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
	x       []float32
	blk     blockActs
	logits  []float32
	keys    []uint64  // draw's scratch: rank keys (rankKey)
	probs   []float64 // draw's scratch: weights
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
		logits: make([]float32, cfg.Vocab), keys: make([]uint64, cfg.Vocab), probs: make([]float64, cfg.Vocab)}
	for range cfg.Layers {
		a, err := m.newAttention()
		if err != nil {
			panic(err) // the config was validated when the model was made
		}
		s.caches = append(s.caches, a.NewDecoder(T))
	}
	return s
}

// attend is the heads over block l's key/value cache: qkv [n,3C] are the
// next n positions of the sequence (see attention.Decoder.Decode).
func (s *Sampler) attend(l int, y, qkv []float32, n int) {
	s.caches[l].Decode(y, qkv, n)
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
		if err := s.checkLogits(len(s.history)); err != nil {
			return err
		}
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

// draw picks the next token from s.logits, which must hold no NaN or +Inf
// and at least one finite logit (GenerateWith checks). Tokens are ranked
// by logit, descending, ties by lower id first (rankKey); their weights are
// exp((logit - max)/temperature) in float64. Top-k keeps the topK first in
// rank; top-p then keeps the shortest rank-order prefix whose weights sum
// to at least topP times the sum of those kept (the token that reaches it
// included); the token is drawn in proportion to the weights left, with
// one r.Float64(). Nothing sorts the vocabulary: greedy is one pass; top-k
// selects the k with a bounded heap or a quickselect, O(V + k log k), and
// walks them in rank order; top-p alone finds its last token with a
// quickselect weighted by the probabilities, expected O(V); with neither,
// one pass sums the weights and one draws. Without top-k the kept tokens
// are walked in id order, so the draw for a given r differs from a
// rank-order walk, not the distribution. It allocates nothing.
func (s *Sampler) draw(temperature float64, topK int, topP float64, r *rng.RNG) int32 {
	V := len(s.logits)
	if temperature == 0 {
		// Greedy: the first largest logit (the lowest id among ties, as
		// rank order gives).
		best := 0
		for i, l := range s.logits {
			if l > s.logits[best] {
				best = i
			}
		}
		return int32(best)
	}
	k, sum, last := s.candidates(temperature, topK, topP)
	u := r.Float64() * sum
	if k > 0 {
		// Top-k: the candidates are s.keys[:k] in rank order, their
		// weights s.probs[:k].
		for i := 0; i < k; i++ {
			u -= s.probs[i]
			if u < 0 {
				return int32(keyID(s.keys[i]))
			}
		}
		return int32(keyID(s.keys[k-1]))
	}
	// The candidates are the tokens whose rank key is at least last, their
	// weights s.probs by id: walk them in id order. Rounding that leaves
	// the walk short of the end picks the last token it passed with a
	// nonzero weight.
	pick := -1
	for i, p := range s.probs[:V] {
		if p == 0 || (last != 0 && rankKey(s.logits[i], i) < last) {
			continue
		}
		pick = i
		if u -= p; u < 0 {
			break
		}
	}
	return int32(max(pick, 0))
}

// candidates computes the tokens draw (temperature > 0) draws from and
// their weights, summing to sum. With 0 < topK < V it returns k > 0: the
// candidates are s.keys[:k], the rank keys of the first in rank order
// (topKeys), cut to the nucleus, and s.probs[:k] their weights. Otherwise
// it returns k = 0: s.probs holds every token's weight by id and the
// candidates are the tokens whose rank key is at least last (0: all).
func (s *Sampler) candidates(temperature float64, topK int, topP float64) (k int, sum float64, last uint64) {
	V := len(s.logits)
	if topK > 0 && topK < V {
		k = topK
		topKeys(s.keys, s.logits, k)
		top := float64(s.logits[keyID(s.keys[0])])
		for i, key := range s.keys[:k] {
			p := math.Exp((float64(s.logits[keyID(key)]) - top) / temperature)
			s.probs[i] = p
			sum += p
		}
		if kept := nucleus(s.probs[:k], sum, topP); kept < k {
			k, sum = kept, 0
			for _, p := range s.probs[:k] {
				sum += p
			}
		}
		return k, sum, 0
	}
	top := s.logits[0]
	for _, l := range s.logits[1:] {
		top = max(top, l)
	}
	w := s.probs[:V]
	for i, l := range s.logits {
		p := math.Exp((float64(l) - float64(top)) / temperature)
		w[i] = p
		sum += p
	}
	if topP <= 0 || topP >= 1 {
		return 0, sum, 0
	}
	keys := s.keys[:V]
	for i, l := range s.logits {
		keys[i] = rankKey(l, i)
	}
	if last = nucleusKey(keys, w, topP*sum); last == 0 {
		return 0, sum, 0
	}
	sum = 0
	for i, l := range s.logits {
		if rankKey(l, i) >= last {
			sum += w[i]
		}
	}
	return 0, sum, last
}
