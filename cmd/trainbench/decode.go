package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/simdgpt/simdgpt/attention"
	"github.com/simdgpt/simdgpt/bench"
	"github.com/simdgpt/simdgpt/gpt"
	"github.com/simdgpt/simdgpt/gpt/rng"
	"github.com/simdgpt/simdgpt/gpt/safetensors"
	"github.com/simdgpt/simdgpt/kernels"
)

// GPT-2 124M's shape, the model -decode generates random weights for.
const (
	gpt2Vocab  = 50257
	gpt2Block  = 1024
	gpt2Layers = 12
	gpt2Heads  = 12
	gpt2Width  = 768
)

// Tolerances of -decode -check: the logits of the token after the prompt
// must agree within decodeLogitTol of the largest |logit| (as gpt's
// TestGPT2TorchOracle requires), and greedy decoding must pick the same
// token after the prompt and at each of the next decodeCheckTokens steps.
const (
	decodeLogitTol    = 1e-4
	decodeCheckTokens = 8
)

// Tolerances of -decode -check with low-bit weights, relative to the
// largest |logit|, where both sides start from the same float32 file and
// differ by their quantization. With bf16 both sides round the same
// matrices the same way (to nearest even), but PyTorch's bf16 matmul also
// rounds its inputs (the activations) and its outputs (each projection
// and the logits themselves) to bf16, a relative 2⁻⁹ each, where simdgpt
// keeps float32: decodeLogitTolBF16 covers that. With int8 simdgpt's
// matrices carry int8's rounding (half a step of max|w|/127 in each group
// of 32, up to 2⁻⁸ of the group's largest weight, where bf16's is 2⁻⁹ of
// the weight itself) against PyTorch's bf16 ones: decodeLogitTolInt8. Each is about three times the largest difference
// measured on GPT-2-shaped random models of 1, 2 and 12 layers
// (bench/torch/README.md gives the numbers).
//
// Greedy tokens are compared step by step on the same context, since one
// near tie decided differently would make every later token differ:
// PyTorch is given the prompt and simdgpt's greedy tokens so far, and the
// token simdgpt chose must be within 2·tol of the largest of PyTorch's
// logits (what logits agreeing within tol at that step imply), and equal
// to PyTorch's own choice on at least decodeLowAgree of the
// decodeCheckTokens+1 steps.
const (
	decodeLogitTolBF16 = 2.5e-2
	decodeLogitTolInt8 = 5e-2
	decodeLowAgree     = 5
)

// kvName is the model line's words for simdgpt's key/value cache: none
// for float32.
func kvName(kv attention.KVCache) string {
	if kv == attention.KVFloat32 {
		return ""
	}
	return ", key/value cache " + kv.String() + " (gpt.Model.SetKVCache)"
}

// decodeLogitTolOf is the logits tolerance of -check for simdgpt's
// weights in format f and its key/value cache in format kv (a bf16 cache
// takes bf16 weights' bounds at least).
func decodeLogitTolOf(f gpt.Weights, kv attention.KVCache) float64 {
	if kv == attention.KVBF16 && f == gpt.WeightsF32 {
		f = gpt.WeightsBF16
	}
	switch f {
	case gpt.WeightsBF16:
		return decodeLogitTolBF16
	case gpt.WeightsInt8:
		return decodeLogitTolInt8
	}
	return decodeLogitTol
}

// torchWeights is the format of PyTorch's matrices when simdgpt's are in
// format f: fp32 for f32, and bf16 for bf16 and int8 (eager PyTorch has no
// int8 CPU matmul for this model worth comparing).
func torchWeights(f gpt.Weights) gpt.Weights {
	if f == gpt.WeightsF32 {
		return gpt.WeightsF32
	}
	return gpt.WeightsBF16
}

// torchDType is gpt2_decode.py's --dtype for matrices in format f (f32 or
// bf16).
func torchDType(f gpt.Weights) string {
	if f == gpt.WeightsBF16 {
		return "bf16"
	}
	return "fp32"
}

// modeFlags are the flags of some modes only, each with the modes that
// take it (a mode is "training", "-decode" or "-prefill"); every other
// flag is taken by all.
var modeFlags = map[string][]string{
	"config": {"training"}, "heads": {"training"}, "width": {"training"}, "block": {"training"},
	"batch": {"training"}, "steps": {"training"}, "torch-threads": {"training"}, "lr": {"training"},
	"precision": {"training", "-prefill"},
	"ctx":       {"-decode"}, "tokens": {"-decode"}, "kv-cache": {"-decode"},
	"model": {"-decode", "-prefill"}, "weights": {"-decode", "-prefill"},
	"prompt": {"-prefill"},
}

