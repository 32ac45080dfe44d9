package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/simdgpt/simdgpt/attention"
	"github.com/simdgpt/simdgpt/gpt"
	"github.com/simdgpt/simdgpt/gpt/data"
)

// preset is one of the named shapes: gpt/bench_test.go's benchConfigs,
// the two configurations of the speed comparison with llm.c.
type preset struct {
	cfg   gpt.Config
	batch int
}

var presets = map[string]preset{
	"a": {gpt.Config{Vocab: 65, BlockSize: 64, Layers: 4, Heads: 4, Width: 128}, 12},
	"b": {gpt.Config{Vocab: 65, BlockSize: 256, Layers: 6, Heads: 6, Width: 384}, 8},
}

// options are the parsed command line.
type options struct {
	name         string // "a", "b", or "custom" when a shape flag changed the preset
	cfg          gpt.Config
	batch        int
	steps        int   // timed steps per side and round
	rounds       int   // interleaved rounds per thread count
	threads      []int // GOMAXPROCS for ours, torch's thread count of the same rows
	torchThreads []int // every thread count torch is measured at (a superset of threads)
	check        bool
	requireTorch bool
	noTorch      bool
	python       string
	ompWait      string // OMP_WAIT_POLICY of the Python processes ("" leaves it alone)
	script       string
	lr           float64
	seed         uint64
	// precision is the arithmetic of simdgpt's products (gpt.Precision);
	// PyTorch's step runs under torch.autocast for bf16.
	precision gpt.Precision

	// -decode: greedy decoding of a GPT-2-shaped model instead of training;
	// -prefill: processing a prompt from an empty context.
	decode  bool
	prefill bool
	ctxs    []int  // prompt lengths (-ctx of -decode, -prompt of -prefill)
	tokens  int    // timed decoded tokens per side, round, context and thread count
	model   string // a GPT-2 checkpoint both sides load ("": random weights)
	// weights is the format of simdgpt's matrices (gpt.Model.WithWeights);
	// PyTorch's are torchWeights(weights).
	weights gpt.Weights
	// kv is the format of simdgpt's key/value cache (-decode,
	// gpt.Model.SetKVCache).
	kv attention.KVCache
}

// usageError is a bad command line (exit status 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

const usageText = `usage: trainbench [flags]

Trains TinyGPT (package gpt) with simdgpt and, when python3 can import
torch, the same model with PyTorch (bench/torch/train_gpt.py, kept running
across rounds), in interleaved rounds (simdgpt's steps, then PyTorch's) at
each thread count, and prints ms per step, tokens/s and simdgpt's speed as a
multiple of PyTorch's with a 95% confidence interval. Both sides start from
the same weights (simdgpt's checkpoint) and draw their batches inside the
timed step. -check first runs one step on both from the same weights and
batch and compares the loss, gradients and parameters.

With -decode it instead decodes greedily with a key/value cache, GPT-2
124M's shape (or -model's checkpoint) on both sides (PyTorch:
bench/torch/gpt2_decode.py) from the same safetensors file: for each -ctx,
a prompt of that many tokens, then -tokens timed tokens; it prints
tokens/s, GB/s of weights read and the ratio. -weights bf16 or int8
converts simdgpt's matrices (PyTorch's to bf16 with either). -check then
compares the logits after the prompt and the first greedy tokens (with
low-bit weights within looser bounds).

With -prefill it instead times prompt processing (the logits after each
-prompt length, from an empty context) on the same model and file, simdgpt
with -weights and -precision, PyTorch in fp32, under bf16 autocast
(-precision bf16 on f32 weights) or with bf16 matrices (bf16 and int8
weights); -check compares the logits after each prompt and the next greedy
token. Flags of one mode only are refused in the others.

flags:
`

