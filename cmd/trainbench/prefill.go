package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/simdgpt/simdgpt/attention"
	"github.com/simdgpt/simdgpt/gpt"
	"github.com/simdgpt/simdgpt/kernels"
)

// Tolerance of -prefill -check with bf16 compute on float32 weights
// (-precision bf16 -weights f32) against PyTorch under bf16 autocast,
// relative to the largest |logit|. Both round the same float32 matrices
// and the activations entering each product to bfloat16 (to nearest even)
// and sum in float32, but autocast also runs attention's products in bf16
// and rounds every product's output, the logits included, to bf16, a
// relative 2⁻⁹ each, where simdgpt keeps its outputs and its attention in
// float32: the bound of bf16 weights, decodeLogitTolBF16, covers that
// (bench/torch/README.md gives the differences measured).
const prefillLogitTolBF16 = decodeLogitTolBF16

// prefillTol is the logits tolerance of -prefill -check for simdgpt's
// weights in format f and precision p.
func prefillTol(f gpt.Weights, p gpt.Precision) float64 {
	if f == gpt.WeightsF32 && p == gpt.PrecisionBF16 {
		return prefillLogitTolBF16
	}
	return decodeLogitTolOf(f, attention.KVFloat32)
}

// torchPrefillArgs are gpt2_decode.py's arguments choosing its peer of
// simdgpt's weights f and precision p: fp32 for float32 products; fp32
// weights under bf16 autocast for bf16 compute on float32 weights (what a
// PyTorch user turns on for a float32 model); bf16 matrices for bf16 and
// int8 weights (as -decode). The second result describes the peer.
func torchPrefillArgs(f gpt.Weights, p gpt.Precision) ([]string, string) {
	switch {
	case f != gpt.WeightsF32:
		return []string{"--dtype", "bf16"}, "bf16 matrices (--dtype bf16)"
	case p == gpt.PrecisionBF16:
		return []string{"--dtype", "fp32", "--autocast"}, "fp32 weights under torch.autocast(\"cpu\", torch.bfloat16) (--autocast)"
	}
	return []string{"--dtype", "fp32"}, "fp32 (--dtype fp32)"
}

// parsePrefill finishes parseOptions for -prefill: the model's shape, as
// -decode's, the prompt lengths, the thread counts, the weights' format
// and the precision.
func parsePrefill(o options, layers, vocab int, prompts, threads, weights, precision string) (options, error) {
	var err error
	if o.weights, err = gpt.ParseWeights(weights); err != nil {
		return o, usageError{fmt.Sprintf("-weights %q: want f32, bf16 or int8", weights)}
	}
	if o.precision, err = gpt.ParsePrecision(precision); err != nil {
		return o, usageError{fmt.Sprintf("-precision %q: want f32 or bf16", precision)}
	}
	if o, err = gpt2Shape(o, layers, vocab); err != nil {
		return o, err
	}
	if err := checkRange("rounds", o.rounds, 1, maxTimedSteps, ""); err != nil {
		return o, err
	}
	if o.ctxs, err = parseCounts("prompt", prompts, "prompt length", gpt.MaxBlockSize); err != nil {
		return o, err
	}
	if len(o.ctxs) == 0 {
		return o, usageError{"-prompt: no prompt length"}
	}
	for _, c := range o.ctxs {
		if o.model == "" && c > o.cfg.BlockSize {
			return o, usageError{fmt.Sprintf("-prompt %d: longer than GPT-2's %d tokens", c, o.cfg.BlockSize)}
		}
	}
	if o.threads, err = parseThreads("threads", threads); err != nil {
		return o, err
	}
	if len(o.threads) == 0 {
		return o, usageError{"-threads: no thread count"}
	}
	o.torchThreads = o.threads
	// Every factor is bounded first (2^20 rounds, 2^15 prompt lengths,
	// 2^10 thread counts): the product cannot overflow.
	if total := int64(o.rounds) * int64(len(o.ctxs)) * int64(len(o.threads)); total > maxTimedSteps {
		return o, usageError{fmt.Sprintf("-rounds %d × %d prompt lengths × %d thread counts is %d timed prompts a side, above the limit of %d", o.rounds, len(o.ctxs), len(o.threads), total, maxTimedSteps)}
	}
	return o, nil
}

// prefillMemory is the memory of a -prefill run before anything is
// allocated: decodeMemory's without the bandwidth buffer, and with torch
// a bf16 copy of its matrices (half the float32 weights), which bf16
// matrices keep and autocast makes anew in every pass.
func prefillMemory(o options) int64 {
	p := 4 * int64(o.cfg.NumParams())
	need := gpt.SampleBytesWeights(o.cfg, o.weights) + 2*p
	if o.weights != gpt.WeightsF32 {
		need += gpt.InferenceBytes(o.cfg, gpt.WeightsF32)
	}
	if !o.noTorch {
		need += 2*p + p/2
	}
	return need
}

