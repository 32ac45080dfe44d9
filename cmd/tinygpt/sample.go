package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/simdgpt/simdgpt/gpt"
	"github.com/simdgpt/simdgpt/gpt/rng"
)

func runSample(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sample", flag.ContinueOnError)
	ckpt := fs.String("checkpoint", "checkpoints", "checkpoint `dir`ectory (or file) written by tinygpt train")
	prompt := fs.String("prompt", "", "text to continue (token ids separated by spaces for a model trained on token ids); empty: start from the first character of the vocabulary that is a newline or space, else token 0")
	n := fs.Int("n", 200, "number of tokens to generate")
	temp := fs.Float64("temperature", 1.0, "sampling temperature (0: always the most likely token)")
	topK := fs.Int("top_k", 0, "sample from the k most likely tokens only (0: all)")
	seed := fs.Uint64("seed", 1, "random seed")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: tinygpt sample --checkpoint DIR [--prompt TEXT] [-n N] [--temperature T] [--top_k K] [--seed S]\n\nStreams the prompt and then each generated character as it is drawn,\nusing a key/value cache per layer.\n\nflags:\n")
		fs.PrintDefaults()
	}
	if done, st := parseFlags(fs, args, stdout, stderr); done {
		return st
	}
	switch {
	case *n < 0:
		return report(stderr, "sample", usageError{fmt.Sprintf("-n %d must be >= 0", *n)})
	case !(*temp >= 0) || math.IsInf(*temp, 0):
		return report(stderr, "sample", usageError{fmt.Sprintf("--temperature %g must be a finite number >= 0", *temp)})
	case *topK < 0:
		return report(stderr, "sample", usageError{fmt.Sprintf("--top_k %d must be >= 0", *topK)})
	}
	ck, err := loadCheckpoint(*ckpt, "sample", stderr)
	if err != nil {
		return report(stderr, "sample", err)
	}
	m := ck.Model
	if err := gpt.CheckMemory("sampling from "+describe(m.Config), gpt.SampleBytes(m.Config)); err != nil {
		return report(stderr, "sample", err)
	}
	var toks []int32
	if ck.Vocab != nil {
		text := *prompt
		if text == "" {
			toks = []int32{defaultStart(ck)}
		} else {
			ids, err := ck.Vocab.Encode(text)
			if err != nil {
				return report(stderr, "sample", usageError{fmt.Sprintf("--prompt: %v", err)})
			}
			for _, id := range ids {
				toks = append(toks, int32(id))
			}
			fmt.Fprint(stdout, text)
		}
	} else {
		for _, f := range strings.Fields(*prompt) {
			id, err := strconv.Atoi(f)
			if err != nil || id < 0 || id >= m.Config.Vocab {
				return report(stderr, "sample", usageError{fmt.Sprintf("--prompt: %q is not a token id below %d", f, m.Config.Vocab)})
			}
			toks = append(toks, int32(id))
		}
		if len(toks) == 0 {
			toks = []int32{0}
		}
		fmt.Fprint(stdout, strings.TrimSpace(*prompt))
	}
	s := m.NewSampler()
	err = s.Generate(toks, *n, *temp, *topK, rng.New(*seed), func(tok int32) error {
		var err error
		if ck.Vocab != nil {
			_, err = stdout.Write(ck.Vocab.Token(int(tok)))
		} else {
			_, err = fmt.Fprintf(stdout, " %d", tok)
		}
		return err
	})
	fmt.Fprintln(stdout)
	if err != nil {
		return report(stderr, "sample", err)
	}
	return 0
}

// defaultStart is the token an empty prompt starts from.
func defaultStart(ck *gpt.Checkpoint) int32 {
	for _, c := range []string{"\n", " "} {
		if ids, err := ck.Vocab.Encode(c); err == nil {
			return int32(ids[0])
		}
	}
	return 0
}
