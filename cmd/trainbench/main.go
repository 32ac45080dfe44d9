// Command trainbench compares the speed of a TinyGPT training step (package
// gpt: batch drawing, forward, backward and AdamW) with the same model
// trained by PyTorch, bench/torch/train_gpt.py, run by /usr/bin/python3
// when it can import torch (Debian: apt-get install python3-torch).
//
// Both sides start from the same weights (gpt's checkpoint, which the
// script reads) and train on the same token stream, drawing their batches
// inside the timed step. They run in interleaved rounds at each thread
// count: simdgpt's steps (GOMAXPROCS set in this process), then PyTorch's
// (torch.set_num_threads and, for Debian's torch, OpenBLAS' thread count,
// in one Python process kept running so its start-up is never timed;
// OMP_WAIT_POLICY=PASSIVE unless -omp-wait-policy says otherwise). It prints the CPU, the FMA peak of the
// kernels, and a table of ms per step (median, min–max), tokens/s,
// simdgpt's speed as a multiple of PyTorch's with a 95% confidence interval
// (bench.Speedup over all timed steps) and simdgpt's GFLOP/s as a share of
// the FMA peak. Without torch it says so in one line and measures simdgpt
// alone.
//
// The FMA peak is measured as package bench measures every percent of
// peak: the kernels' peak loop, on as many goroutines as threads, is
// sampled before the first round, between rounds (a sixteenth of the
// steps' time) and after the last; the peak is the largest sample, so that
// a sample taken in a slow moment cannot lower it, and the shares are
// computed against it once all rounds are done. A share above 100% would
// mean the peak loop is not at the machine's peak (a bug): it is printed
// as it is, followed by "!", with a note under the table.
//
// With -check it first runs one step on both sides from the same weights
// and batch, and the script compares the loss, the gradients and the
// parameters after the AdamW step within its stated tolerances
// (bench/torch/README.md); a disagreement is a failure (exit status 1).
//
// With -decode it compares greedy decoding with a key/value cache instead
// (gpt.Sampler against bench/torch/gpt2_decode.py, eager PyTorch, fp32):
// GPT-2 124M's shape with random weights (-layers and -vocab change it),
// or a GPT-2 checkpoint given with -model, written to or read from one
// safetensors file both sides load. For each prompt length of -ctx (random
// tokens), each side prefills the prompt untimed and then decodes -tokens
// tokens, each timed from having one token to having the next; the rounds
// interleave the sides at each context and thread count. The table gives
// ms/token, tokens/s, the GB/s of weights read (gpt.TokenWeightBytes per
// token over the median token time) as a share of the read bandwidth of
// as many cores as threads (bench.ReadRate: the kernels' Sum and a
// prefetching read loop streaming a buffer of 8× the L3, at least
// 256 MiB, split between that many goroutines, measured after each
// round), simdgpt's share also round by round (each round's median token
// against the bandwidth measured after it: median and range over the
// rounds, which a machine whose speed drifts moves less), and simdgpt's
// speed as a multiple
// of PyTorch's with a 95% confidence interval; then how many leading
// greedy tokens the two sides agreed on in every round. -decode -check
// first requires, for each prompt, the logits of the next token to agree
// within 1e-4 of the largest |logit| and the next 9 greedy tokens to be
// the same.
//
// -decode -weights bf16 or int8 decodes with simdgpt's matrices converted
// (gpt.Model.WithWeights: the blocks' four projections and the LM head),
// their bytes counted in that format. PyTorch then runs its matrices in
// bf16 (gpt2_decode.py --dtype bf16), for int8 too: eager PyTorch has no
// int8 peer worth comparing, and a line says so. -check then compares
// within looser bounds, both sides differing by their rounding of the
// same float32 file: the logits after the prompt within 2.5% (bf16) or 5%
// (int8) of the largest |logit|, and the greedy tokens step by step,
// PyTorch given simdgpt's context: simdgpt's token at most twice that
// below PyTorch's largest logit at every step, and PyTorch's own choice at
// 5 or more of the 9.
//
// With -prefill it compares prompt processing instead, on the same GPT-2
// shapes and file as -decode: for each -prompt length (random tokens), the
// logits of the token after a prompt from an empty context (gpt.Sampler's
// Logits against gpt2_decode.py's "prefill"), one timed prompt a side per
// round, at each thread count, after one untimed prompt of each length.
// -weights and -precision (gpt.Model.WithWeights and SetPrecision) choose
// simdgpt's matrices and arithmetic; PyTorch runs fp32, fp32 weights under
// torch.autocast("cpu", torch.bfloat16) for -precision bf16 on float32
// weights, and bf16 matrices for bf16 and int8 weights (OMP_NUM_THREADS
// and OPENBLAS_NUM_THREADS set to the largest thread count as well). The
// table gives wall ms, tokens/s and tokens per CPU-second (each side's
// process CPU time) and simdgpt's speed: over wall times with a 95%
// confidence interval, and per round over CPU times. -prefill -check first
// requires the logits after each prompt to agree within -decode -check's
// bounds (bf16 compute on float32 weights within bf16 weights' 2.5%) and
// the next greedy token to agree (the same in float32, else within twice
// the bound of PyTorch's largest logit).
//
// A flag outside its limit (stated in -h: thread counts at most 1024,
// gpt.MaxThreads; the model's sizes within gpt's limits; -steps, -rounds
// and -tokens, and the steps or timed tokens a side they multiply to, at
// most 2^20) is refused before anything runs in one line naming the flag,
// its value and the limit, exit status 2; a run that would not fit in
// the memory available is refused likewise with exit status 1.
//
// Every wait on a Python process has a deadline: 3 minutes for the torch
// version check; for a script's ready line 5 minutes and the time to read
// its weights at 10 MB/s; for each reply 2 minutes and the time of its
// work at 0.1 GFLOP/s; 30 s for its exit. Past it the process and its
// children (its process group) are killed and the command ends with one
// line naming what it waited for and how long, exit status 1; only a
// version check that does not answer, without -require-torch, is instead
// the reason printed for measuring simdgpt alone.
//
// Ctrl-C or SIGTERM stops the comparison at the end of simdgpt's step in
// progress, ends the Python process at once, prints one line and no table,
// and exits with status 130 (SIGINT) or 143 (SIGTERM).
//
//	go run ./cmd/trainbench -config a -rounds 5 -steps 10 -threads 1,2
//	go run ./cmd/trainbench -config a -steps 3 -rounds 1 -check -require-torch
//	go run ./cmd/trainbench -decode -ctx 64,512 -tokens 32 -rounds 5 -threads 1,2
//	go run ./cmd/trainbench -decode -weights int8 -ctx 64,512 -tokens 32 -rounds 5 -threads 1,2
//	go run ./cmd/trainbench -prefill -precision bf16 -prompt 256,512 -rounds 5 -threads 1 -check
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/simdgpt/simdgpt/bench"
	"github.com/simdgpt/simdgpt/internal/interrupt"
	"github.com/simdgpt/simdgpt/kernels"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// noTorchLine is what is printed when torch cannot be imported.