// prefillTimes are the wall and CPU milliseconds of timed prompts.
type prefillTimes struct{ ms, cpu []float64 }

func (t *prefillTimes) add(o prefillTimes) {
	t.ms = append(t.ms, o.ms...)
	t.cpu = append(t.cpu, o.cpu...)
}

// prefillResults are the measurements of a -prefill run: per prompt
// length and thread count, one timed prompt a side and round.
type prefillResults struct {
	prompts, threads []int
	ours, torch      map[decodeKey]*prefillTimes // torch nil when not measured
}

// prefillOurs times s.Logits over prompt, from an empty context: wall
// and CPU (the process's, getrusage) milliseconds.
func prefillOurs(s *gpt.Sampler, prompt []int32) prefillTimes {
	c0 := processCPU()
	t0 := time.Now()
	s.Logits(prompt)
	ms := float64(time.Since(t0).Nanoseconds()) / 1e6
	cpu := float64((processCPU() - c0).Nanoseconds()) / 1e6
	return prefillTimes{ms: []float64{ms}, cpu: []float64{cpu}}
}

// prefill asks the script to process prompt n times from an empty
// context, each timed.
func (p *torchProc) prefill(prompt []int32, n int) (prefillTimes, error) {
	reply, err := p.request(fmt.Sprintf("prefill %d %s", n, tokenList(prompt)), float64(n)*float64(len(prompt))*p.unitFlops)
	if err != nil {
		return prefillTimes{}, err
	}
	t, err := parsePrefillReply(reply, n)
	if err != nil {
		return prefillTimes{}, fmt.Errorf("%s: %v", p.name, err)
	}
	return t, nil
}

// parsePrefillReply parses "ms M1 ... MN cpu C1 ... CN" (every wall time
// above 0, every CPU time at least 0).
func parsePrefillReply(line string, n int) (prefillTimes, error) {
	msPart, cpuPart, ok := strings.Cut(line, " cpu ")
	if !ok {
		return prefillTimes{}, fmt.Errorf("expected \"ms\", %d timings, \"cpu\" and %d more, got %q", n, n, line)
	}
	ms, err := parseMs(msPart, n)
	if err != nil {
		return prefillTimes{}, err
	}
	f := strings.Fields(cpuPart)
	if len(f) != n {
		return prefillTimes{}, fmt.Errorf("expected %d CPU timings, got %q", n, line)
	}
	cpu := make([]float64, n)
	for i, s := range f {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v >= 0) || math.IsInf(v, 0) {
			return prefillTimes{}, fmt.Errorf("bad CPU timing %q in %q", s, line)
		}
		cpu[i] = v
	}
	return prefillTimes{ms: ms, cpu: cpu}, nil
}

// prefillCheck compares, for every prompt, the logits of the token after
// it within tol of the largest |logit|, and the token greedy decoding
// would pick: with tol 1e-4 (float32) the same on both sides, else
// simdgpt's at most 2·tol of the largest |logit| below PyTorch's largest
// logit. It returns the report lines and whether all agree.
func prefillCheck(s *gpt.Sampler, tp *torchProc, prompts map[int][]int32, lengths []int, dir string, vocab int, tol float64) ([]string, bool, error) {
	var lines []string
	pass := true
	path := filepath.Join(dir, "logits.f32")
	for _, c := range lengths {
		theirs, err := tp.logits(prompts[c], path, vocab)
		if err != nil {
			return nil, false, err
		}
		ours := s.Logits(prompts[c])
		d, scale := logitsDiff(ours, theirs)
		mine, top := argmax(ours), argmax(theirs)
		gap := (float64(theirs[top]) - float64(theirs[mine])) / scale
		if math.IsNaN(gap) {
			gap = math.Inf(1)
		}
		ok := d <= tol*scale
		if tol == decodeLogitTol {
			ok = ok && mine == top
		} else {
			ok = ok && gap <= 2*tol
		}
		verdict := "ok"
		if !ok {
			verdict, pass = "FAIL", false
		}
		lines = append(lines, fmt.Sprintf("check prompt %d: logits after the prompt max|Δ| %.3g, max|logit| %.3g (%.2g of it, tol %g); next token simdgpt %d, torch %d (gap %.2g of max|logit|) %s",
			c, d, scale, d/scale, tol, mine, top, gap, verdict))
	}
	if pass {
		lines = append(lines, "check PASS")
	} else {
		lines = append(lines, "check FAIL")
	}
	return lines, pass, nil
}

