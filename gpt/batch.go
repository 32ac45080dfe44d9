package gpt

import (
	"fmt"

	"github.com/simdgpt/simdgpt/gpt/rng"
)

// BatchSampler generates several sequences together: each step feeds the
// last token of every sequence as one row of a matrix, so each weight
// matrix takes part in one product a step for all of them (the kernels'
// products of few rows, which read it once for several rows) instead of
// one per sequence. Every sequence has its own
// key/value caches, position, history, logits and random generator, and
// is continued exactly as Sampler.GenerateWith continues it alone: the
// same prompt handling, draws and cache rebuilds, and logits equal to the
// ones it gets alone up to the products' rounding (with the generic
// kernels bitwise; the SIMD kernels for several rows may sum in another
// order than those for one, and with int8 weights quantize the
// activations where the one-row kernel may not), so greedy decoding gives
// the same tokens, and a seeded draw the same tokens as with that seed
// alone, unless two logits lie within that rounding of a decision's
// boundary. A BatchSampler is not safe for concurrent use.
type BatchSampler struct {
	m     *Model
	lanes []*Sampler // one per sequence; their scratch rows are shared (x, blk)
	// The step in progress: rows[r] is the sequence of row r.
	rows []int
	toks []int32
	// The logits, lanes[i].logits being row i.
	logits []float32
}

// NewBatchSampler returns a sampler of n sequences decoded together for m
// (which it only reads). It panics if n < 1; see BatchSampleBytesWeights
// for the memory it takes.
func (m *Model) NewBatchSampler(n int) *BatchSampler {
	if n < 1 {
		panic(fmt.Sprintf("gpt.Model.NewBatchSampler: n = %d sequences, need at least 1", n))
	}
	cfg := m.Config
	T, C, V := cfg.BlockSize, cfg.Width, cfg.Vocab
	// The rows' scratch serves a prompt of up to T tokens of one sequence
	// and a step of one token of each of n.
	R := max(T, n)
	// As NewSampler's: nothing kept for a backward pass.
	x, ln := make([]float32, R*C), make([]float32, R*C)
	fcPre, fcAct := make([]float32, 4*R*C), make([]float32, 4*R*C)
	mean, rstd := make([]float32, R), make([]float32, R)
	blk := blockActs{
		ln1: ln, ln1Mean: mean, ln1Rstd: rstd,
		qkv: fcPre, attnY: fcAct,
		attnOut: make([]float32, R*C),
		mid:     x,
		ln2:     ln, ln2Mean: mean, ln2Rstd: rstd,
		fcPre: fcPre, fcAct: fcAct,
	}
	b := &BatchSampler{m: m, rows: make([]int, 0, n), toks: make([]int32, n), logits: make([]float32, n*V)}
	for i := range n {
		s := &Sampler{m: m, x: x, blk: blk, logits: b.logits[i*V : (i+1)*V : (i+1)*V],
			drawScratch: newDrawScratch(m.k, V)}
		for range cfg.Layers {
			a, err := m.newAttention()
			if err != nil {
				panic(err) // the config was validated when the model was made
			}
			s.caches = append(s.caches, a.NewDecoderKV(T, m.kv))
		}
		b.lanes = append(b.lanes, s)
	}
	return b
}

// Len returns the number of sequences b decodes.
func (b *BatchSampler) Len() int { return len(b.lanes) }

// GenerateWith continues sequence i from prompts[i] (at least one token)
// by n tokens drawn with rs[i], for every i, calling emit(i, token) with
// each token as soon as it is drawn: step by step, sequences in order. It
// stops early, returning the error, if emit returns one. The options and
// the errors are those of Sampler.GenerateWith (an error names the
// sequence); each sequence's tokens are those GenerateWith gives it alone
// with the same generator (see BatchSampler). It panics if len(prompts)
// or len(rs) is not Len(), or an rs[i] is nil.
func (b *BatchSampler) GenerateWith(prompts [][]int32, n int, o SampleOptions, rs []*rng.RNG, emit func(seq int, tok int32) error) error {
	N := len(b.lanes)
	if len(prompts) != N {
		panic(fmt.Sprintf("gpt.BatchSampler.GenerateWith: len(prompts) = %d, the sampler decodes %d sequences", len(prompts), N))
	}
	if len(rs) != N {
		panic(fmt.Sprintf("gpt.BatchSampler.GenerateWith: len(rs) = %d, the sampler decodes %d sequences", len(rs), N))
	}
	for i, r := range rs {
		if r == nil {
			panic(fmt.Sprintf("gpt.BatchSampler.GenerateWith: rs[%d] is nil", i))
		}
	}
	for i, s := range b.lanes {
		if err := s.start(prompts[i], o); err != nil {
			return fmt.Errorf("sequence %d: %w", i, err)
		}
	}
	for step := 0; step < n; step++ {
		for i, s := range b.lanes {
			tok, err := s.next(o, rs[i])
			if err != nil {
				return fmt.Errorf("sequence %d: %w", i, err)
			}
			if err := emit(i, tok); err != nil {
				return err
			}
		}
		if step == n-1 {
			break
		}
		b.advance()
	}
	return nil
}

