package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

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

	// -decode: greedy decoding of a GPT-2-shaped model instead of training.
	decode bool
	ctxs   []int  // prompt lengths
	tokens int    // timed decoded tokens per side, round, context and thread count
	model  string // a GPT-2 checkpoint both sides load ("": random weights)
	// weights is the format of simdgpt's matrices (gpt.Model.WithWeights);
	// PyTorch's are torchWeights(weights).
	weights gpt.Weights
}

// usageError is a bad command line (exit status 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

const usageText = `usage: trainbench [flags]

Trains TinyGPT (package gpt) with simdgpt and, when python3 can import
torch, the same model with PyTorch (bench/torch/train_gpt.py, kept running
across rounds), in interleaved rounds (simdgpt's steps, then PyTorch's) at
each thread count, and prints ms per step, tokens/s and simdgpt's speed as a
multiple of PyTorch's with a 95%% confidence interval. Both sides start from
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
low-bit weights within looser bounds). Flags of one mode only are refused
in the other.

flags:
`

// parseOptions parses args (without the program name). It returns
// flag.ErrHelp after printing the usage for -h.
func parseOptions(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("trainbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), usageText)
		fs.PrintDefaults()
	}
	config := fs.String("config", "a", "model and batch preset: a (4 layers, 4 heads, width 128, block 64, batch 12, vocab 65) or b (6 layers, 6 heads, width 384, block 256, batch 8, vocab 65); the shape flags change it")
	layers := fs.Int("layers", 0, "transformer blocks (0: the preset's)")
	heads := fs.Int("heads", 0, "attention heads (0: the preset's)")
	width := fs.Int("width", 0, "model width C (0: the preset's)")
	block := fs.Int("block", 0, "tokens per sequence T (0: the preset's)")
	batch := fs.Int("batch", 0, "sequences per step B (0: the preset's)")
	vocab := fs.Int("vocab", 0, "vocabulary size (0: the preset's)")
	fs.IntVar(&o.steps, "steps", 10, "timed steps per side in each round")
	fs.IntVar(&o.rounds, "rounds", 5, "interleaved rounds at each thread count")
	threads := fs.String("threads", "1,2", "comma-separated thread counts: simdgpt's GOMAXPROCS and PyTorch's set_num_threads of each row")
	torchThreads := fs.String("torch-threads", "", "more thread counts for PyTorch alone, for its best (default: those of -threads)")
	fs.BoolVar(&o.check, "check", false, "first check one step against PyTorch from the same weights and batch (fails on disagreement)")
	fs.BoolVar(&o.requireTorch, "require-torch", false, "fail instead of measuring simdgpt alone when torch is missing (for CI)")
	fs.BoolVar(&o.noTorch, "no-torch", false, "measure simdgpt alone")
	fs.StringVar(&o.python, "python", defaultPython(), "the Python 3 interpreter with torch")
	fs.StringVar(&o.ompWait, "omp-wait-policy", "PASSIVE", "OMP_WAIT_POLICY for PyTorch (\"\" leaves the environment's): Debian's torch runs GNU OpenMP threads and OpenBLAS' own, and OpenMP's default spin-waiting made its two-thread steps 2-10x slower here")
	fs.StringVar(&o.script, "script", "", "path of the PyTorch script (default: bench/torch/train_gpt.py, with -decode gpt2_decode.py, of the module, found from the working directory)")
	fs.Float64Var(&o.lr, "lr", 1e-3, "peak learning rate (the schedule is gpt.DefaultTrainConfig's)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the weights and the data")
	fs.BoolVar(&o.decode, "decode", false, "compare greedy decoding (GPT-2 shapes, key/value cache) instead of training")
	ctxs := fs.String("ctx", "64,512", "-decode: comma-separated prompt lengths (the context decoding starts from)")
	fs.IntVar(&o.tokens, "tokens", 32, "-decode: timed decoded tokens per side in each round, context and thread count")
	fs.StringVar(&o.model, "model", "", "-decode: a GPT-2 checkpoint (model.safetensors or llm.c gpt2_*.bin) instead of random GPT-2-shaped weights")
	weights := fs.String("weights", "f32", "-decode: format of simdgpt's weight matrices, f32, bf16 or int8 (gpt.Model.WithWeights); PyTorch's are fp32 with f32 and bf16 with bf16 and int8 (eager PyTorch has no int8 peer worth comparing)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	if err := checkModeFlags(fs, o.decode); err != nil {
		return o, err
	}
	if o.decode {
		return parseDecode(o, *layers, *vocab, *ctxs, *threads, *weights)
	}
	p, ok := presets[*config]
	if !ok {
		return o, usageError{fmt.Sprintf("-config %q: want a or b", *config)}
	}
	o.name, o.cfg, o.batch = *config, p.cfg, p.batch
	for _, f := range []struct {
		name string
		v    int
		dst  *int
	}{
		{"layers", *layers, &o.cfg.Layers}, {"heads", *heads, &o.cfg.Heads}, {"width", *width, &o.cfg.Width},
		{"block", *block, &o.cfg.BlockSize}, {"batch", *batch, &o.batch}, {"vocab", *vocab, &o.cfg.Vocab},
	} {
		switch {
		case f.v < 0:
			return o, usageError{fmt.Sprintf("-%s %d: must be positive (0 keeps the preset's)", f.name, f.v)}
		case f.v > 0 && f.v != *f.dst:
			*f.dst = f.v
			o.name = "custom"
		}
	}
	if err := o.cfg.CheckLimits(); err != nil {
		return o, usageError{err.Error()}
	}
	if o.batch > gpt.MaxBatch {
		return o, usageError{fmt.Sprintf("-batch %d is above the limit of %d", o.batch, gpt.MaxBatch)}
	}
	if nval := int(numTokens * data.ValFraction); o.cfg.BlockSize >= nval {
		return o, usageError{fmt.Sprintf("-block %d: the token stream's validation part has %d tokens, room for blocks of at most %d", o.cfg.BlockSize, nval, nval-1)}
	}
	if o.steps < 1 || o.rounds < 1 {
		return o, usageError{fmt.Sprintf("-steps %d and -rounds %d must be at least 1", o.steps, o.rounds)}
	}
	if o.steps > maxTimedSteps || o.rounds > maxTimedSteps {
		return o, usageError{fmt.Sprintf("-steps %d and -rounds %d must be at most %d", o.steps, o.rounds, maxTimedSteps)}
	}
	if !(o.lr > 0) {
		return o, usageError{fmt.Sprintf("-lr %g must be positive", o.lr)}
	}
	var err error
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
	if total := int64(o.rounds) * int64(len(o.torchThreads)) * int64(o.steps+1); total > maxTimedSteps {
		return o, usageError{fmt.Sprintf("-rounds %d × %d thread counts × (-steps %d + 1) is %d steps a side, above the limit of %d", o.rounds, len(o.torchThreads), o.steps, total, maxTimedSteps)}
	}
	return o, nil
}

// maxTimedSteps bounds the steps a side of a run (rounds × thread counts ×
// steps and one untimed step), whose times are all kept.
const maxTimedSteps = 1 << 20

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