// checkModeFlags refuses a flag set on the command line that mode does
// not take, and -decode with -prefill.
func checkModeFlags(fs *flag.FlagSet, mode string) error {
	var err error
	decode, prefill := false, false
	fs.Visit(func(f *flag.Flag) {
		decode = decode || f.Name == "decode" && f.Value.String() == "true"
		prefill = prefill || f.Name == "prefill" && f.Value.String() == "true"
		modes, ok := modeFlags[f.Name]
		if !ok || slices.Contains(modes, mode) || err != nil {
			return
		}
		what := modes[0]
		if what == "training" {
			what = "training (without -decode or -prefill)"
		}
		for _, m := range modes[1:] {
			what += " and " + m
		}
		err = usageError{fmt.Sprintf("-%s is a flag of %s only, not of %s", f.Name, what, mode)}
	})
	if decode && prefill {
		return usageError{"-decode and -prefill: one mode at a time"}
	}
	return err
}

// gpt2Shape sets o's model to GPT-2 124M's shape, with layers and vocab
// when not 0 (for -decode and -prefill).
func gpt2Shape(o options, layers, vocab int) (options, error) {
	o.name = "gpt2"
	o.cfg = gpt.Config{Vocab: gpt2Vocab, BlockSize: gpt2Block, Layers: gpt2Layers, Heads: gpt2Heads, Width: gpt2Width, TieEmbeddings: true}
	if err := checkRange("layers", layers, 0, gpt.MaxLayers, " (0 keeps GPT-2 124M's)"); err != nil {
		return o, err
	}
	if err := checkRange("vocab", vocab, 0, gpt.MaxVocab, " (0 keeps GPT-2 124M's)"); err != nil {
		return o, err
	}
	if o.model != "" && (layers != 0 || vocab != 0) {
		return o, usageError{"-layers and -vocab shape the random model; -model's file has its own shape"}
	}
	if layers > 0 && layers != o.cfg.Layers {
		o.cfg.Layers, o.name = layers, "custom"
	}
	if vocab > 0 && vocab != o.cfg.Vocab {
		o.cfg.Vocab, o.name = vocab, "custom"
	}
	if err := o.cfg.CheckLimits(); err != nil {
		return o, usageError{err.Error()}
	}
	return o, nil
}

// parseDecode finishes parseOptions for -decode: the model's shape (GPT-2
// 124M's, with layers and vocab when not 0), the contexts, the counts and
// the weights' format.
func parseDecode(o options, layers, vocab int, ctxs, threads, weights, kv string) (options, error) {
	var err error
	if o.weights, err = gpt.ParseWeights(weights); err != nil {
		return o, usageError{fmt.Sprintf("-weights %q: want f32, bf16 or int8", weights)}
	}
	if o.kv, err = attention.ParseKVCache(kv); err != nil {
		return o, usageError{fmt.Sprintf("-kv-cache %q: want f32 or bf16", kv)}
	}
	if o, err = gpt2Shape(o, layers, vocab); err != nil {
		return o, err
	}
	if err := checkRange("tokens", o.tokens, 1, maxTimedSteps, ""); err != nil {
		return o, err
	}
	if err := checkRange("rounds", o.rounds, 1, maxTimedSteps, ""); err != nil {
		return o, err
	}
	if o.ctxs, err = parseCounts("ctx", ctxs, "prompt length", gpt.MaxBlockSize); err != nil {
		return o, err
	}
	if len(o.ctxs) == 0 {
		return o, usageError{"-ctx: no prompt length"}
	}
	for _, c := range o.ctxs {
		// Both are bounded above: the sum cannot overflow.
		if o.model == "" && c+o.tokens > o.cfg.BlockSize {
			return o, usageError{fmt.Sprintf("-ctx %d and -tokens %d: the context would grow to %d tokens, beyond GPT-2's %d", c, o.tokens, c+o.tokens, o.cfg.BlockSize)}
		}
	}
	if o.threads, err = parseThreads("threads", threads); err != nil {
		return o, err
	}
	if len(o.threads) == 0 {
		return o, usageError{"-threads: no thread count"}
	}
	o.torchThreads = o.threads
	// Every factor is bounded first (2^20 rounds and tokens, 2^15
	// contexts, 2^10 thread counts): the product, under 2^63, cannot
	// overflow.
	if total := int64(o.rounds) * int64(len(o.ctxs)) * int64(len(o.threads)) * int64(o.tokens); total > maxTimedSteps {
		return o, usageError{fmt.Sprintf("-rounds %d × %d contexts × %d thread counts × -tokens %d is %d timed tokens a side, above the limit of %d", o.rounds, len(o.ctxs), len(o.threads), o.tokens, total, maxTimedSteps)}
	}
	return o, nil
}

// parseCounts parses a comma-separated list of positive integers of at
// most limit, dropping repeats.
func parseCounts(flagName, s, what string, limit int) ([]int, error) {
	var out []int
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, usageError{fmt.Sprintf("-%s %q: %q is not a %s (a positive integer)", flagName, s, f, what)}
		}
		if n > limit {
			return nil, usageError{fmt.Sprintf("-%s %q: %d is above the limit of %d", flagName, s, n, limit)}
		}
		out = union(out, []int{n})
	}
	return out, nil
}

