package gpt

import (
	"context"
	"fmt"
	"math"
)

// SequentialBatches returns how many batches of b sequences of t tokens
// a stream of n tokens holds when read in order without overlap, as
// EvalSequential reads it: sequence i starts at token i·t and needs t+1
// tokens (its targets are the next tokens).
func SequentialBatches(n, b, t int) int {
	if n < 2 || b < 1 || t < 1 {
		return 0
	}
	return (n - 1) / t / b
}

// EvalSequential returns the mean cross-entropy (nats per token) of m over
// the first batches batches of b sequences of t tokens of toks, read in
// order without overlap (see SequentialBatches): the mean over those
// batches of each one's mean loss over its b·t tokens. t must be at most
// the model's block size and every token used below its vocabulary; toks
// must hold the batches. It errs, naming the numbers, before running
// anything.
//
// It runs the inference forward, not Forward: nothing is kept for a
// backward pass, attention is fused (no T×T matrix), and the activations
// are those of one pass of at most 1,024 rows (or one sequence) and a
// block of 256 rows of logits, whatever b is, for each of up to
// GOMAXPROCS parts the sequences are split over. Its losses are Forward's up
// to float32 rounding (the sums run in another order): within 2e-6
// relative in the tests.
func (m *Model) EvalSequential(toks []uint16, b, t, batches int) (float64, error) {
	loss, _, err := m.EvalSequentialContext(context.Background(), toks, b, t, batches)
	return loss, err
}

// EvalSequentialContext is EvalSequential that checks ctx before each
// batch and returns the number of batches it evaluated. Once ctx is done
// it returns ctx's error, with the mean over the batches evaluated (NaN
// for none): a partial result. A run that completes returns
// EvalSequential's result, bit for bit. A batch whose cross-entropy is
// NaN or infinite stops it with an error wrapping ErrNotFinite (the loss
// NaN, done the batches before it).
func (m *Model) EvalSequentialContext(ctx context.Context, toks []uint16, b, t, batches int) (loss float64, done int, err error) {
	switch {
	case b < 1 || t < 1 || batches < 1:
		return 0, 0, fmt.Errorf("gpt: EvalSequential: batch size %d, sequence length %d and batches %d must be at least 1", b, t, batches)
	case t > m.Config.BlockSize:
		return 0, 0, fmt.Errorf("gpt: EvalSequential: sequence length %d is above the model's block size %d", t, m.Config.BlockSize)
	}
	if have := SequentialBatches(len(toks), b, t); have < batches {
		return 0, 0, fmt.Errorf("gpt: EvalSequential: %d tokens hold %d batches of %d×%d (and the next token), not %d", len(toks), have, b, t, batches)
	}
	used := toks[:batches*b*t+1]
	for i, tok := range used {
		if int(tok) >= m.Config.Vocab {
			return 0, 0, fmt.Errorf("gpt: EvalSequential: token %d at position %d is outside the model's vocabulary of %d", tok, i, m.Config.Vocab)
		}
	}
	x, y := make([]int32, b*t), make([]int32, b*t)
	var sum float64
	for k := 0; k < batches; k++ {
		if err := ctx.Err(); err != nil {
			return sum / float64(k), k, err
		}
		for i := 0; i < b; i++ {
			start := (k*b + i) * t
			for j := 0; j < t; j++ {
				x[i*t+j] = int32(used[start+j])
				y[i*t+j] = int32(used[start+j+1])
			}
		}
		loss := m.inferLoss(x, y, b, t)
		if math.IsNaN(loss) || math.IsInf(loss, 0) {
			return math.NaN(), k, fmt.Errorf("gpt: EvalSequential: the cross-entropy of batch %d is %v, %w: the model's weights or activations overflow float32", k, loss, ErrNotFinite)
		}
		sum += loss
	}
	return sum / float64(batches), batches, nil
}

// EvalBytes estimates the memory of evaluating (EvalSequential) a model
// of config c on batches of batch sequences of its block size on up to
// threads goroutines: the model (ModelBytes without the optimizer); for
// each of the inference forward's min(threads, batch) parts the
// activations of one pass (11 floats per row and width for as many of
// the part's sequences as 1,024 rows hold, at least one) and 256 rows of
// logits; per thread the fused attention's block of scores and 2 MiB for
// the products' packing and the goroutine's stack; and the batches'
// tokens.
func EvalBytes(c Config, batch, threads int) int64 {
	C, V, T := float64(c.Width), float64(c.Vocab), float64(max(c.BlockSize, 1))
	b, th := float64(max(batch, 1)), float64(max(threads, 1))
	parts := math.Min(th, b)
	rows := math.Min(math.Ceil(b/parts), math.Max(1, math.Floor(inferRows/T))) * T
	floats := 11*rows*C + 2*rows + math.Min(headRows, rows)*(V+1)
	perThread := float64(4*(64*257+128) + 2<<20)
	return saturate(float64(ModelBytes(c, false)) + parts*4*floats + th*perThread + 4*4*b*T)
}

// EvalBytesWeights is EvalBytes for a model whose matrices are in format
// f (see InferenceBytes).
func EvalBytesWeights(c Config, batch, threads int, f Weights) int64 {
	return saturate(float64(EvalBytes(c, batch, threads)) - float64(ModelBytes(c, false)) + float64(InferenceBytes(c, f)))
}

// WithBlockSize returns a new model with m's parameters and a block size
// of t (1 <= t <= m's): the position embedding is cut to its first t rows,
// as nanoGPT's crop_block_size does, for training or evaluating on
// contexts shorter than the model was made for. The new model computes
// with m's kernel implementation; m is unchanged. It errs for a model of
// low-bit weights (WithWeights), which has no float32 parameters to copy.
func (m *Model) WithBlockSize(t int) (*Model, error) {
	if t < 1 || t > m.Config.BlockSize {
		return nil, fmt.Errorf("gpt: WithBlockSize: block size %d must be in [1, %d], the model's", t, m.Config.BlockSize)
	}
	if err := m.inferenceOnly("WithBlockSize"); err != nil {
		return nil, err
	}
	cfg := m.Config
	cfg.BlockSize = t
	n, err := newModel(cfg, WithImpl(m.k))
	if err != nil {
		return nil, err
	}
	src := m.Config.Tensors()
	for i, x := range cfg.Tensors() {
		copy(n.Params[x.Offset:x.Offset+x.Size()], m.Params[src[i].Offset:])
	}
	return n, nil
}
