package main

import (
	"context"
	"path/filepath"
	"runtime"
	"time"

	"github.com/simdgpt/simdgpt/gpt"
	"github.com/simdgpt/simdgpt/gpt/data"
	"github.com/simdgpt/simdgpt/gpt/rng"
)

// numTokens is the length of the token stream both sides train on.
const numTokens = 200000

// tokensFile is the training tokens' file name in the run's directory
// (raw little-endian uint16, what train_gpt.py --data reads).
const tokensFile = "train.tok"

// dataset returns uniformly random tokens below vocab drawn from seed
// (the speed of a step does not depend on the text), split as gpt/data
// splits files, and writes its training part into dir.
func dataset(vocab int, seed uint64, dir string) (*data.Dataset, error) {
	r := rng.New(seed ^ 0x746f6b656e73)
	toks := make([]uint16, numTokens)
	for i := range toks {
		toks[i] = uint16(r.Intn(vocab))
	}
	nval := int(numTokens * data.ValFraction)
	d := &data.Dataset{VocabSize: vocab, Train: toks[:numTokens-nval], Val: toks[numTokens-nval:]}
	return d, data.WriteTokens(filepath.Join(dir, tokensFile), d.Train, false)
}

// newRun returns a fresh model from seed and its trainer with
// gpt.DefaultTrainConfig for maxIters steps in precision prec, and saves its checkpoint
// (the initial weights PyTorch starts from) as dir/name.
func newRun(cfg gpt.Config, d *data.Dataset, batch, maxIters int, lr float64, seed uint64, prec gpt.Precision, dir, name string) (*gpt.Trainer, string, error) {
	m, err := gpt.New(cfg, seed)
	if err != nil {
		return nil, "", err
	}
	tc := gpt.DefaultTrainConfig(batch, maxIters, float32(lr), seed)
	tc.Precision = prec
	tr, err := gpt.NewTrainer(m, d, tc)
	if err != nil {
		return nil, "", err
	}
	path := filepath.Join(dir, name)
	if err := tr.Save(path, nil); err != nil {
		return nil, "", err
	}
	return tr, path, nil
}

// runOurs times n training steps at the current GOMAXPROCS and returns
// their milliseconds; once ctx is done it stops before the next step and
// returns ctx's error.
func runOurs(ctx context.Context, tr *gpt.Trainer, n int) ([]float64, error) {
	ms := make([]float64, n)
	for i := range ms {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t0 := time.Now()
		tr.TrainStep()
		ms[i] = float64(time.Since(t0).Nanoseconds()) / 1e6
	}
	return ms, nil
}

// stepFlops counts the floating-point operations of one training step's
// matrix products: forward 24·N·C² per layer (QKV, projection, MLP), the
// causal attention 2·B·T(T+1)·C per layer (scores and P·V over the visible
// keys only), the LM head 2·N·C·V; backward twice the forward. Copied from
// gpt/bench_test.go (stepFlops), where BenchmarkTrainStep reports %peak
// with it.
func stepFlops(c gpt.Config, batch int) float64 {
	n, C, T := float64(batch*c.BlockSize), float64(c.Width), float64(c.BlockSize)
	fwd := float64(c.Layers)*(24*n*C*C+2*float64(batch)*T*(T+1)*C) + 2*n*C*float64(c.Vocab)
	return 3 * fwd
}

// withProcs runs fn with GOMAXPROCS set to n and restores it.
func withProcs(n int, fn func()) {
	old := runtime.GOMAXPROCS(n)
	defer runtime.GOMAXPROCS(old)
	fn()
}