// bandwidthBytes is the buffer of the read-bandwidth measurement: eight
// times the L3 (l3 bytes, 0 if unknown), at least 256 MiB. A variable so
// that the tests, which check what the tables say and not the rate, read
// a few MiB instead of gigabytes (under an emulator, minutes a pass).
var bandwidthBytes = fullBandwidthBytes

// fullBandwidthBytes is bandwidthBytes outside the tests, at most
// MaxInt/2 (1 GiB on 32-bit platforms).
func fullBandwidthBytes(l3 int) int {
	return int(min(max(256<<20, 8*int64(l3)), math.MaxInt/2))
}

// readBandwidth returns the rate in GB/s at which impl reads buf with
// threads goroutines at once (bench.ReadRate: each reads its part in
// each of the read patterns, and the fastest counts): the median of
// passes passes.
func readBandwidth(impl *kernels.Impl, buf []float32, passes, threads int) float64 {
	rates := make([]float64, passes)
	for i := range rates {
		rates[i] = bench.ReadRate(impl, buf, threads) / 1e9
	}
	return median(rates)
}

// decodeMemory is the memory of a -decode run before anything is
// allocated: simdgpt's model and sampler (with low-bit weights, the
// float32 model too, which they are converted from), the random weights
// and their encoded file, the bandwidth buffer, and with torch PyTorch's
// copy of the weights (twice while it reads the file; with bf16 its bf16
// matrices too, under half of the float32 weights).
func decodeMemory(o options) int64 {
	p := 4 * int64(o.cfg.NumParams())
	need := gpt.SampleBytesWeights(o.cfg, o.weights) + 2*p + int64(bandwidthBytes(kernels.CPU().L3))
	if o.weights != gpt.WeightsF32 {
		need += gpt.InferenceBytes(o.cfg, gpt.WeightsF32)
	}
	if !o.noTorch {
		need += 2 * p
		if torchWeights(o.weights) != gpt.WeightsF32 {
			need += p / 2
		}
	}
	return need
}

// writeGPT2 writes random GPT-2 weights of cfg's shape drawn from seed as
// a Hugging Face model.safetensors (F32) with a config.json beside it in
// dir, and returns the file's path. Every tensor is random: matrices and
// embeddings uniform with standard deviation 0.02, biases uniform in
// ±0.02, LayerNorm gains in 1 ± 0.1.
func writeGPT2(dir string, cfg gpt.Config, seed uint64) (string, error) {
	r := rng.New(seed ^ 0x67707432)
	C, V, T := cfg.Width, cfg.Vocab, cfg.BlockSize
	var ts []safetensors.Tensor
	add := func(name string, center, half float64, shape ...int) {
		n := 1
		for _, d := range shape {
			n *= d
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(center + half*(2*r.Float64()-1))
		}
		ts = append(ts, safetensors.Tensor{Name: name, Shape: shape, Data: v})
	}
	mat := 0.02 * math.Sqrt(3) // uniform on ±a has standard deviation a/√3
	add("wte.weight", 0, mat, V, C)
	add("wpe.weight", 0, mat, T, C)
	for l := range cfg.Layers {
		p := fmt.Sprintf("h.%d.", l)
		add(p+"ln_1.weight", 1, 0.1, C)
		add(p+"ln_1.bias", 0, 0.02, C)
		add(p+"attn.c_attn.weight", 0, mat, C, 3*C)
		add(p+"attn.c_attn.bias", 0, 0.02, 3*C)
		add(p+"attn.c_proj.weight", 0, mat, C, C)
		add(p+"attn.c_proj.bias", 0, 0.02, C)
		add(p+"ln_2.weight", 1, 0.1, C)
		add(p+"ln_2.bias", 0, 0.02, C)
		add(p+"mlp.c_fc.weight", 0, mat, C, 4*C)
		add(p+"mlp.c_fc.bias", 0, 0.02, 4*C)
		add(p+"mlp.c_proj.weight", 0, mat, 4*C, C)
		add(p+"mlp.c_proj.bias", 0, 0.02, C)
	}
	add("ln_f.weight", 1, 0.1, C)
	add("ln_f.bias", 0, 0.02, C)
	b, err := safetensors.Encode(ts, map[string]string{"format": "pt"})
	if err != nil {
		return "", err
	}
	ts = nil
	path := filepath.Join(dir, gpt.HFFile)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return "", err
	}
	conf, err := json.Marshal(map[string]any{"model_type": "gpt2", "n_head": cfg.Heads, "n_layer": cfg.Layers,
		"n_embd": C, "n_positions": T, "vocab_size": V, "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new"})
	if err != nil {
		return "", err
	}
	return path, os.WriteFile(filepath.Join(dir, gpt.HFConfigFile), conf, 0o644)
}

// decodeKey names one row of the table: a prompt length and a thread count.
type decodeKey struct{ ctx, threads int }

