package gpt

import (
	"fmt"

	"github.com/simdgpt/simdgpt/attention"
	"github.com/simdgpt/simdgpt/internal/parallel"
)

// The inference forward: the blocks of the training forward (blockForward,
// the same linears in the model's weight format) with nothing kept for a
// backward pass, attention by attention.Fused (an online softmax, no T×T
// matrix), and activations sized for one pass of at most inferRows rows
// (whole sequences) that every layer and every pass reuses. The LM head
// and the loss run over headRows rows at a time, so no [rows, Vocab]
// matrix is held either. As the training forward does with its replicas,
// a batch of several sequences is split over up to GOMAXPROCS parts that
// run at once, each with its own workspace (whole products per goroutine
// scale better than one product split in two). Evaluation
// (EvalSequential) runs on it.

// inferRows is the number of rows one pass of the inference forward
// takes at most: as many whole sequences as fit (at least one), enough
// rows for the products to run at the training forward's speed.
const inferRows = 1024

// headRows is the number of rows whose logits the inference forward holds
// at once (per part): enough that packing the LM head's matrix, once per
// product, costs little next to the product.
const headRows = 256

// inference is the workspace of one part of the inference forward, grown
// to the largest pass and reused.
type inference struct {
	fused  *attention.Fused
	sum    float64   // the part's sum of row losses
	seqs   int       // sequences of the pass in progress
	x      []float32 // residual stream [rows,C]
	blk    blockActs // the blocks' intermediates, shared by the blocks in turn
	logits []float32 // [headRows,V]
	losses []float32 // [headRows]
}

// attend is the heads of a pass: causal attention within each of its
// sequences of n/seqs rows, by the fused forward.
func (in *inference) attend(_ int, y, qkv []float32, n int) {
	in.fused.Forward(y, qkv, in.seqs, n/in.seqs)
}

// inferTask runs the parts of an inference forward as a parallel.Task:
// part i runs sequences split(i) of the batch with workspace m.infs[i].
type inferTask struct {
	m               *Model
	tokens, targets []int32
	b, t, k         int
}

// split returns the first sequence and the number of sequences of part
// i: b/k each, the first b%k parts one more.
func (it *inferTask) split(i int) (lo, bi int) {
	q, r := it.b/it.k, it.b%it.k
	lo, bi = i*q+min(i, r), q
	if i < r {
		bi++
	}
	return lo, bi
}

// RunPart runs part i's sequences.
func (it *inferTask) RunPart(_, i int) {
	lo, bi := it.split(i)
	s, e := lo*it.t, (lo+bi)*it.t
	it.m.inferPart(it.m.infs[i], it.tokens[s:e], it.targets[s:e], bi, it.t)
}

// inferWorkspace sizes in (made if nil) for passes of rows rows.
func (m *Model) inferWorkspace(in *inference, rows int) *inference {
	if in == nil {
		a, err := m.newAttention()
		if err != nil {
			panic(err) // the config was validated when the model was made
		}
		in = &inference{fused: a.NewFused()}
	}
	C, V := m.Config.Width, m.Config.Vocab
	in.x = grow(in.x, rows*C)
	k := &in.blk
	// mid is the residual stream itself, both LayerNorms share one output
	// and statistics, and the heads' input and output are the MLP's
	// scratch (blockForward).
	k.ln1, k.ln1Mean, k.ln1Rstd = grow(k.ln1, rows*C), grow(k.ln1Mean, rows), grow(k.ln1Rstd, rows)
	k.ln2, k.ln2Mean, k.ln2Rstd = k.ln1, k.ln1Mean, k.ln1Rstd
	k.attnOut = grow(k.attnOut, rows*C)
	k.fcPre, k.fcAct = grow(k.fcPre, 4*rows*C), grow(k.fcAct, 4*rows*C)
	k.qkv, k.attnY = k.fcPre, k.fcAct
	k.mid = in.x
	in.logits = grow(in.logits, min(headRows, rows)*V)
	in.losses = grow(in.losses, min(headRows, rows))
	return in
}