// parseOptions parses args (without the program name). It returns
// flag.ErrHelp after printing the usage for -h.
func parseOptions(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("trainbench", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // a bad flag is reported in one line below
	fs.Usage = func() {}
	config := fs.String("config", "a", "model and batch preset: a (4 layers, 4 heads, width 128, block 64, batch 12, vocab 65) or b (6 layers, 6 heads, width 384, block 256, batch 8, vocab 65); the shape flags change it")
	layers := fs.Int("layers", 0, fmt.Sprintf("transformer blocks, at most %d (0: the preset's; with -decode and -prefill GPT-2's 12)", gpt.MaxLayers))
	heads := fs.Int("heads", 0, fmt.Sprintf("attention heads, at most %d, dividing -width (0: the preset's)", gpt.MaxHeads))
	width := fs.Int("width", 0, fmt.Sprintf("model width C, at most %d (0: the preset's)", gpt.MaxWidth))
	block := fs.Int("block", 0, fmt.Sprintf("tokens per sequence T, at most %d (the validation part of the token stream; 0: the preset's)", maxTrainBlock))
	batch := fs.Int("batch", 0, fmt.Sprintf("sequences per step B, at most %d (0: the preset's)", gpt.MaxBatch))
	vocab := fs.Int("vocab", 0, fmt.Sprintf("vocabulary size, at most %d (0: the preset's; with -decode and -prefill GPT-2's 50257)", gpt.MaxVocab))
	fs.IntVar(&o.steps, "steps", 10, fmt.Sprintf("timed steps per side in each round, 1 to %d; -rounds × thread counts × (-steps + 1) at most the same", maxTimedSteps))
	fs.IntVar(&o.rounds, "rounds", 5, fmt.Sprintf("interleaved rounds at each thread count, 1 to %d", maxTimedSteps))
	threads := fs.String("threads", "1,2", fmt.Sprintf("comma-separated thread counts, 1 to %d each: simdgpt's GOMAXPROCS and PyTorch's set_num_threads of each row", gpt.MaxThreads))
	torchThreads := fs.String("torch-threads", "", fmt.Sprintf("more thread counts for PyTorch alone, 1 to %d each, for its best (default: those of -threads)", gpt.MaxThreads))
	fs.BoolVar(&o.check, "check", false, "first check one step against PyTorch from the same weights and batch (fails on disagreement)")
	fs.BoolVar(&o.requireTorch, "require-torch", false, "fail instead of measuring simdgpt alone when torch is missing or its version check does not answer (for CI)")
	fs.BoolVar(&o.noTorch, "no-torch", false, "measure simdgpt alone")
	fs.StringVar(&o.python, "python", defaultPython(), "the Python 3 interpreter with torch")
	fs.StringVar(&o.ompWait, "omp-wait-policy", "PASSIVE", "OMP_WAIT_POLICY for PyTorch (\"\" leaves the environment's): Debian's torch runs GNU OpenMP threads and OpenBLAS' own, and OpenMP's default spin-waiting made its two-thread steps 2-10x slower here")
	fs.StringVar(&o.script, "script", "", "path of the PyTorch script (default: bench/torch/train_gpt.py, with -decode or -prefill gpt2_decode.py, of the module, found from the working directory)")
	fs.Float64Var(&o.lr, "lr", 1e-3, fmt.Sprintf("peak learning rate, above 0 and at most %g (the schedule is gpt.DefaultTrainConfig's)", maxLR))
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the weights and the data")
	fs.BoolVar(&o.decode, "decode", false, "compare greedy decoding (GPT-2 shapes, key/value cache) instead of training")
	fs.BoolVar(&o.prefill, "prefill", false, "compare prompt processing (GPT-2 shapes: the logits after a prompt, from an empty context) instead of training")
	prompts := fs.String("prompt", "256,512", fmt.Sprintf("-prefill: comma-separated prompt lengths, each at most %d and within the model's block (GPT-2's 1024)", gpt.MaxBlockSize))
	ctxs := fs.String("ctx", "64,512", fmt.Sprintf("-decode: comma-separated prompt lengths (the context decoding starts from), each at most %d and with -tokens within the model's block (GPT-2's 1024)", gpt.MaxBlockSize))
	fs.IntVar(&o.tokens, "tokens", 32, fmt.Sprintf("-decode: timed decoded tokens per side in each round, context and thread count, 1 to %d; -rounds × contexts × thread counts × -tokens at most the same", maxTimedSteps))
	fs.StringVar(&o.model, "model", "", "-decode and -prefill: a GPT-2 checkpoint (model.safetensors or llm.c gpt2_*.bin) instead of random GPT-2-shaped weights")
	precision := fs.String("precision", "f32", "training and -prefill: arithmetic of the matrix products, f32 or bf16 (simdgpt: gpt.TrainConfig.Precision, gpt.Model.SetPrecision; PyTorch: the step, or with f32 weights the prompt, under torch.autocast(\"cpu\", torch.bfloat16)); training's -check then holds simdgpt's bf16 step to gpt's bf16 bounds against PyTorch's float32 step")
	weights := fs.String("weights", "f32", "-decode and -prefill: format of simdgpt's weight matrices, f32, bf16 or int8 (gpt.Model.WithWeights); PyTorch's are fp32 with f32 and bf16 with bf16 and int8 (eager PyTorch has no int8 peer worth comparing)")
	kvCache := fs.String("kv-cache", "f32", "-decode: format of simdgpt's key/value cache, f32 or bf16 (gpt.Model.SetKVCache: keys and values rounded to bfloat16); -check then takes bf16 weights' bounds; PyTorch's cache is in its matrices' dtype")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fmt.Fprint(stderr, usageText)
			fs.PrintDefaults()
			return o, err
		}
		msg, _, _ := strings.Cut(err.Error(), "\n")
		return o, usageError{msg + " (see trainbench -h)"}
	}
	if fs.NArg() > 0 {
		return o, usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	mode := "training"
	switch {
	case o.decode:
		mode = "-decode"
	case o.prefill:
		mode = "-prefill"
	}
	if err := checkModeFlags(fs, mode); err != nil {
		return o, err
	}
	if o.decode {
		return parseDecode(o, *layers, *vocab, *ctxs, *threads, *weights, *kvCache)
	}
	if o.prefill {
		return parsePrefill(o, *layers, *vocab, *prompts, *threads, *weights, *precision)
	}
	var err error
	if o.precision, err = gpt.ParsePrecision(*precision); err != nil {
		return o, usageError{"-precision: " + err.Error()}
	}
	p, ok := presets[*config]
	if !ok {
		return o, usageError{fmt.Sprintf("-config %q: want a or b", *config)}
	}
	o.name, o.cfg, o.batch = *config, p.cfg, p.batch
	for _, f := range []struct {
		name     string
		v, limit int
		dst      *int
	}{
		{"layers", *layers, gpt.MaxLayers, &o.cfg.Layers}, {"heads", *heads, gpt.MaxHeads, &o.cfg.Heads}, {"width", *width, gpt.MaxWidth, &o.cfg.Width},
		{"block", *block, maxTrainBlock, &o.cfg.BlockSize}, {"batch", *batch, gpt.MaxBatch, &o.batch}, {"vocab", *vocab, gpt.MaxVocab, &o.cfg.Vocab},
	} {
		if err := checkRange(f.name, f.v, 0, f.limit, " (0 keeps the preset's)"); err != nil {
			return o, err
		}
		if f.v > 0 && f.v != *f.dst {
			*f.dst = f.v
			o.name = "custom"
		}
	}
	if err := o.cfg.CheckLimits(); err != nil {
		return o, usageError{err.Error()}
	}
	if err := checkRange("steps", o.steps, 1, maxTimedSteps, ""); err != nil {
		return o, err
	}
	if err := checkRange("rounds", o.rounds, 1, maxTimedSteps, ""); err != nil {
		return o, err
	}
	if !(o.lr > 0 && o.lr <= maxLR && float32(o.lr) > 0) {
		return o, usageError{fmt.Sprintf("-lr %g: want a learning rate above 0 (as a float32) and at most %g", o.lr, maxLR)}
	}
	if o.threads, err = parseThreads("threads", *threads); err != nil {
		return o, err
	}
	if len(o.threads) == 0 {
		return o, usageError{"-threads: no thread count"}
	}
	extra, err := parseThreads("torch-threads", *torchThreads)
	if err != nil {
		return o, err
	}
	o.torchThreads = union(o.threads, extra)
	// Each factor is bounded first (at most 2^20 and gpt.MaxThreads thread
	// counts): the product cannot overflow.
	if total := int64(o.rounds) * int64(len(o.torchThreads)) * int64(o.steps+1); total > maxTimedSteps {
		return o, usageError{fmt.Sprintf("-rounds %d × %d thread counts × (-steps %d + 1) is %d steps a side, above the limit of %d", o.rounds, len(o.torchThreads), o.steps, total, maxTimedSteps)}
	}
	return o, nil
}