// decodeResults are the measurements of a -decode run.
type decodeResults struct {
	ctxs, threads []int
	weightBytes   float64                 // simdgpt's weight bytes a token (gpt.TokenWeightBytes)
	torchBytes    float64                 // PyTorch's
	cacheBytes    map[int]float64         // per prompt length: the key/value cache bytes of the mean timed token (gpt.TokenCacheBytes)
	bandwidth     map[int][]float64       // per thread count: the read GB/s of that many cores, one a round
	ours          map[decodeKey][]float64 // ms of each timed token
	torch         map[decodeKey][]float64 // nil when torch was not measured
	agree         map[int]int             // per prompt length: the shortest run of equal leading greedy tokens over all rounds
	decoded       int                     // greedy tokens a side per run: the one after the prompt and the timed ones
	timed         int                     // timed tokens a side per run (a round's share of ours and torch)
}

// decodeOurs runs greedy decoding of prompt on s for n+1 tokens and times
// the last n: each from having one token to having the next (feeding the
// token, the logits, the arg max). Once ctx is done it stops at the next
// token and returns ctx's error.
func decodeOurs(ctx context.Context, s *gpt.Sampler, prompt []int32, n int) ([]float64, []int32, error) {
	ms := make([]float64, 0, n)
	toks := make([]int32, 0, n+1)
	var last time.Time
	err := s.Generate(prompt, n+1, 0, 0, nil, func(t int32) error {
		now := time.Now()
		if len(toks) > 0 {
			ms = append(ms, float64(now.Sub(last).Nanoseconds())/1e6)
		}
		toks = append(toks, t)
		if err := ctx.Err(); err != nil {
			return err
		}
		last = time.Now()
		return nil
	})
	return ms, toks, err
}

// tokenList is toks as the script's comma-separated list.
func tokenList[T int32 | int](toks []T) string {
	var b strings.Builder
	for i, t := range toks {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(t)))
	}
	return b.String()
}

// torchDecode asks the script to decode prompt greedily for n+1 tokens,
// the last n timed.
func (p *torchProc) decode(prompt []int32, n int) ([]float64, []int32, error) {
	reply, err := p.request(fmt.Sprintf("decode %d %s", n, tokenList(prompt)), float64(len(prompt)+n+1)*p.unitFlops)
	if err != nil {
		return nil, nil, err
	}
	ms, toks, err := parseDecodeReply(reply, n)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", p.name, err)
	}
	return ms, toks, nil
}

// parseDecodeReply parses "ms M1 ... MN tokens K0 ... KN".
func parseDecodeReply(line string, n int) ([]float64, []int32, error) {
	msPart, tokPart, ok := strings.Cut(line, " tokens ")
	if !ok {
		return nil, nil, fmt.Errorf("expected \"ms\", %d timings, \"tokens\" and %d tokens, got %q", n, n+1, line)
	}
	ms, err := parseMs(msPart, n)
	if err != nil {
		return nil, nil, err
	}
	f := strings.Fields(tokPart)
	if len(f) != n+1 {
		return nil, nil, fmt.Errorf("expected %d tokens, got %q", n+1, line)
	}
	toks := make([]int32, len(f))
	for i, s := range f {
		v, err := strconv.ParseInt(s, 10, 32)
		if err != nil || v < 0 {
			return nil, nil, fmt.Errorf("bad token %q in %q", s, line)
		}
		toks[i] = int32(v)
	}
	return ms, toks, nil
}

// logits asks the script for the logits of the token after prompt, which
// it writes to path; there must be vocab of them.
func (p *torchProc) logits(prompt []int32, path string, vocab int) ([]float32, error) {
	reply, err := p.request(fmt.Sprintf("logits %s %s", tokenList(prompt), path), float64(len(prompt))*p.unitFlops)
	if err != nil {
		return nil, err
	}
	if reply != "ok "+strconv.Itoa(vocab) {
		return nil, fmt.Errorf("%s: asked for %d logits, answered %q", p.name, vocab, reply)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) != 4*vocab {
		return nil, fmt.Errorf("%s wrote %d bytes of logits, want %d", p.name, len(b), 4*vocab)
	}
	out := make([]float32, vocab)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out, nil
}

// commonPrefix is the number of leading elements a and b share.
func commonPrefix(a, b []int32) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// logitsDiff returns max |ours-torch| and the largest |logit| of ours; a
// NaN on either side makes the difference +Inf.
func logitsDiff(ours, torch []float32) (diff, scale float64) {
	for i, o := range ours {
		d := math.Abs(float64(o) - float64(torch[i]))
		if math.IsNaN(d) {
			d = math.Inf(1)
		}
		diff = math.Max(diff, d)
		scale = math.Max(scale, math.Abs(float64(o)))
	}
	return diff, scale
}