// argmax is the index of the first largest of x.
func argmax(x []float32) int {
	top := 0
	for i, v := range x {
		if v > x[top] {
			top = i
		}
	}
	return top
}

// prefillEnv is torchEnv with OpenMP's and OpenBLAS' thread pools sized
// to the run's largest thread count from the start (the script also sets
// torch's and OpenBLAS' counts before each row).
func prefillEnv(o options) []string {
	n := strconv.Itoa(slices.Max(o.threads))
	return append(torchEnv(o.ompWait), "OMP_NUM_THREADS="+n, "OPENBLAS_NUM_THREADS="+n)
}

// comparePrefill is compare for -prefill.
func comparePrefill(ctx context.Context, o options, stdout, stderr io.Writer) (err error) {
	if o.model == "" {
		what := fmt.Sprintf("prompt processing with %d layers of width %d, vocabulary %d", o.cfg.Layers, o.cfg.Width, o.cfg.Vocab)
		if err := gpt.CheckMemory(what, prefillMemory(o)); err != nil {
			return err
		}
	}
	pr, err := newPeerRun(ctx, o, stdout)
	if err != nil {
		return err
	}
	defer os.RemoveAll(pr.dir)
	dir, path, source, script, version, m := pr.dir, pr.path, pr.source, pr.script, pr.version, pr.m
	if err := m.SetPrecision(o.precision); err != nil {
		return err
	}
	cfg := m.Config
	for _, c := range o.ctxs {
		if c > cfg.BlockSize {
			return fmt.Errorf("-prompt %d: longer than the model's %d tokens", c, cfg.BlockSize)
		}
	}
	prompts := randomPrompts(o, cfg.Vocab)

	impl := kernels.Default()
	cpu := kernels.CPU().Name
	if cpu == "" {
		cpu = cpuModel()
	}
	fmt.Fprintf(stdout, "cpu: %s (%d logical CPUs); kernels %s\n", cpu, runtime.NumCPU(), impl.Name())
	fmt.Fprintf(stdout, "model: %d layers, %d heads, width %d, vocab %d, block %d, tied head; %d parameters; %s; simdgpt's matrices %s, precision %s (gpt.Model.SetPrecision)\n",
		cfg.Layers, max(cfg.Heads, 1), cfg.Width, cfg.Vocab, cfg.BlockSize, cfg.NumParams(), source, weightsName(o.weights), o.precision)
	var tp *torchProc
	if script != "" {
		targs, peer := torchPrefillArgs(o.weights, o.precision)
		fmt.Fprintf(stdout, "torch: %s (%s %s %s): %s\n", version, o.python, script, strings.Join(targs, " "), peer)
		if o.weights == gpt.WeightsInt8 {
			fmt.Fprintln(stdout, int8PeerLine)
		}
		args := append([]string{path, "--heads", strconv.Itoa(max(cfg.Heads, 1))}, targs...)
		if tp, err = startTorch(ctx, o.python, script, args, prefillEnv(o), cfg.NumParams(), stderr); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		defer tp.close()
		// A prompt token's work: two FLOPs a parameter, and attention
		// over a context of up to the block.
		tp.unitFlops = 2*float64(cfg.NumParams()) + 4*float64(cfg.Layers)*float64(cfg.Width)*float64(cfg.BlockSize)
		if want := targs[1]; tp.dtype != want {
			return fmt.Errorf("%s: asked for --dtype %s, it runs %q", tp.name, want, tp.dtype)
		}
	}
	defer func() {
		if ctx.Err() != nil { // the script's failure is its killing
			err = ctx.Err()
		}
	}()
	s := m.NewSampler()
	if o.check && tp != nil {
		lines, pass, err := prefillCheck(s, tp, prompts, o.ctxs, dir, cfg.Vocab, prefillTol(o.weights, o.precision))
		if err != nil {
			return err
		}
		for _, l := range lines {
			fmt.Fprintln(stdout, l)
		}
		if !pass {
			return errors.New("simdgpt and PyTorch disagree on the logits after the prompt (the check lines above)")
		}
	}
	r := &prefillResults{prompts: o.ctxs, threads: o.threads, ours: map[decodeKey]*prefillTimes{}}
	if tp != nil {
		r.torch = map[decodeKey]*prefillTimes{}
	}
	// One untimed prompt of each length a side: the first faults in the
	// scratch and, for PyTorch, its allocator's blocks.
	for _, c := range o.ctxs {
		withProcs(o.threads[0], func() { s.Logits(prompts[c]) })
		if tp != nil {
			if err := tp.setThreads(o.threads[0]); err != nil {
				return err
			}
			if _, err := tp.prefill(prompts[c], 1); err != nil {
				return err
			}
		}
	}
	for round := 1; round <= o.rounds; round++ {
		for _, c := range o.ctxs {
			for _, n := range o.threads {
				k := decodeKey{c, n}
				var t prefillTimes
				withProcs(n, func() { t = prefillOurs(s, prompts[c]) })
				if err := ctx.Err(); err != nil {
					return err
				}
				if r.ours[k] == nil {
					r.ours[k] = &prefillTimes{}
				}
				r.ours[k].add(t)
				msg := fmt.Sprintf("round %d/%d, prompt %d, %d thread(s): simdgpt %.1f ms (%.1f CPU ms)", round, o.rounds, c, n, t.ms[0], t.cpu[0])
				if tp != nil {
					if err := tp.setThreads(n); err != nil {
						return err
					}
					tt, err := tp.prefill(prompts[c], 1)
					if err != nil {
						return err
					}
					if r.torch[k] == nil {
						r.torch[k] = &prefillTimes{}
					}
					r.torch[k].add(tt)
					msg += fmt.Sprintf(" torch %.1f ms (%.1f CPU ms)", tt.ms[0], tt.cpu[0])
				}
				fmt.Fprintln(stderr, msg)
			}
		}
	}
	if tp != nil {
		if err := tp.close(); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "torch threads: torch.set_num_threads%s; OMP_NUM_THREADS and OPENBLAS_NUM_THREADS %d; OMP_WAIT_POLICY %s\n",
			map[bool]string{true: " and openblas_set_num_threads", false: ""}[tp.blas == "openblas"], slices.Max(o.threads), orEnv(o.ompWait))
	}
	fmt.Fprintf(stdout, "%d rounds × one timed prompt a side at each length and thread count, interleaved, after one untimed prompt of each length; ms median (min–max); tokens/s and tokens/CPU-s at the medians; speed = torch's median / simdgpt's, 95%% CI of bench.Speedup over wall times; CPU speed per round = torch's CPU ms / simdgpt's in the same round, median [min–max]\n\n", o.rounds)
	r.writeTable(stdout)
	return nil
}

