package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/simdgpt/simdgpt/attention"
	"github.com/simdgpt/simdgpt/gpt"
	"github.com/simdgpt/simdgpt/gpt/rng"
	"github.com/simdgpt/simdgpt/internal/interrupt"
)

func runSample(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sample", flag.ContinueOnError)
	ckpt := fs.String("checkpoint", "checkpoints", "checkpoint `dir`ectory or file: written by tinygpt train or convert, or GPT-2 weights (Hugging Face's model.safetensors or its directory, llm.c's gpt2_*.bin)")
	tokDir := fs.String("tokenizer_dir", "", "`dir`ectory of the BPE tokenizer (encoder.json and vocab.bpe, vocab.json and merges.txt, or llm.c's gpt2_tokenizer.bin); default: the checkpoint's own, or for GPT-2 weights the files beside them")
	prompt := fs.String("prompt", "", "text to continue (token ids separated by spaces for a model trained on token ids); empty: start from the first character of the vocabulary that is a newline or space, GPT-2's <|endoftext|> token, else token 0")
	n := fs.Int("n", 200, "number of tokens to generate")
	temp := fs.Float64("temperature", 1.0, "sampling temperature (0: always the most likely token)")
	topK := fs.Int("top_k", 0, "sample from the k most likely tokens only (0: all)")
	topP := fs.Float64("top_p", 1, "nucleus sampling: sample from the smallest set of most likely tokens whose probabilities sum to at least p (after --top_k; 1: all)")
	seed := fs.Uint64("seed", 1, "random seed")
	numSamples := fs.Int("num_samples", 1, fmt.Sprintf("number of samples, decoded together (1 to %d): sample i draws with seed S+i, as --seed S+i does alone; each is printed in turn, followed by a line of dashes", maxNumSamples))
	weights := fs.String("weights", "", weightsUsage)
	precision := fs.String("precision", "f32", precisionUsage)
	kvCache := fs.String("kv_cache", "f32", "`format` of the key/value cache: f32, or bf16 (keys and values rounded to bfloat16 as they are cached: half the cache's memory and of what a token reads from it)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `usage: tinygpt sample --checkpoint DIR|FILE [--prompt TEXT] [-n N] [--temperature T] [--top_k K] [--top_p P] [--seed S] [--num_samples N] [--tokenizer_dir DIR] [--weights f32|bf16|int8] [--precision f32|bf16] [--kv_cache f32|bf16]

Streams the prompt and then each generated token as it is drawn (the
bytes of a character split across BPE tokens once it is complete), using
a key/value cache per layer. With --num_samples N > 1 the N samples are
decoded together (each weight read once a step for all of them); the
first streams, the others follow it once all are drawn, each sample
ending with a line "---------------". Ctrl-C or SIGTERM stops it after
the token in progress (a second signal at once), ending the text with a
newline and a line on stderr; the exit status is 130 (SIGINT) or 143
(SIGTERM).

flags:
`)
		fs.PrintDefaults()
	}
	if done, st := parseFlags(fs, args, stdout, stderr); done {
		return st
	}
	switch {
	case *ckpt == "":
		return report(stderr, "sample", usageError{"--checkpoint is empty: name the checkpoint or GPT-2 weights to sample from"})
	case *n < 0 || *n > maxSampleTokens:
		return report(stderr, "sample", usageError{fmt.Sprintf("-n %d must be in [0, %d]", *n, maxSampleTokens)})
	case !(*temp >= 0) || math.IsInf(*temp, 0):
		return report(stderr, "sample", usageError{fmt.Sprintf("--temperature %g must be a finite number >= 0", *temp)})
	case *topK < 0 || *topK > gpt.MaxVocab:
		return report(stderr, "sample", usageError{fmt.Sprintf("--top_k %d must be in [0, %d]", *topK, gpt.MaxVocab)})
	case !(*topP > 0 && *topP <= 1):
		return report(stderr, "sample", usageError{fmt.Sprintf("--top_p %g must be in (0, 1]", *topP)})
	case *numSamples < 1 || *numSamples > maxNumSamples:
		return report(stderr, "sample", usageError{fmt.Sprintf("--num_samples %d must be in [1, %d]", *numSamples, maxNumSamples)})
	}
	wf, err := parseWeights(*weights)
	if err != nil {
		return report(stderr, "sample", err)
	}
	prec, err := parsePrecision(*precision)
	if err != nil {
		return report(stderr, "sample", err)
	}
	kv, err := attention.ParseKVCache(*kvCache)
	if err != nil {
		return report(stderr, "sample", usageError{fmt.Sprintf("--kv_cache %q must be f32 or bf16", *kvCache)})
	}
	w := watch("sample", stderr)
	defer w.Stop()
	ctx := w.Context()
	lm, err := loadModel(*ckpt, *tokDir, "sample", wf, stderr)
	if err != nil {
		return report(stderr, "sample", err)
	}
	if lm.noTok != "" {
		return report(stderr, "sample", lm.needTokenizer("printing the tokens drawn"))
	}
	m := lm.m
	if err := m.SetPrecision(prec); err != nil {
		return report(stderr, "sample", err)
	}
	if err := m.SetKVCache(kv); err != nil {
		return report(stderr, "sample", err)
	}
	if err := gpt.CheckMemory("sampling from "+describe(m.Config), gpt.SampleBytesWeights(m.Config, m.Weights())); err != nil {
		return report(stderr, "sample", err)
	}
	if err := checkSamplesMemory(m.Config, m.Weights(), *numSamples); err != nil {
		return report(stderr, "sample", err)
	}
	toks, err := promptTokens(lm, *prompt)
	if err != nil {
		return report(stderr, "sample", err)
	}
	tok := lm.tok
	if tok == nil {
		fmt.Fprint(stdout, strings.TrimSpace(*prompt))
	} else {
		fmt.Fprint(stdout, *prompt)
	}
	o := gpt.SampleOptions{Temperature: *temp, TopK: *topK, TopP: *topP}
	N := *numSamples
	// Sample 0 streams to stdout; the others gather in buffers, printed
	// after it.
	outs := make([]*utf8Stream, N)
	bufs := make([]bytes.Buffer, N)
	outs[0] = &utf8Stream{w: stdout}
	for i := 1; i < N; i++ {
		outs[i] = &utf8Stream{w: &bufs[i]}
	}
	drawn := make([]int, N)
	emit := func(i int, id int32) error {
		if err := ctx.Err(); err != nil {
			return err // the token drawn after the signal is not shown
		}
		drawn[i]++
		if tok == nil {
			_, err := fmt.Fprintf(outs[i].w, " %d", id)
			return err
		}
		return outs[i].write(tok.token(int(id)))
	}
	if N == 1 {
		err = m.NewSampler().GenerateWith(toks, *n, o, rng.New(*seed), func(id int32) error { return emit(0, id) })
	} else {
		prompts, rs := make([][]int32, N), make([]*rng.RNG, N)
		for i := range N {
			prompts[i], rs[i] = toks, rng.New(*seed+uint64(i))
		}
		err = m.NewBatchSampler(N).GenerateWith(prompts, *n, o, rs, emit)
	}
	for i, out := range outs {
		if i > 0 {
			if tok == nil {
				fmt.Fprint(stdout, strings.TrimSpace(*prompt))
			} else {
				fmt.Fprint(stdout, *prompt)
			}
		}
		if ferr := out.flush(); err == nil {
			err = ferr
		}
		if i > 0 {
			if _, werr := stdout.Write(bufs[i].Bytes()); err == nil {
				err = werr
			}
		}
		fmt.Fprintln(stdout)
		if N > 1 {
			fmt.Fprintln(stdout, sampleSeparator)
		}
	}
	if errors.Is(err, context.Canceled) {
		sig := w.Signal()
		each := ""
		if N > 1 {
			each = " of each sample"
		}
		fmt.Fprintf(stderr, "tinygpt sample: interrupted by %s after %d of %d tokens%s\n", interrupt.Name(sig), drawn[N-1], *n, each)
		return interrupt.ExitStatus(sig)
	}
	if errors.Is(err, gpt.ErrNotFinite) {
		err = fmt.Errorf("%s: %w", lm.describe(), err) // what was printed stays
	}
	if err != nil {
		return report(stderr, "sample", err)
	}
	return 0
}

// sampleSeparator is the line after each sample of --num_samples > 1, as
// nanoGPT's sample.py prints it.
const sampleSeparator = "---------------"

// maxNumSamples bounds --num_samples: the samples decoded together.
const maxNumSamples = 64

// checkSamplesMemory returns a usage error when n samples decoded
// together do not fit in the memory available, naming how many do (the
// memory of one is checked before).
func checkSamplesMemory(c gpt.Config, f gpt.Weights, n int) error {
	if n <= 1 {
		return nil
	}
	need := gpt.BatchSampleBytesWeights(c, f, n)
	avail, src := gpt.AvailableMemory()
	if need <= avail {
		return nil
	}
	fit := 1
	for fit < n && gpt.BatchSampleBytesWeights(c, f, fit+1) <= avail {
		fit++
	}
	return usageError{fmt.Sprintf("--num_samples %d needs about %s of memory, but only %s is available (%s): at most %d fit", n, gpt.FormatBytes(need), gpt.FormatBytes(avail), src, fit)}
}

// maxSampleTokens bounds -n, the tokens sample generates.
const maxSampleTokens = 1 << 30

// promptTokens returns the tokens sampling starts from: the prompt's, or
// for an empty prompt a token that begins a text.
func promptTokens(lm *model, prompt string) ([]int32, error) {
	tok, V := lm.tok, lm.m.Config.Vocab
	var toks []int32
	switch {
	case tok == nil:
		for _, f := range strings.Fields(prompt) {
			id, err := strconv.Atoi(f)
			if err != nil || id < 0 || id >= V {
				return nil, usageError{fmt.Sprintf("--prompt: %q is not a token id below %d", f, V)}
			}
			toks = append(toks, int32(id))
		}
		if len(toks) == 0 {
			toks = []int32{0}
		}
	case prompt == "":
		toks = []int32{defaultStart(tok)}
	case tok.chars != nil:
		ids, err := tok.chars.Encode(prompt)
		if err != nil {
			return nil, usageError{fmt.Sprintf("--prompt: %v", err)}
		}
		for _, id := range ids {
			toks = append(toks, int32(id))
		}
	case tok.bpe != nil:
		for _, id := range tok.bpe.EncodeWithSpecial(prompt) {
			toks = append(toks, int32(id))
		}
	default:
		return nil, tok.errDecodeOnly("--prompt")
	}
	return toks, nil
}

// defaultStart is the token an empty prompt starts from: for characters a
// newline or a space, for BPE the end-of-text token (GPT-2's start of a
// document), else token 0.
func defaultStart(tok *tokenizer) int32 {
	if tok.chars != nil {
		for _, c := range []string{"\n", " "} {
			if ids, err := tok.chars.Encode(c); err == nil {
				return int32(ids[0])
			}
		}
		return 0
	}
	return int32(max(tok.dec.EOT(), 0))
}