// decodeCheck compares, for every prompt, the logits of the token after it
// and the first decodeCheckTokens+1 greedy tokens of both sides, simdgpt's
// weights in format f: with f32 the tokens of both must be the same, with
// low-bit weights they are compared step by step (lowTokensCheck). It
// returns the report lines and whether all agree.
func decodeCheck(ctx context.Context, s *gpt.Sampler, tp *torchProc, prompts map[int][]int32, ctxs []int, dir string, vocab int, f gpt.Weights, kv attention.KVCache) ([]string, bool, error) {
	var lines []string
	pass := true
	verdict := func(ok bool) string {
		pass = pass && ok
		if ok {
			return "ok"
		}
		return "FAIL"
	}
	tol := decodeLogitTolOf(f, kv)
	low := f != gpt.WeightsF32 || kv != attention.KVFloat32
	logitsFile := filepath.Join(dir, "logits.f32")
	for _, c := range ctxs {
		prompt := prompts[c]
		theirs, err := tp.logits(prompt, logitsFile, vocab)
		if err != nil {
			return nil, false, err
		}
		ours := s.Logits(prompt)
		d, scale := logitsDiff(ours, theirs)
		ok := d <= tol*scale
		lines = append(lines, fmt.Sprintf("check ctx %d: logits after the prompt max|Δ| %.3g, max|logit| %.3g (%.2g of it, tol %g) %s",
			c, d, scale, d/scale, tol, verdict(ok)))
		_, mine, err := decodeOurs(ctx, s, prompt, decodeCheckTokens)
		if err != nil {
			return nil, false, err
		}
		if low {
			same, gap, err := lowTokensCheck(tp, prompt, mine, logitsFile, vocab)
			if err != nil {
				return nil, false, err
			}
			ok := same >= decodeLowAgree && gap <= 2*tol
			lines = append(lines, fmt.Sprintf("check ctx %d: greedy tokens %s: torch, given the same context, picks the same at %d of %d steps (need %d); "+
				"simdgpt's token at most %.2g of max|logit| below torch's largest logit (tol %g) %s",
				c, tokenList(mine), same, len(mine), decodeLowAgree, gap, 2*tol, verdict(ok)))
			continue
		}
		_, theirToks, err := tp.decode(prompt, decodeCheckTokens)
		if err != nil {
			return nil, false, err
		}
		k := commonPrefix(mine, theirToks)
		lines = append(lines, fmt.Sprintf("check ctx %d: greedy tokens %d of %d agree (simdgpt %s, torch %s) %s",
			c, k, len(mine), tokenList(mine), tokenList(theirToks), verdict(k == len(mine))))
	}
	if pass {
		lines = append(lines, "check PASS")
	} else {
		lines = append(lines, "check FAIL")
	}
	return lines, pass, nil
}

// lowTokensCheck asks PyTorch, for each of simdgpt's greedy tokens mine
// after prompt, for its logits on the same context (the prompt and the
// tokens of mine before it). It returns at how many steps PyTorch's
// largest logit is simdgpt's token (the first largest, as greedy picks)
// and the largest gap, over the steps, between PyTorch's largest logit and
// its logit of simdgpt's token, relative to its largest |logit| at that
// step.
func lowTokensCheck(tp *torchProc, prompt, mine []int32, path string, vocab int) (same int, gap float64, err error) {
	seen := append([]int32(nil), prompt...)
	for _, tok := range mine {
		lg, err := tp.logits(seen, path, vocab)
		if err != nil {
			return 0, 0, err
		}
		top, scale := 0, 0.0
		for i, v := range lg {
			if v > lg[top] {
				top = i
			}
			scale = math.Max(scale, math.Abs(float64(v)))
		}
		if int32(top) == tok {
			same++
		}
		g := (float64(lg[top]) - float64(lg[tok])) / scale
		if math.IsNaN(g) {
			g = math.Inf(1)
		}
		gap = math.Max(gap, g)
		seen = append(seen, tok)
	}
	return same, gap, nil
}

// int8PeerLine says, with -weights int8, what PyTorch runs instead.
const int8PeerLine = "torch: no int8 peer (eager PyTorch has no int8 CPU matmul for this model worth comparing): torch runs bf16 matrices against simdgpt's int8"

// weightsName describes matrices in format f for the model line.
func weightsName(f gpt.Weights) string {
	switch f {
	case gpt.WeightsBF16:
		return "bf16 (gpt.Model.WithWeights)"
	case gpt.WeightsInt8:
		return "int8, groups of 32 (gpt.Model.WithWeights)"
	}
	return "f32"
}

// findTorch returns the script named name and torch's version, or ""
// when torch cannot be imported, or python does not answer the version
// check by its deadline, and o allows measuring simdgpt alone (having
// said so, and with a deadline passed which, on stdout).
func findTorch(ctx context.Context, o options, name string, stdout io.Writer) (script, version string, err error) {
	if o.noTorch {
		return "", "", nil
	}
	version, err = torchVersion(ctx, o.python)
	if ctx.Err() != nil {
		return "", "", ctx.Err()
	}
	var te timeoutError
	switch {
	case err != nil && o.requireTorch && errors.As(err, &te):
		return "", "", fmt.Errorf("-require-torch: %v", err)
	case err != nil && o.requireTorch:
		return "", "", fmt.Errorf("-require-torch: %s cannot import torch (%v); apt-get install python3-torch", o.python, err)
	case err != nil && errors.As(err, &te):
		fmt.Fprintf(stdout, "%v; measuring simdgpt alone\n", err)
		return "", "", nil
	case err != nil:
		fmt.Fprintln(stdout, noTorchLine)
		return "", "", nil
	}
	script, err = findScript(o.script, name)
	return script, version, err
}