// orEnv is policy, or "as in the environment" for "".
func orEnv(policy string) string {
	if policy == "" {
		return "as in the environment"
	}
	return policy
}

// perTokens is tokens per second at the median of ms ("-" for none).
func perTokens(tokens int, ms []float64) string {
	if len(ms) == 0 || !(median(ms) > 0) {
		return "-"
	}
	return fmt.Sprintf("%.0f", float64(tokens)/(median(ms)/1000))
}

// roundRatios is "median [min–max]" of torch[i]/ours[i], the rounds
// paired ("-" when they cannot be, or a time is 0).
func roundRatios(ours, torch []float64) string {
	if len(ours) == 0 || len(ours) != len(torch) {
		return "-"
	}
	q := make([]float64, len(ours))
	for i := range ours {
		if !(ours[i] > 0) {
			return "-"
		}
		q[i] = torch[i] / ours[i]
	}
	return fmt.Sprintf("%.2f× [%.2f–%.2f]", median(q), slices.Min(q), slices.Max(q))
}

// writeTable prints the results as a Markdown table, one row per prompt
// length and thread count.
func (r *prefillResults) writeTable(w io.Writer) {
	rows := [][]string{{"prompt", "threads", "simdgpt ms", "simdgpt tokens/s", "simdgpt tokens/CPU-s"}}
	if r.torch != nil {
		rows[0] = append(rows[0], "torch ms", "torch tokens/s", "torch tokens/CPU-s", "simdgpt speed [95% CI]", "CPU speed per round")
	}
	for _, c := range r.prompts {
		for _, n := range r.threads {
			k := decodeKey{c, n}
			o := r.ours[k]
			if o == nil {
				o = &prefillTimes{}
			}
			row := []string{fmt.Sprint(c), fmt.Sprint(n), msCell(o.ms), perTokens(c, o.ms), perTokens(c, o.cpu)}
			if r.torch != nil {
				t := r.torch[k]
				if t == nil {
					t = &prefillTimes{}
				}
				row = append(row, msCell(t.ms), perTokens(c, t.ms), perTokens(c, t.cpu), ratioCell(o.ms, t.ms), roundRatios(o.cpu, t.cpu))
			}
			rows = append(rows, row)
		}
	}
	writeMarkdown(w, rows)
}
