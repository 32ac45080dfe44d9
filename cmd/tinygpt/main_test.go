package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/simdgpt/simdgpt/gpt"
	"github.com/simdgpt/simdgpt/gpt/data"
)

func runCmd(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	st := run(args, &out, &errb)
	return st, out.String(), errb.String()
}

// tiny are the flags of a model small enough to train in a test.
func tiny(dir string, extra ...string) []string {
	return append([]string{"train", "--checkpoint_dir", dir, "--d_model", "16", "--n_heads", "2", "--n_layers", "1",
		"--block_size", "16", "--batch_size", "4", "--eval_iters", "2", "--eval_interval", "10", "--max_iters", "30"}, extra...)
}

func TestBadUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "usage: tinygpt"},
		{[]string{"fly"}, `unknown command "fly"`},
		{[]string{"train", "--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"train", "--batch_size", "many"}, `invalid value "many" for flag -batch_size`},
		{[]string{"train", "--batch_size", "0"}, "--batch_size 0 must be at least 1"},
		{[]string{"train", "--d_model", "30", "--n_heads", "4"}, "--d_model 30 is not a multiple of --n_heads 4"},
		{[]string{"train", "--epochs", "2", "--max_iters", "5"}, "not both"},
		{[]string{"train", "--lr", "-1"}, "--lr -1 must be positive"},
		{[]string{"train", "--resume", "--force"}, "contradict"},
		{[]string{"train", "extra"}, `unexpected argument "extra"`},
		{[]string{"train", "--precision", "fp8"}, `--precision: precision "fp8" is not one of f32, bf16`},
		{[]string{"sample", "--precision", "fp8"}, `--precision "fp8" must be f32 or bf16`},
		{[]string{"sample", "--kv_cache", "q8"}, `--kv_cache "q8" must be f32 or bf16`},
		{[]string{"eval", "--data", "x", "--precision", "bf8"}, `--precision "bf8" must be f32 or bf16`},
		{[]string{"sample", "-n", "-3"}, "-n -3 must be in [0, 1073741824]"},
		{[]string{"sample", "--top_k", "x"}, "invalid value"},
		// Every flag that sizes threads, shapes, counts or time, out of
		// range: refused before anything is read, naming flag, value and
		// limit.
		{[]string{"train", "--checkpoint_dir", ""}, "--checkpoint_dir is empty"},
		{[]string{"compare", "--checkpoint_dir", ""}, "--checkpoint_dir is empty"},
		{[]string{"train", "--checkpoint_every", "3000000000"}, "--checkpoint_every 3000000000 is above the limit of 2147483647"},
		{[]string{"train", "--eval_interval", "3000000000"}, "--eval_interval 3000000000 is above the limit of 2147483647"},
		{[]string{"train", "--eval_iters", "2000000"}, "--eval_iters 2000000 is above the limit of 1048576"},
		{[]string{"train", "--n_heads", "2000"}, "--n_heads 2000 is above the limit of 1024"},
		{[]string{"train", "--threads", "100000"}, "--threads 100000 is above the limit of 1024"},
		{[]string{"compare", "--threads", "100000"}, "--threads 100000 is above the limit of 1024"},
		{[]string{"compare", "--batch_size", "100000"}, "--batch_size 100000 is above the limit of 65536"},
		{[]string{"sample", "-n", "2000000000"}, "-n 2000000000 must be in [0, 1073741824]"},
		{[]string{"sample", "--top_k", "100000"}, "--top_k 100000 must be in [0, 65536]"},
		{[]string{"sample", "--checkpoint", ""}, "--checkpoint is empty"},
		{[]string{"sample", "--num_samples", "0"}, "--num_samples 0 must be in [1, 64]"},
		{[]string{"sample", "--num_samples", "-2"}, "--num_samples -2 must be in [1, 64]"},
		{[]string{"sample", "--num_samples", "65"}, "--num_samples 65 must be in [1, 64]"},
		{[]string{"sample", "--num_samples", "many"}, `invalid value "many" for flag -num_samples`},
		{[]string{"eval", "--checkpoint", "x", "--data", "y", "--threads", "100000"}, "--threads 100000 must be in [0, 1024]"},
		{[]string{"eval", "--checkpoint", "x", "--data", "y", "--batch_size", "100000"}, "--batch_size 100000 must be in [1, 65536]"},
		{[]string{"eval", "--checkpoint", "x", "--data", "y", "--block_size", "100000"}, "--block_size 100000 must be in [0, 32768]"},
		{[]string{"eval", "--checkpoint", "x", "--data", "y", "--batches", "3000000000"}, "--batches 3000000000 must be in [0, 2147483647]"},
		{[]string{"eval", "--checkpoint", "", "--data", "y"}, "--checkpoint is empty"},
		{[]string{"attn", "--checkpoint", "", "--prompt", "a"}, "--checkpoint is empty"},
		{[]string{"attn", "--checkpoint", "x", "--prompt", "a", "--out", ""}, "--out is empty"},
		{[]string{"convert"}, "--checkpoint is missing"},
		{[]string{"convert", "--checkpoint", "x"}, "--weights is missing"},
		{[]string{"convert", "--checkpoint", "x", "--weights", "q4"}, `--weights "q4" must be f32, bf16 or int8`},
		{[]string{"convert", "--checkpoint", "x", "--weights", "int8"}, "--out is missing"},
		{[]string{"convert", "--checkpoint", "x", "--weights", "int8", "--out", "y", "z"}, `unexpected argument "z"`},
		{[]string{"convert", "--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"sample", "--weights", "q4"}, `--weights "q4" must be f32, bf16 or int8`},
	} {
		st, out, errs := runCmd(c.args...)
		if st != 2 || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("%q: status %d stdout %q stderr %q; want 2 and stderr containing %q", c.args, st, out, errs, c.want)
		}
		if c.args != nil && strings.Count(errs, "\n") != 1 {
			t.Errorf("%q: stderr is not one line: %q", c.args, errs)
		}
	}
}

func TestHelp(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--help"}, []string{"train", "sample", "eval", "attn", "compare", "convert"}},
		{[]string{"convert", "--help"}, []string{"usage: tinygpt convert", "-checkpoint", "-weights", "bf16|int8|f32", "-out", "-tokenizer_dir", "no conversion", "atomically"}},
		{[]string{"eval", "--help"}, []string{"usage: tinygpt eval", "-checkpoint", "-data", "-batch_size", "-block_size", "-batches", "-tokenizer_dir", "perplexity", "-weights", "f32|bf16|int8"}},
		{[]string{"sample", "--help"}, []string{"usage: tinygpt sample", "-checkpoint", "-prompt", "-weights", "f32|bf16|int8", "converted on load", "tinygpt convert", "usage error"}},
		{[]string{"attn", "--help"}, []string{"usage: tinygpt attn", "-checkpoint", "-prompt", "-out"}},
		{[]string{"compare", "--help"}, []string{"usage: tinygpt compare", "-n_heads", "-checkpoint_dir", "1head", "-max_iters"}},
		{[]string{"train", "--help"}, []string{"usage: tinygpt train", "-batch_size", "-d_model", "-n_heads", "-n_layers", "-lr", "-checkpoint_dir", "-epochs", "-data", "-block_size", "-max_iters", "-eval_interval", "-eval_iters", "-seed", "-threads", "-resume", "-checkpoint_every", "-force", "-init", "-tokenizer", "-tokenizer_dir", "-tie_embeddings"}},
		{[]string{"sample", "-h"}, []string{"usage: tinygpt sample", "-checkpoint", "-prompt", "-n ", "-temperature", "-top_k", "-top_p", "-seed", "-tokenizer_dir"}},
	} {
		st, out, errs := runCmd(c.args...)
		if st != 0 || errs != "" {
			t.Fatalf("%q: status %d stderr %q", c.args, st, errs)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%q: help lacks %q", c.args, w)
			}
		}
	}
}