// peerRun is what -decode and -prefill set up before their rounds: a
// temporary directory (the caller removes it), the weights file both
// sides load (-model, or random weights written there) and where it came
// from, the PyTorch peer's script and version (empty without PyTorch),
// and the model read from the file in -weights' format.
type peerRun struct {
	dir, path, source, script, version string
	m                                  *gpt.Model
}

// newPeerRun sets up a peer run; on an error it leaves no directory.
func newPeerRun(ctx context.Context, o options, stdout io.Writer) (pr *peerRun, err error) {
	dir, err := os.MkdirTemp("", "trainbench")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	script, version, err := findTorch(ctx, o, "gpt2_decode.py", stdout)
	if err != nil {
		return nil, err
	}
	path, source := o.model, "-model "+o.model
	if path == "" {
		if path, err = writeGPT2(dir, o.cfg, o.seed); err != nil {
			return nil, err
		}
		source = fmt.Sprintf("random weights (seed %d) in a safetensors file both sides load", o.seed)
	}
	m, err := gpt.LoadGPT2(path)
	if err != nil {
		return nil, err
	}
	if m, err = m.WithWeights(o.weights); err != nil {
		return nil, err
	}
	if err := m.SetKVCache(o.kv); err != nil {
		return nil, err
	}
	if o.weights != gpt.WeightsF32 {
		// The float32 model just converted is garbage: collect it and
		// return its memory to the OS now, so that neither the collection
		// nor the scavenger's release of it runs among the timed tokens.
		debug.FreeOSMemory()
	}
	return &peerRun{dir: dir, path: path, source: source, script: script, version: version, m: m}, nil
}

// randomPrompts returns a prompt of each of o.ctxs' lengths, of tokens
// below vocab drawn from o.seed and the length.
func randomPrompts(o options, vocab int) map[int][]int32 {
	prompts := map[int][]int32{}
	for _, c := range o.ctxs {
		r := rng.New(o.seed ^ uint64(c)<<20)
		p := make([]int32, c)
		for i := range p {
			p[i] = int32(r.Intn(vocab))
		}
		prompts[c] = p
	}
	return prompts
}