// advance leaves in every sequence's logits those of the token after its
// last: one step over the sequences whose caches have room, then a
// rebuild (Sampler.rebuildIfFull) of those whose caches are full.
func (b *BatchSampler) advance() {
	b.rows = b.rows[:0]
	full := false
	for i, s := range b.lanes {
		if s.caches[0].Len() < b.m.Config.BlockSize {
			b.rows = append(b.rows, i)
			b.toks[len(b.rows)-1] = s.history[len(s.history)-1]
		} else {
			full = true
		}
	}
	if len(b.rows) > 0 {
		b.step()
	}
	if !full {
		return
	}
	// The sequences left out of the step, after it (their logits rows
	// are not moved over).
	r := 0
	for i, s := range b.lanes {
		if r < len(b.rows) && b.rows[r] == i {
			r++
			continue
		}
		s.rebuildIfFull()
	}
}

// step feeds b.toks[r] to sequence b.rows[r] (in increasing order) at the
// next position of its caches, as one matrix of rows, and leaves the
// logits of each in its row of b.logits.
func (b *BatchSampler) step() {
	m := b.m
	C, V := m.Config.Width, m.Config.Vocab
	n := len(b.rows)
	s0 := b.lanes[0]
	x, blk := s0.x[:n*C], &s0.blk
	for r, i := range b.rows {
		pos := b.lanes[i].caches[0].Len()
		embedForward(m.k, x[r*C:(r+1)*C], m.p.wte, m.p.wpe, b.toks[r:r+1], 1, 1, pos, C)
	}
	att := (*batchAttender)(b)
	for l := range m.p.blocks {
		m.blockForward(l, x, x, blk, n, att)
	}
	h := blk.ln1[:n*C]
	layerNormForward(m.k, h, blk.ln1Mean, blk.ln1Rstd, x, m.p.lnfW, m.p.lnfB, n, C)
	m.headForward(b.logits[:n*V], h, n)
	// Row r belongs to sequence rows[r] >= r: move the rows down from the
	// last, so none is overwritten before it moves.
	for r := n - 1; r >= 0; r-- {
		if i := b.rows[r]; i != r {
			copy(b.logits[i*V:(i+1)*V], b.logits[r*V:(r+1)*V])
		}
	}
}

// batchAttender is the heads of a step of a BatchSampler (blockForward
// computes the projections of all its rows at once, each weight read
// once): row r of the step attends over the caches of sequence rows[r].
type batchAttender BatchSampler

// attend computes each row's heads over its own sequence's cache of
// block l.
func (a *batchAttender) attend(l int, y, qkv []float32, _ int) {
	C := a.m.Config.Width
	for r, i := range a.rows {
		a.lanes[i].caches[l].Decode(y[r*C:(r+1)*C], qkv[3*r*C:3*(r+1)*C], 1)
	}
}

// BatchSampleBytesWeights estimates the memory of sampling n sequences
// together (NewBatchSampler) from a model of config c whose matrices are
// in format f: SampleBytesWeights for the first, and for each other its
// key/value caches and their workspace, its logits and its draw's
// scratch, plus the rows of a step. c must pass CheckLimits.
func BatchSampleBytesWeights(c Config, f Weights, n int) int64 {
	C, V, L, T := float64(c.Width), float64(c.Vocab), float64(c.Layers), float64(c.BlockSize)
	lane := 4*(L*3*(T+16)*C+V) + drawScratchBytes(c.Vocab) + 4*decoderScores(c)
	rows := 4 * 11 * float64(max(n-c.BlockSize, 0)) * C
	return saturate(float64(SampleBytesWeights(c, f)) + float64(n-1)*lane + rows)
}