const noTorchLine = "python3 with torch not found (apt-get install python3-torch); measuring simdgpt alone"

// run is the command: it returns the exit status (0 done, 1 failure,
// 2 bad command line, 130 or 143 stopped by SIGINT or SIGTERM).
func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseOptions(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		var u usageError
		if errors.As(err, &u) {
			fmt.Fprintln(stderr, "trainbench:", err)
		}
		return 2
	}
	w := interrupt.Start(nil) // the first signal stops everything promptly
	defer w.Stop()
	if err := compare(w.Context(), o, stdout, stderr); err != nil {
		if sig := w.Signal(); sig != nil && errors.Is(err, context.Canceled) {
			fmt.Fprintf(stderr, "trainbench: interrupted by %s: no table printed\n", interrupt.Name(sig))
			return interrupt.ExitStatus(sig)
		}
		fmt.Fprintln(stderr, "trainbench:", err)
		return 1
	}
	return 0
}

// lockedWriter serialises writes to w: the Python processes' error output
// is copied into it by exec's goroutines while the rounds print progress.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// compare runs the whole comparison; once ctx is done it stops at the
// next step and returns an error wrapping ctx's.
func compare(ctx context.Context, o options, stdout, stderr io.Writer) error {
	if _, isFile := stderr.(*os.File); !isFile {
		stderr = &lockedWriter{w: stderr}
	}
	if o.decode {
		return compareDecode(ctx, o, stdout, stderr)
	}
	if o.prefill {
		return comparePrefill(ctx, o, stdout, stderr)
	}
	if err := checkMemory(o); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "trainbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	d, err := dataset(o.cfg.Vocab, o.seed, dir)
	if err != nil {
		return err
	}

	script, version, err := findTorch(ctx, o, "train_gpt.py", stdout)
	if err != nil {
		return err
	}
	haveTorch := script != ""

	impl := kernels.Default()
	cpu := kernels.CPU().Name
	if cpu == "" {
		cpu = cpuModel()
	}
	fmt.Fprintf(stdout, "cpu: %s (%d logical CPUs); kernels %s\n", cpu, runtime.NumCPU(), impl.Name())
	cfg := o.cfg
	fmt.Fprintf(stdout, "model: config %s: %d layers, %d heads, width %d, block %d, batch %d, vocab %d; %d parameters, %.3f GFLOP per step (gpt's stepFlops)\n",
		o.name, cfg.Layers, max(cfg.Heads, 1), cfg.Width, cfg.BlockSize, o.batch, cfg.Vocab, cfg.NumParams(), stepFlops(cfg, o.batch)/1e9)
	if haveTorch {
		fmt.Fprintf(stdout, "torch: %s (%s %s)\n", version, o.python, script)
	}

	if o.check && haveTorch {
		res, err := runCheck(ctx, o, o.python, script, d, dir, stderr)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		for _, l := range res.lines {
			fmt.Fprintln(stdout, l)
		}
		if err != nil {
			return err
		}
		if !res.pass {
			return errors.New("simdgpt and PyTorch disagree on the first step (the check lines above)")
		}
	}

	r, err := measure(ctx, o, d, dir, script, stderr)
	if err != nil {
		return err
	}
	var peaks []string
	for _, n := range o.threads {
		if k := (bench.PeakKey{ISA: r.isa, Threads: n}); r.peaks.Max(k) > 0 {
			peaks = append(peaks, fmt.Sprintf("%d thread(s) %s", n, r.peaks.Describe(k)))
		}
	}
	if len(peaks) > 0 {
		loop := "FMAPeakLoop"
		if strings.HasSuffix(r.isa, bench.BF16PeakSuffix) {
			loop = "BF16PeakLoop"
		}
		fmt.Fprintf(stdout, "%s (%s %s on as many goroutines as threads, sampled before, between and after the rounds; the largest sample): %s\n", r.peakName, impl.Name(), loop, strings.Join(peaks, ", "))
	} else {
		fmt.Fprintf(stdout, "%s: none (kernels %s have no such peak loop)\n", r.peakName, impl.Name())
	}
	if r.torch != nil {
		how := "torch.set_num_threads (its BLAS is not OpenBLAS: its threads are its own)"
		if r.blas == "openblas" {
			how = "torch.set_num_threads and openblas_set_num_threads"
		}
		policy := o.ompWait
		if policy == "" {
			policy = "as in the environment"
		}
		fmt.Fprintf(stdout, "torch threads: %s; OMP_WAIT_POLICY %s\n", how, policy)
	}
	fmt.Fprintf(stdout, "%d rounds × %d steps a side at each thread count, interleaved; ms/step median (min–max) over all steps; speed = torch's median / simdgpt's, 95%% CI of bench.Speedup\n\n", o.rounds, o.steps)
	r.writeTable(stdout)
	return nil
}

// cpuModel returns the "model name" line of /proc/cpuinfo, or "unknown".
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	return "unknown"
}