// compareDecode is compare for -decode.
func compareDecode(ctx context.Context, o options, stdout, stderr io.Writer) (err error) {
	if o.model == "" {
		what := fmt.Sprintf("decoding %d layers of width %d, vocabulary %d", o.cfg.Layers, o.cfg.Width, o.cfg.Vocab)
		if err := gpt.CheckMemory(what, decodeMemory(o)); err != nil {
			return err
		}
	}
	pr, err := newPeerRun(ctx, o, stdout)
	if err != nil {
		return err
	}
	defer os.RemoveAll(pr.dir)
	dir, path, source, script, version, m := pr.dir, pr.path, pr.source, pr.script, pr.version, pr.m
	cfg := m.Config
	for _, c := range o.ctxs {
		if c+o.tokens > cfg.BlockSize {
			return fmt.Errorf("-ctx %d and -tokens %d: the context would grow to %d tokens, beyond the model's %d", c, o.tokens, c+o.tokens, cfg.BlockSize)
		}
	}
	prompts := randomPrompts(o, cfg.Vocab)

	impl := kernels.Default()
	cpu := kernels.CPU().Name
	if cpu == "" {
		cpu = cpuModel()
	}
	tf := torchWeights(o.weights)
	wb, twb := float64(gpt.TokenWeightBytes(cfg, o.weights)), float64(gpt.TokenWeightBytes(cfg, tf))
	fmt.Fprintf(stdout, "cpu: %s (%d logical CPUs); kernels %s\n", cpu, runtime.NumCPU(), impl.Name())
	fmt.Fprintf(stdout, "model: %d layers, %d heads, width %d, vocab %d, block %d, tied head; %d parameters; %s; simdgpt's matrices %s\n",
		cfg.Layers, max(cfg.Heads, 1), cfg.Width, cfg.Vocab, cfg.BlockSize, cfg.NumParams(), source, weightsName(o.weights)+kvName(o.kv))
	fmt.Fprintf(stdout, "weights read per token (gpt.TokenWeightBytes: the blocks' matrices and the LM head in their format, every other parameter a token reads at 4 bytes, the key/value cache not counted): simdgpt %.1f MB", wb/1e6)
	if script != "" {
		fmt.Fprintf(stdout, ", torch %.1f MB", twb/1e6)
	}
	fmt.Fprintln(stdout)
	var tp *torchProc
	if script != "" {
		fmt.Fprintf(stdout, "torch: %s (%s %s --dtype %s)\n", version, o.python, script, torchDType(tf))
		if o.weights == gpt.WeightsInt8 {
			fmt.Fprintln(stdout, int8PeerLine)
		}
		args := []string{path, "--heads", strconv.Itoa(max(cfg.Heads, 1)), "--dtype", torchDType(tf)}
		if tp, err = startTorch(ctx, o.python, script, args, torchEnv(o.ompWait), cfg.NumParams(), stderr); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		defer tp.close()
		// A token's work: two FLOPs a parameter, and attention over a
		// context of up to the block.
		tp.unitFlops = 2*float64(cfg.NumParams()) + 4*float64(cfg.Layers)*float64(cfg.Width)*float64(cfg.BlockSize)
		if tp.dtype != torchDType(tf) {
			return fmt.Errorf("%s: asked for --dtype %s, it decodes with %q", tp.name, torchDType(tf), tp.dtype)
		}
	}
	defer func() {
		if ctx.Err() != nil { // the script's failure is its killing
			err = ctx.Err()
		}
	}()
	s := m.NewSampler()
	if o.check && tp != nil {
		lines, pass, err := decodeCheck(ctx, s, tp, prompts, o.ctxs, dir, cfg.Vocab, o.weights, o.kv)
		if err != nil {
			return err
		}
		for _, l := range lines {
			fmt.Fprintln(stdout, l)
		}
		if !pass {
			return errors.New("simdgpt and PyTorch disagree on decoding (the check lines above)")
		}
	}

	r := &decodeResults{ctxs: o.ctxs, threads: o.threads, weightBytes: wb, torchBytes: twb, decoded: o.tokens + 1, timed: o.tokens,
		ours: map[decodeKey][]float64{}, agree: map[int]int{}, bandwidth: map[int][]float64{}, cacheBytes: map[int]float64{}}
	for _, c := range o.ctxs {
		// Timed token i (1..tokens) is computed with c+i positions cached.
		r.cacheBytes[c] = float64(gpt.TokenCacheBytesKV(cfg, c, o.kv)) + float64(gpt.TokenCacheBytesKV(cfg, o.tokens+1, o.kv))/2
	}
	if tp != nil {
		r.torch = map[decodeKey][]float64{}
	}
	// In huge pages, as the model's weights are (bench.ReadBufferOf).
	buf := bench.ReadBufferOf(bandwidthBytes(kernels.CPU().L3))
	for round := 1; round <= o.rounds; round++ {
		for _, c := range o.ctxs {
			for _, n := range o.threads {
				k := decodeKey{c, n}
				var ms []float64
				var mine []int32
				withProcs(n, func() { ms, mine, err = decodeOurs(ctx, s, prompts[c], o.tokens) })
				if err != nil {
					return err
				}
				r.ours[k] = append(r.ours[k], ms...)
				msg := fmt.Sprintf("round %d/%d, ctx %d, %d thread(s): simdgpt %.2f ms/token", round, o.rounds, c, n, median(ms))
				if tp != nil {
					if err := tp.setThreads(n); err != nil {
						return err
					}
					tms, theirs, err := tp.decode(prompts[c], o.tokens)
					if err != nil {
						return err
					}
					r.torch[k] = append(r.torch[k], tms...)
					a := commonPrefix(mine, theirs)
					if old, seen := r.agree[c]; !seen || a < old {
						r.agree[c] = a
					}
					msg += fmt.Sprintf(" torch %.2f ms/token", median(tms))
				}
				fmt.Fprintln(stderr, msg)
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		for _, n := range o.threads {
			withProcs(n, func() { r.bandwidth[n] = append(r.bandwidth[n], readBandwidth(impl, buf, 3, n)) })
		}
	}
	if tp != nil {
		if err := tp.close(); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "read bandwidth: %s %s over %d MiB split between as many goroutines as threads (GOMAXPROCS the same), median of 3 passes after each round, median of the rounds: %s\n",
		impl.Name(), bench.ReadRateHow(), 4*len(buf)>>20, r.bandwidthSummary())
	if tp != nil {
		how := "torch.set_num_threads (its BLAS is not OpenBLAS: its threads are its own)"
		if tp.blas == "openblas" {
			how = "torch.set_num_threads and openblas_set_num_threads"
		}
		policy := o.ompWait
		if policy == "" {
			policy = "as in the environment"
		}
		fmt.Fprintf(stdout, "torch threads: %s; OMP_WAIT_POLICY %s\n", how, policy)
	}
	fmt.Fprintf(stdout, "%d rounds × %d timed tokens a side at each context and thread count, interleaved; ms/token median (min–max) over all tokens; GB/s = weight bytes per token / median time, %% of the read bandwidth of as many cores as threads; by round: each round's median token against the read bandwidth measured after it, median [min–max] over the rounds; with cache: the same counting the key/value cache the mean timed token reads as well (gpt.TokenCacheBytes); speed = torch's median / simdgpt's, 95%% CI of bench.Speedup\n\n", o.rounds, o.tokens)
	r.writeTable(stdout)
	if tp != nil {
		fmt.Fprintln(stdout)
		for _, c := range o.ctxs {
			fmt.Fprintf(stdout, "greedy tokens, ctx %d: simdgpt and torch agree on the first %d of %d in every round\n", c, r.agree[c], r.decoded)
		}
	}
	return nil
}

// bandwidthSummary gives the median read bandwidth of each thread count
// and, beside each beyond the first, its ratio to the first's: what the
// cores together can read against one.
func (r *decodeResults) bandwidthSummary() string {
	var parts []string
	for i, n := range r.threads {
		bw := median(r.bandwidth[n])
		cell := fmt.Sprintf("%d thread(s) %.1f GB/s", n, bw)
		if b0 := median(r.bandwidth[r.threads[0]]); i > 0 && b0 > 0 {
			cell += fmt.Sprintf(" (%.2f× %d)", bw/b0, r.threads[0])
		}
		parts = append(parts, cell)
	}
	return strings.Join(parts, ", ")
}

// gbCell is the GB/s of weights read, bytes a token, at the median token
// time and its share of the median read bandwidth of threads cores.
func (r *decodeResults) gbCell(ms []float64, bytes float64, threads int) string {
	if len(ms) == 0 {
		return "-"
	}
	gb := bytes / (median(ms) * 1e6)
	if bw := median(r.bandwidth[threads]); bw > 0 {
		return fmt.Sprintf("%.1f (%.0f%%)", gb, 100*gb/bw)
	}
	return fmt.Sprintf("%.1f (-)", gb)
}

// roundShares returns, per round, the GB/s of weights read (bytes a
// token) at the round's median token time as a percentage of the read
// bandwidth of threads cores measured after that round: a share that
// follows the machine's speed from round to round, where gbCell's
// divides medians over all rounds. ms holds r.timed tokens a round, in
// the order of the rounds.
func (r *decodeResults) roundShares(ms []float64, bytes float64, threads int) []float64 {
	var out []float64
	bw := r.bandwidth[threads]
	for i := 0; r.timed > 0 && i < len(bw) && (i+1)*r.timed <= len(ms); i++ {
		if bw[i] > 0 {
			gb := bytes / (median(ms[i*r.timed:(i+1)*r.timed]) * 1e6)
			out = append(out, 100*gb/bw[i])
		}
	}
	return out
}

// shareCell is "median% [min–max]" of the rounds' shares (roundShares).
func (r *decodeResults) shareCell(ms []float64, bytes float64, threads int) string {
	sh := r.roundShares(ms, bytes, threads)
	if len(sh) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%% [%.0f–%.0f]", median(sh), slices.Min(sh), slices.Max(sh))
}

// cacheShareCell is shareCell of the weights and the key/value cache a
// token reads at prompt length ctx; "-" when the cache's bytes are not
// known.
func (r *decodeResults) cacheShareCell(ms []float64, ctx, threads int) string {
	kv, ok := r.cacheBytes[ctx]
	if !ok {
		return "-"
	}
	return r.shareCell(ms, r.weightBytes+kv, threads)
}

// tokensCell is tokens per second at the median token time.
func tokensPerSecond(ms []float64) string {
	if len(ms) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", 1000/median(ms))
}

// writeTable prints the results as a Markdown table, one row per prompt
// length and thread count.
func (r *decodeResults) writeTable(w io.Writer) {
	var rows [][]string
	if r.torch == nil {
		rows = append(rows, []string{"ctx", "threads", "simdgpt ms/token", "simdgpt tokens/s", "simdgpt GB/s (% read bw)", "simdgpt % read bw by round", "with cache"})
	} else {
		rows = append(rows, []string{"ctx", "threads", "simdgpt ms/token", "torch ms/token", "simdgpt tokens/s", "torch tokens/s",
			"simdgpt GB/s (% read bw)", "torch GB/s (% read bw)", "simdgpt % read bw by round", "with cache", "simdgpt speed [95% CI]"})
	}
	for _, c := range r.ctxs {
		for _, n := range r.threads {
			k := decodeKey{c, n}
			o := r.ours[k]
			if r.torch == nil {
				rows = append(rows, []string{fmt.Sprint(c), fmt.Sprint(n), msCell(o), tokensPerSecond(o), r.gbCell(o, r.weightBytes, n), r.shareCell(o, r.weightBytes, n), r.cacheShareCell(o, c, n)})
				continue
			}
			t := r.torch[k]
			rows = append(rows, []string{fmt.Sprint(c), fmt.Sprint(n), msCell(o), msCell(t), tokensPerSecond(o), tokensPerSecond(t),
				r.gbCell(o, r.weightBytes, n), r.gbCell(t, r.torchBytes, n), r.shareCell(o, r.weightBytes, n), r.cacheShareCell(o, c, n), ratioCell(o, t)})
		}
	}
	writeMarkdown(w, rows)
}
