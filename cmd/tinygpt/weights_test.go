package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/simdgpt/simdgpt/gpt"
)

// TestWeightsFlag samples and evaluates GPT-2 weights with --weights:
// the sample is what the library's sampler draws from the model converted
// by Model.WithWeights, and the eval line names the format and gives a
// loss near float32's.
func TestWeightsFlag(t *testing.T) {
	f := newGPT2Fixture(t)
	const prompt = "hello world"
	loss := func(out string) float64 {
		t.Helper()
		m := regexp.MustCompile(`cross-entropy ([0-9.]+) nats`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no loss in %q", out)
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		return v
	}
	st, out, errs := runCmd("eval", "--checkpoint", f.hfDir, "--data", f.text)
	if st != 0 {
		t.Fatalf("eval: status %d %q", st, errs)
	}
	f32 := loss(out)
	for _, c := range []struct {
		w     gpt.Weights
		bound float64 // relative change of the loss
	}{
		{gpt.WeightsBF16, 0.01}, {gpt.WeightsInt8, 0.02},
	} {
		low, err := f.m.WithWeights(c.w)
		if err != nil {
			t.Fatal(err)
		}
		st, out, errs := runCmd("sample", "--checkpoint", f.hfDir, "--prompt", prompt, "-n", "30", "--temperature", "0", "--weights", c.w.String())
		if want := expectedSample(t, low, prompt, 30, gpt.SampleOptions{}, 1); st != 0 || out != want {
			t.Errorf("sample --weights %v: status %d %q\n%q\nwant\n%q", c.w, st, errs, out, want)
		}
		st, out, errs = runCmd("eval", "--checkpoint", filepath.Join(f.hfDir, gpt.HFFile), "--data", f.text, "--weights", c.w.String())
		if st != 0 || !strings.Contains(out, fmt.Sprintf(" with %v weights\n", c.w)) {
			t.Fatalf("eval --weights %v: status %d %q %q", c.w, st, out, errs)
		}
		if l := loss(out); l == f32 || math.Abs(l-f32) > c.bound*f32 {
			t.Errorf("eval --weights %v: loss %v, float32 %v: want a change in (0, %g]", c.w, l, f32, c.bound)
		}
	}
}

// TestConvert converts GPT-2 weights (Hugging Face's, llm.c's and without
// a tokenizer) and one of our checkpoints to every format: sample and
// eval of the converted checkpoint, which embeds the tokenizer, print
// what they print for the source with that --weights (the same greedy
// and drawn tokens, the same loss), with or without --weights naming its
// format, and the source is left as it was.
func TestConvert(t *testing.T) {
	f := newGPT2Fixture(t)
	text := filepath.Join(f.dir, "chars.txt")
	if err := os.WriteFile(text, []byte(strings.Repeat("the quick brown fox jumps over the lazy dog. ", 20)), 0o644); err != nil {
		t.Fatal(err)
	}
	ours := filepath.Join(f.dir, "ours")
	if st, _, errs := runCmd(tiny(ours, "--max_iters", "5", "--threads", "1", "--data", text)...); st != 0 {
		t.Fatalf("train: %s", errs)
	}
	for _, src := range []struct {
		name, path, prompt, data string
		tokDir                   string
	}{
		{"hf", f.hfDir, "hello world", f.text, ""},
		{"llmc", f.llmcBin, "hello world", f.text, ""},
		{"hf given a tokenizer", f.noTok, "hello world", f.text, f.tokDir},
		{"ours", ours, "the ", text, ""},
	} {
		before, err := os.ReadFile(src.path)
		if err != nil && !strings.Contains(err.Error(), "is a directory") {
			t.Fatal(err)
		}
		for _, w := range []string{"f32", "bf16", "int8"} {
			out := filepath.Join(f.dir, "conv", strings.ReplaceAll(src.name, " ", "_")+"-"+w)
			args := []string{"convert", "--checkpoint", src.path, "--weights", w, "--out", out}
			tok := []string{}
			if src.tokDir != "" {
				tok = []string{"--tokenizer_dir", src.tokDir}
			}
			st, stdout, errs := runCmd(append(args, tok...)...)
			if st != 0 || errs != "" || !strings.HasPrefix(stdout, "wrote "+filepath.Join(out, gpt.CheckpointFile)+": ") || !strings.Contains(stdout, " with "+w+" weights") {
				t.Fatalf("%s %s: status %d %q %q", src.name, w, st, stdout, errs)
			}
			for _, sargs := range [][]string{
				{"sample", "--prompt", src.prompt, "-n", "20", "--temperature", "0"},
				{"sample", "--prompt", src.prompt, "-n", "20", "--temperature", "0.8", "--top_k", "5", "--seed", "3"},
				{"eval", "--data", src.data, "--block_size", "8", "--batches", "2"},
			} {
				with := func(extra ...string) []string { return append(slices.Clone(sargs), extra...) }
				want := runOK(t, append(with("--checkpoint", src.path, "--weights", w), tok...))
				got := runOK(t, with("--checkpoint", out))
				named := runOK(t, with("--checkpoint", out, "--weights", w))
				if sargs[0] == "eval" {
					// The line names the file read.
					want, got, named = lossOf(t, want), lossOf(t, got), lossOf(t, named)
				}
				if got != want || named != want {
					t.Errorf("%s %s: %q of the converted checkpoint:\n%q\n%q (--weights %s)\nwant\n%q", src.name, w, sargs, got, named, w, want)
				}
			}
		}
		if after, _ := os.ReadFile(src.path); !bytes.Equal(after, before) {
			t.Errorf("%s: converting changed the source", src.name)
		}
	}
}

// runOK runs tinygpt with args and returns its stdout, failing t unless it
// succeeds.
func runOK(t *testing.T, args []string) string {
	t.Helper()
	st, out, errs := runCmd(args...)
	if st != 0 {
		t.Fatalf("%q: status %d %q", args, st, errs)
	}
	return out
}

// lossOf returns the cross-entropy of an eval line, as printed.
func lossOf(t *testing.T, out string) string {
	t.Helper()
	m := regexp.MustCompile(`cross-entropy ([0-9.]+) nats`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no loss in %q", out)
	}
	return m[1]
}