func TestTrainSampleResume(t *testing.T) {
	dir := t.TempDir()
	st, out, errs := runCmd(tiny(dir)...)
	if st != 0 {
		t.Fatalf("train: status %d\n%s\n%s", st, out, errs)
	}
	for _, w := range []string{"training on the built-in task", "step 0/30", "step 30/30: train loss", "done: 30 steps"} {
		if !strings.Contains(out, w) {
			t.Errorf("train output lacks %q:\n%s", w, out)
		}
	}
	csv, err := os.ReadFile(filepath.Join(dir, lossCSV))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
	if len(lines) != 5 || lines[0] != strings.Join(csvHeader, ",") || !strings.HasPrefix(lines[4], "30,") {
		t.Fatalf("loss.csv:\n%s", csv)
	}
	png, err := os.ReadFile(filepath.Join(dir, lossPNG))
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("loss.png: %v, %d bytes", err, len(png))
	}
	ck, err := gpt.Load(filepath.Join(dir, gpt.CheckpointFile))
	if err != nil || ck.Step != 30 || ck.Model.Config.Heads != 2 {
		t.Fatalf("checkpoint: %v, %+v", err, ck)
	}

	// The checkpoint is protected: same or different config.
	for _, args := range [][]string{tiny(dir), tiny(dir, "--d_model", "32")} {
		st, _, errs := runCmd(args...)
		if st != 1 || !strings.Contains(errs, "already holds a checkpoint at step 30") {
			t.Fatalf("second run without --resume/--force: status %d, %q", st, errs)
		}
	}
	if ck2, err := gpt.Load(filepath.Join(dir, gpt.CheckpointFile)); err != nil || ck2.Step != 30 {
		t.Fatal("refused run changed the checkpoint")
	}

	// Resume to a later step: continues the log.
	st, out, errs = runCmd("train", "--checkpoint_dir", dir, "--resume", "--max_iters", "40", "--eval_interval", "10")
	if st != 0 || !strings.Contains(out, "resuming") || !strings.Contains(out, "step 40/40") {
		t.Fatalf("resume: status %d\n%s\n%s", st, out, errs)
	}
	csv, _ = os.ReadFile(filepath.Join(dir, lossCSV))
	if lines := strings.Split(strings.TrimSpace(string(csv)), "\n"); len(lines) != 6 {
		t.Fatalf("loss.csv after resume has %d lines:\n%s", len(lines), csv)
	}
	st, _, errs = runCmd("train", "--checkpoint_dir", dir, "--resume", "--d_model", "32")
	if st != 2 || !strings.Contains(errs, "--d_model 32 differs from the checkpoint's 16") {
		t.Fatalf("resume with another width: status %d, %q", st, errs)
	}

	// Sample: streams the prompt and n characters, deterministic per seed.
	sample := func(seed string) string {
		st, out, errs := runCmd("sample", "--checkpoint", dir, "--prompt", "abc", "-n", "25", "--seed", seed, "--top_k", "5")
		if st != 0 {
			t.Fatalf("sample: status %d %q", st, errs)
		}
		return out
	}
	s1 := sample("3")
	if !strings.HasPrefix(s1, "abc") || utf8.RuneCountInString(s1) != 3+25+1 || s1 != sample("3") || s1 == sample("4") {
		t.Fatalf("samples %q %q %q", s1, sample("3"), sample("4"))
	}
	if st, _, errs := runCmd("sample", "--checkpoint", dir, "--prompt", "ABC"); st != 2 || !strings.Contains(errs, "'A'") {
		t.Fatalf("prompt outside the vocabulary: status %d %q", st, errs)
	}

	// A damaged checkpoint is reported, and a new run refuses to replace it
	// without --force.
	p := filepath.Join(dir, gpt.CheckpointFile)
	b, _ := os.ReadFile(p)
	os.WriteFile(p, b[:len(b)-10], 0o644)
	if st, _, errs := runCmd("sample", "--checkpoint", dir); st != 1 || !strings.Contains(errs, "truncated") {
		t.Fatalf("sample from a truncated checkpoint: status %d %q", st, errs)
	}
	if st, _, errs := runCmd(tiny(dir)...); st != 1 || !strings.Contains(errs, "unreadable checkpoint") {
		t.Fatalf("train over a truncated checkpoint: status %d %q", st, errs)
	}
	if st, _, errs := runCmd(tiny(dir, "--force", "--max_iters", "5")...); st != 0 {
		t.Fatalf("--force: status %d %q", st, errs)
	}
}

func TestDataErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, content, want string
	}{
		{"empty.txt", "", "empty"},
		{"bad.txt", "caf\xe9 au lait " + strings.Repeat("x", 400), "not valid UTF-8"},
		{"short.txt", "hello there", "too short"},
	} {
		p := filepath.Join(dir, c.name)
		os.WriteFile(p, []byte(c.content), 0o644)
		st, _, errs := runCmd(tiny(filepath.Join(dir, "ck"), "--data", p)...)
		if st != 1 || !strings.Contains(errs, c.want) || !strings.Contains(errs, p) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%s: status %d stderr %q; want 1 and one line naming the file with %q", c.name, st, errs, c.want)
		}
	}
}

// TestTokenFile trains on an llm.c token file for a few epochs and samples
// token ids from the result.
func TestTokenFile(t *testing.T) {
	dir := t.TempDir()
	toks := make([]uint16, 3000)
	for i := range toks {
		toks[i] = uint16(i % 50 * 7 % 50) // a cycle over 50 ids
	}
	path := filepath.Join(dir, "toks.dat")
	if err := data.WriteTokens(path, toks, true); err != nil {
		t.Fatal(err)
	}
	ck := filepath.Join(dir, "ck")
	args := dropFlag(tiny(ck, "--data", path, "--epochs", "2"), "--max_iters") // --epochs sets it
	st, out, errs := runCmd(args...)
	// 2 epochs of 2700 training tokens in steps of 4×16: ceil(5400/64) = 85.
	if st != 0 || !strings.Contains(out, "85 steps of 4×16 tokens") || !strings.Contains(out, "done: 85 steps") {
		t.Fatalf("train on tokens: status %d\n%s\n%s", st, out, errs)
	}
	st, out, errs = runCmd("sample", "--checkpoint", ck, "--prompt", "7 14 21", "-n", "5", "--temperature", "0")
	if st != 0 || !strings.HasPrefix(out, "7 14 21 ") || len(strings.Fields(out)) != 8 {
		t.Fatalf("sample token ids: status %d %q %q", st, out, errs)
	}
	if st, _, errs := runCmd("sample", "--checkpoint", ck, "--prompt", "7 x"); st != 2 || !strings.Contains(errs, `"x" is not a token id below 50`) {
		t.Fatalf("bad token prompt: status %d %q", st, errs)
	}
}

// dropFlag removes a flag and its value from args.
func dropFlag(args []string, name string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if args[i] == name {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}
