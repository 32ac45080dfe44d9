package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"runtime"

	"github.com/simdgpt/simdgpt/gpt"
	"github.com/simdgpt/simdgpt/gpt/data"
	"github.com/simdgpt/simdgpt/internal/interrupt"
)

func runEval(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	ckpt := fs.String("checkpoint", "checkpoints", "checkpoint `dir`ectory or file: written by tinygpt train or convert, or GPT-2 weights (Hugging Face's model.safetensors or its directory, llm.c's gpt2_*.bin)")
	tokDir := fs.String("tokenizer_dir", "", "`dir`ectory of the BPE tokenizer; default: the checkpoint's own, or for GPT-2 weights the files beside them")
	dataPath := fs.String("data", "", "`file` to evaluate on: UTF-8 text (tokenized with the model's tokenizer: its characters, or BPE) or uint16 token ids (llm.c's format, or raw with extension .bin/.tok)")
	batch := fs.Int("batch_size", 4, "sequences per batch")
	block := fs.Int("block_size", 0, "tokens per sequence, at most the model's block size (0: the model's)")
	batches := fs.Int("batches", 0, "batches to evaluate (0: every whole batch in the file)")
	threads := fs.Int("threads", 0, "threads (GOMAXPROCS); 0: all CPUs")
	weights := fs.String("weights", "", weightsUsage)
	precision := fs.String("precision", "f32", precisionUsage)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `usage: tinygpt eval --checkpoint DIR|FILE --data FILE [--batch_size B] [--block_size T] [--batches N] [--tokenizer_dir DIR] [--weights f32|bf16|int8] [--precision f32|bf16]

Prints the model's mean cross-entropy (nats per token) and perplexity over
the first N batches of the file read in order: sequence i of the file is
its tokens [i·T, (i+1)·T), each predicting the next token; batch k is
sequences k·B to k·B+B-1. The whole file is evaluated (it is not split
into training and validation parts).

Ctrl-C or SIGTERM stops it at the end of the batch in progress (a second
signal at once) with a line on stderr giving the batches done and their
partial mean, and no result; the exit status is 130 (SIGINT) or 143
(SIGTERM).

flags:
`)
		fs.PrintDefaults()
	}
	if done, st := parseFlags(fs, args, stdout, stderr); done {
		return st
	}
	return finish(stderr, "eval", eval(*ckpt, *tokDir, *dataPath, *weights, *precision, *batch, *block, *batches, *threads, stdout, stderr))
}

func eval(ckpt, tokDir, dataPath, weights, precision string, batch, block, batches, threads int, stdout, stderr io.Writer) error {
	wf, err := parseWeights(weights)
	if err != nil {
		return err
	}
	prec, err := parsePrecision(precision)
	if err != nil {
		return err
	}
	switch {
	case dataPath == "":
		return usageError{"--data is missing: name the file to evaluate on"}
	case batch < 1 || batch > gpt.MaxBatch:
		return usageError{fmt.Sprintf("--batch_size %d must be in [1, %d]", batch, gpt.MaxBatch)}
	case ckpt == "":
		return usageError{"--checkpoint is empty: name the checkpoint or GPT-2 weights to evaluate"}
	case block < 0 || block > gpt.MaxBlockSize:
		return usageError{fmt.Sprintf("--block_size %d must be in [0, %d]", block, gpt.MaxBlockSize)}
	case batches < 0 || batches > math.MaxInt32:
		return usageError{fmt.Sprintf("--batches %d must be in [0, %d]", batches, math.MaxInt32)}
	case threads < 0 || threads > gpt.MaxThreads:
		return usageError{fmt.Sprintf("--threads %d must be in [0, %d]", threads, gpt.MaxThreads)}
	}
	w := watch("eval", stderr)
	defer w.Stop()
	if threads > 0 {
		runtime.GOMAXPROCS(threads)
	}
	lm, err := loadModel(ckpt, tokDir, "eval", wf, stderr)
	if err != nil {
		return err
	}
	if err := lm.m.SetPrecision(prec); err != nil {
		return err
	}
	cfg := lm.m.Config
	if block == 0 {
		block = cfg.BlockSize
	}
	if block > cfg.BlockSize {
		return usageError{fmt.Sprintf("--block_size %d is above the model's block size of %d", block, cfg.BlockSize)}
	}
	enc, err := lm.encoding()
	if err != nil {
		return err
	}
	if err := checkDataFile(dataPath); err != nil {
		return err
	}
	toks, err := data.ReadEncoded(dataPath, enc)
	if err != nil {
		return err
	}
	have := gpt.SequentialBatches(len(toks), batch, block)
	switch {
	case have == 0:
		return fmt.Errorf("%s: %d tokens, too few for one batch of %d×%d tokens and the next token (%d)", dataPath, len(toks), batch, block, batch*block+1)
	case batches == 0:
		batches = have
	case batches > have:
		return fmt.Errorf("%s: %d tokens hold %d batches of %d×%d tokens, not --batches %d", dataPath, len(toks), have, batch, block, batches)
	}
	evalCfg := cfg
	evalCfg.BlockSize = block
	what := fmt.Sprintf("evaluating %s with --batch_size %d on %d threads", describe(evalCfg), batch, runtime.GOMAXPROCS(0))
	if err := gpt.CheckMemory(what, gpt.EvalBytesWeights(evalCfg, batch, runtime.GOMAXPROCS(0), lm.m.Weights())); err != nil {
		return err
	}
	loss, done, err := lm.m.EvalSequentialContext(w.Context(), toks, batch, block, batches)
	if errors.Is(err, context.Canceled) {
		sig := w.Signal()
		partial := ""
		if done > 0 {
			partial = fmt.Sprintf(" (their partial mean %.6f nats per token is not the result)", loss)
		}
		fmt.Fprintf(stderr, "tinygpt eval: interrupted by %s after %d of %d batches%s\n", interrupt.Name(sig), done, batches, partial)
		return interruptedError{sig}
	}
	if errors.Is(err, gpt.ErrNotFinite) {
		return fmt.Errorf("%s on %s: %w", lm.describe(), dataPath, err)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: cross-entropy %.6f nats per token, perplexity %.4f, over %d tokens (%d batches of %d×%d) of %s\n",
		dataPath, loss, math.Exp(loss), batches*batch*block, batches, batch, block, lm.describe()+weightsNote(lm.m.Weights()))
	return nil
}

// weightsNote is what a result line adds for weights in format f: nothing
// for float32.
func weightsNote(f gpt.Weights) string {
	if f == gpt.WeightsF32 {
		return ""
	}
	return " with " + f.String() + " weights"
}