// maxTimedSteps bounds the steps a side of a run (rounds × thread counts ×
// steps and one untimed step), whose times are all kept, and each of
// -steps, -rounds and -tokens; with -decode it bounds the timed tokens a
// side likewise.
const maxTimedSteps = 1 << 20

// maxTrainBlock is the longest training sequence: one token fewer than
// the validation part of the token stream.
const maxTrainBlock = int(numTokens*data.ValFraction) - 1

// maxLR bounds -lr: AdamW steps of more than the parameters' scale are
// no training worth timing.
const maxLR = 1.0

// checkRange refuses v outside [lo, hi] for flag name, naming the flag,
// the value and the limits (and note, what lo means if anything).
func checkRange(name string, v, lo, hi int, note string) error {
	if v < lo || v > hi {
		return usageError{fmt.Sprintf("-%s %d: want %d to %d%s", name, v, lo, hi, note)}
	}
	return nil
}

// checkMemory refuses a run whose model, optimizer and activations would
// not fit in the memory available, before anything is allocated: the
// largest thread count's (one trainer lives at a time).
func checkMemory(o options) error {
	threads := slices.Max(o.threads)
	what := fmt.Sprintf("training %d layers of width %d, block %d, batch %d on %d threads", o.cfg.Layers, o.cfg.Width, o.cfg.BlockSize, o.batch, threads)
	return gpt.CheckMemory(what, gpt.TrainBytes(o.cfg, o.batch, threads)+2*numTokens)
}