// inferLoss returns the mean cross-entropy against targets of the model
// over tokens, b sequences of t tokens ([b·t] each, checked by the
// caller), by the inference forward: what Forward with targets returns
// up to float32 rounding (the fused attention sums in another order, and
// the products see other numbers of rows; TestInferLossMatchesForward
// holds them to 2e-6 relative), with none of its memory. The sequences
// are split over k = min(GOMAXPROCS, b) parts; each sums its rows'
// losses in float64 in row order, and the parts' sums are added in part
// order, so the result is deterministic for a given GOMAXPROCS.
func (m *Model) inferLoss(tokens, targets []int32, b, t int) float64 {
	k := parallel.Parts(b, 1)
	seqs := min((b+k-1)/k, max(1, inferRows/t))
	for len(m.infs) < k {
		m.infs = append(m.infs, nil)
	}
	for i := range m.infs[:k] {
		m.infs[i] = m.inferWorkspace(m.infs[i], seqs*t)
	}
	if k == 1 {
		m.inferPart(m.infs[0], tokens, targets, b, t)
	} else {
		parallel.Run(&inferTask{m: m, tokens: tokens, targets: targets, b: b, t: t, k: k}, k, k)
	}
	var sum float64
	for _, in := range m.infs[:k] {
		sum += in.sum
	}
	return sum / float64(b*t)
}

// inferPart runs the inference forward over b sequences of t tokens with
// workspace in, in passes of as many whole sequences as its rows hold,
// and leaves the sum of the rows' losses in in.sum.
func (m *Model) inferPart(in *inference, tokens, targets []int32, b, t int) {
	cfg := m.Config
	C, V := cfg.Width, cfg.Vocab
	seqs := len(in.x) / (t * C)
	in.sum = 0
	in.fused.SetBF16Compute(m.prec == PrecisionBF16)
	for s0 := 0; s0 < b; s0 += seqs {
		in.seqs = min(seqs, b-s0)
		n := in.seqs * t
		x := in.x[:n*C]
		embedForward(m.k, x, m.p.wte, m.p.wpe, tokens[s0*t:][:n], n, t, 0, C)
		for l := range m.p.blocks {
			m.blockForward(l, x, x, &in.blk, n, in)
		}
		// The final LayerNorm of every row at once (into ln1, free now),
		// then the head and the loss by headRows rows.
		h := in.blk.ln1[:n*C]
		layerNormForward(m.k, h, in.blk.ln1Mean, in.blk.ln1Rstd, x, m.p.lnfW, m.p.lnfB, n, C)
		hr := len(in.losses)
		for r0 := 0; r0 < n; r0 += hr {
			r := min(hr, n-r0)
			lg := in.logits[:r*V]
			m.headForward(lg, h[r0*C:(r0+r)*C], r)
			in.sum += crossEntropy(m.k, lg, in.losses, targets[s0*t+r0:][:r], r, V, 1)
		}
	}
}

// checkTokens panics, naming fn, unless tokens and targets (nil for none)
// are b·t ids of the vocabulary with 1 <= t <= BlockSize and b >= 1.
func (m *Model) checkTokens(fn string, tokens, targets []int32, b, t int) {
	cfg := m.Config
	V := cfg.Vocab
	if b < 1 || t < 1 || t > cfg.BlockSize {
		panic(fmt.Sprintf("gpt.%s: b=%d t=%d, need b >= 1 and 1 <= t <= BlockSize=%d", fn, b, t, cfg.BlockSize))
	}
	n := b * t
	if len(tokens) != n || (targets != nil && len(targets) != n) {
		panic(fmt.Sprintf("gpt.%s: len(tokens)=%d len(targets)=%d, want b*t=%d", fn, len(tokens), len(targets), n))
	}
	for i, tok := range tokens {
		if tok < 0 || int(tok) >= V {
			panic(fmt.Sprintf("gpt.%s: token %d at %d is outside the vocabulary of %d", fn, tok, i, V))
		}
	}
	for i, tg := range targets {
		if tg < 0 || int(tg) >= V {
			panic(fmt.Sprintf("gpt.%s: target %d at %d is outside the vocabulary of %d", fn, tg, i, V))
		}
	}
}
