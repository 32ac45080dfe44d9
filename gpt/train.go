package gpt

import (
	"context"
	"fmt"

	"github.com/simdgpt/simdgpt/gpt/data"
	"github.com/simdgpt/simdgpt/gpt/rng"
)

// TrainConfig holds the training settings that, with the model, the
// optimizer state and the batch generator's state, determine a run; it is
// saved in checkpoints so a resumed run continues exactly.
type TrainConfig struct {
	BatchSize   int     `json:"batch_size"`
	MaxIters    int     `json:"max_iters"` // total optimizer steps
	LR          float32 `json:"lr"`        // peak learning rate
	MinLR       float32 `json:"min_lr"`    // learning rate at the end of the cosine
	Warmup      int     `json:"warmup"`    // warm-up steps
	WeightDecay float32 `json:"weight_decay"`
	ClipNorm    float32 `json:"clip_norm"`
	Seed        uint64  `json:"seed"`
	// Data names the training data (a path, or "" for the built-in task);
	// a resumed run checks it.
	Data string `json:"data"`
	// Precision is the arithmetic of the matrix products (see Precision):
	// NewTrainer sets it on the model. Checkpoints record it; the
	// parameters and optimizer state are float32 in either, so a run may
	// resume in the other precision.
	Precision Precision `json:"precision,omitempty"`
}

// DefaultTrainConfig fills the schedule from the essentials: warm-up over
// 5% of the steps (at most 100), cosine down to lr/10, weight decay 0.1,
// clipping at 1.
func DefaultTrainConfig(batch, maxIters int, lr float32, seed uint64) TrainConfig {
	return TrainConfig{BatchSize: batch, MaxIters: maxIters, LR: lr, MinLR: lr / 10,
		Warmup: min(100, max(1, maxIters/20)), WeightDecay: 0.1, ClipNorm: 1, Seed: seed}
}

// Trainer runs optimizer steps of a model on a dataset.
type Trainer struct {
	Model *Model
	Opt   *AdamW
	Cfg   TrainConfig
	Data  *data.Dataset
	// RNG draws the training batches; its state is saved in checkpoints.
	RNG *rng.RNG

	x, y   []int32
	ex, ey []int32
}

// batchSeed and evalSeed derive the batch and evaluation generators from
// the run's seed (the model's initialisation uses the seed itself).
func batchSeed(seed uint64) uint64 { return seed ^ 0x6261746368657321 }
func evalSeed(seed uint64) uint64  { return seed ^ 0x6576616c75617465 }

// NewTrainer returns a trainer for m on d with a fresh optimizer.
func NewTrainer(m *Model, d *data.Dataset, cfg TrainConfig) (*Trainer, error) {
	if err := m.inferenceOnly("NewTrainer"); err != nil {
		return nil, err
	}
	if cfg.BatchSize < 1 || cfg.BatchSize > MaxBatch || cfg.MaxIters < 1 {
		return nil, fmt.Errorf("gpt: NewTrainer: batch size %d must be in [1, %d] and max iterations %d at least 1", cfg.BatchSize, MaxBatch, cfg.MaxIters)
	}
	if d.VocabSize > m.Config.Vocab {
		return nil, fmt.Errorf("gpt: the data has %d tokens, the model's vocabulary only %d", d.VocabSize, m.Config.Vocab)
	}
	if len(d.Train) < m.Config.BlockSize+1 || len(d.Val) < m.Config.BlockSize+1 {
		return nil, fmt.Errorf("gpt: %d training and %d validation tokens; each needs at least block size + 1 = %d", len(d.Train), len(d.Val), m.Config.BlockSize+1)
	}
	// The optimizer (two moments and the decay mask) and four batches.
	n := cfg.BatchSize * m.Config.BlockSize
	if err := CheckMemory(fmt.Sprintf("gpt: NewTrainer: the optimizer and batches of %d×%d tokens", cfg.BatchSize, m.Config.BlockSize), 9*int64(len(m.Params))+16*int64(n)); err != nil {
		return nil, err
	}
	if err := m.SetPrecision(cfg.Precision); err != nil {
		return nil, fmt.Errorf("gpt: NewTrainer: %v", err)
	}
	opt := NewAdamW(len(m.Params), m.Config.DecaySpans())
	opt.WeightDecay, opt.ClipNorm, opt.Kernels = cfg.WeightDecay, cfg.ClipNorm, m.Impl()
	return &Trainer{Model: m, Opt: opt, Cfg: cfg, Data: d, RNG: rng.New(batchSeed(cfg.Seed)),
		x: make([]int32, n), y: make([]int32, n), ex: make([]int32, n), ey: make([]int32, n)}, nil
}

// Schedule is the learning-rate schedule of the run.
func (t *Trainer) Schedule() LRSchedule {
	return LRSchedule{Max: t.Cfg.LR, Min: t.Cfg.MinLR, Warmup: t.Cfg.Warmup, Total: t.Cfg.MaxIters}
}

// Step returns the number of optimizer steps taken.
func (t *Trainer) Step() int { return t.Opt.Step }

// TrainStep draws a batch, runs forward and backward and updates the
// parameters; it returns the batch's loss (before the update).
func (t *Trainer) TrainStep() float64 {
	T := t.Model.Config.BlockSize
	data.Batch(t.RNG, t.Data.Train, t.Cfg.BatchSize, T, t.x, t.y)
	loss := t.Model.Forward(t.x, t.y, t.Cfg.BatchSize, T)
	t.Model.Backward()
	t.Opt.Update(t.Model.Params, t.Model.Grads, t.Schedule().At(t.Opt.Step))
	return loss
}

// Eval returns the mean loss over iters batches of split (the validation or
// training tokens). The batches come from a generator reset on every call,
// so every evaluation of a run sees the same batches and training is not
// disturbed. It panics, naming the argument, if split has fewer than
// BlockSize+1 tokens.
func (t *Trainer) Eval(split []uint16, iters int) float64 {
	loss, _ := t.EvalContext(context.Background(), split, iters)
	return loss
}

// EvalContext is Eval that checks ctx before each batch: once ctx is done
// it returns ctx's error (the evaluation is incomplete; the loss returned
// is the mean over the batches it ran, NaN for none). The result of an
// evaluation that completes is Eval's, bit for bit.
func (t *Trainer) EvalContext(ctx context.Context, split []uint16, iters int) (float64, error) {
	T := t.Model.Config.BlockSize
	if len(split) <= T {
		panic(fmt.Sprintf("gpt.Trainer.Eval: len(split) = %d, need at least BlockSize+1 = %d", len(split), T+1))
	}
	r := rng.New(evalSeed(t.Cfg.Seed))
	var s float64
	for i := 0; i < iters; i++ {
		if err := ctx.Err(); err != nil {
			return s / float64(i), err
		}
		data.Batch(r, split, t.Cfg.BatchSize, T, t.ex, t.ey)
		s += t.Model.Forward(t.ex, t.ey, t.Cfg.BatchSize, T)
	}
	return s / float64(max(iters, 1)), nil
}