// parseThreads parses a comma-separated list of positive thread counts,
// dropping repeats ("" is the empty list).
func parseThreads(flagName, s string) ([]int, error) {
	var out []int
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, usageError{fmt.Sprintf("-%s %q: %q is not a thread count (a positive integer)", flagName, s, f)}
		}
		if n > gpt.MaxThreads {
			return nil, usageError{fmt.Sprintf("-%s %q: %d is above the limit of %d threads", flagName, s, n, gpt.MaxThreads)}
		}
		out = union(out, []int{n})
	}
	return out, nil
}

// union returns a followed by the elements of b not in a.
func union(a, b []int) []int {
	out := append([]int(nil), a...)
	for _, x := range b {
		found := false
		for _, y := range out {
			found = found || x == y
		}
		if !found {
			out = append(out, x)
		}
	}
	return out
}

// defaultPython is /usr/bin/python3 when it exists (Debian's python3-torch
// installs there), else python3 from PATH.
func defaultPython() string {
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	return "python3"
}

// findScript returns script, or bench/torch/NAME in the nearest directory
// at or above the working directory that has it.
func findScript(script, name string) (string, error) {
	if script != "" {
		if _, err := os.Stat(script); err != nil {
			return "", err
		}
		return script, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "bench", "torch", name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("bench/torch/%s not found in the working directory or above it (run from the simdgpt module, or pass -script)", name)
		}
		dir = parent
	}
}
