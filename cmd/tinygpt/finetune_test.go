package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/simdgpt/simdgpt/gpt"
	"github.com/simdgpt/simdgpt/gpt/data"
)

// snapshotWriter copies the checkpoint of dir into snap when the output
// reaches the line that starts with at (the step after a save).
type snapshotWriter struct {
	out           bytes.Buffer
	at, dir, snap string
	err           error
	done          bool
}

func (w *snapshotWriter) Write(b []byte) (int, error) {
	w.out.Write(b)
	if !w.done && strings.Contains(w.out.String(), "\n"+w.at) {
		w.done = true
		ck, err := os.ReadFile(filepath.Join(w.dir, gpt.CheckpointFile))
		if err == nil {
			err = os.MkdirAll(w.snap, 0o755)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(w.snap, gpt.CheckpointFile), ck, 0o644)
		}
		w.err = err
	}
	return len(b), nil
}

// trainAndResume runs `train args` for 8 steps with a checkpoint at step
// 4, copies that checkpoint away mid-run, resumes the copy to step 8 and
// checks that it ends bit for bit where the uninterrupted run did. It
// returns the final checkpoint and the first run's output.
func trainAndResume(t *testing.T, dir string, args ...string) (*gpt.Checkpoint, string) {
	t.Helper()
	full, snap := filepath.Join(dir, "full"), filepath.Join(dir, "snap")
	args = append([]string{"train", "--checkpoint_dir", full, "--max_iters", "8", "--checkpoint_every", "4",
		"--eval_interval", "1", "--eval_iters", "1", "--threads", "1", "--batch_size", "2"}, args...)
	w := &snapshotWriter{at: "step 5/8:", dir: full, snap: snap}
	var errb bytes.Buffer
	if st := run(args, w, &errb); st != 0 || w.err != nil || !w.done {
		t.Fatalf("%q: status %d, snapshot %v (taken: %v)\n%s\n%s", args, st, w.err, w.done, w.out.String(), errb.String())
	}
	st, out, errs := runCmd("train", "--checkpoint_dir", snap, "--resume")
	if st != 0 || !strings.Contains(out, "resuming") || !strings.Contains(out, "at step 4 of 8") || !strings.Contains(out, "done: 8 steps") {
		t.Fatalf("resume: status %d\n%s\n%s", st, out, errs)
	}
	want, err := gpt.Load(filepath.Join(full, gpt.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	got, err := gpt.Load(filepath.Join(snap, gpt.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	if got.Step != 8 || !slices.Equal(got.Model.Params, want.Model.Params) || !slices.Equal(got.Opt.M, want.Opt.M) ||
		!slices.Equal(got.Opt.V, want.Opt.V) || got.RNGState != want.RNGState {
		t.Fatalf("%q: the resumed run ends at step %d with other parameters or optimizer state than the uninterrupted run", args, got.Step)
	}
	for k, v := range want.Extra {
		if got.Extra[k] != v {
			t.Errorf("metadata %s differs after the resume: %.80q, want %.80q", k, got.Extra[k], v)
		}
	}
	return want, w.out.String()
}

// TestFineTuneGPT2 fine-tunes the GPT-2-shaped model in both formats on
// text tokenized with its BPE: the run starts from its weights (at a tiny
// learning rate they barely move), keeps its layout with the block size
// cut, embeds the tokenizer, resumes bit for bit, and its checkpoint
// samples through the embedded tokenizer from anywhere.
func TestFineTuneGPT2(t *testing.T) {
	f := newGPT2Fixture(t)
	for _, c := range []struct {
		name, init string
	}{{"hf", f.hfDir}, {"llmc", f.llmcBin}} {
		dir := filepath.Join(f.dir, "ft-"+c.name)
		ck, out := trainAndResume(t, dir, "--init", c.init, "--data", f.text, "--block_size", "16", "--lr", "1e-6")
		if !strings.Contains(out, "fine-tuning GPT-2 weights") || !strings.Contains(out, "GPT-2 BPE of 272 tokens") {
			t.Errorf("%s: output\n%s", c.name, out)
		}
		cfg := ck.Model.Config
		if cfg.BlockSize != 16 || !cfg.TieEmbeddings || cfg.Vocab != testVocab || cfg.Width != 16 || cfg.Heads != 2 || ck.Vocab != nil || ck.Extra[metaTokenizer] != kindBPE {
			t.Fatalf("%s: checkpoint config %+v, tokenizer %q", c.name, cfg, ck.Extra[metaTokenizer])
		}
		cropped, err := f.m.WithBlockSize(16)
		if err != nil {
			t.Fatal(err)
		}
		var diff float64
		for i, v := range ck.Model.Params {
			diff = max(diff, math.Abs(float64(v-cropped.Params[i])))
		}
		if diff == 0 || diff > 1e-4 {
			t.Errorf("%s: parameters moved by up to %g from the --init weights at lr 1e-6", c.name, diff)
		}
		// The checkpoint alone, moved away from every tokenizer file.
		moved := filepath.Join(f.dir, "moved-"+c.name+".safetensors")
		os.Rename(filepath.Join(dir, "full", gpt.CheckpointFile), moved)
		st, out, errs := runCmd("sample", "--checkpoint", moved, "--prompt", "hello world", "-n", "20", "--temperature", "0")
		if want := expectedSample(t, ck.Model, "hello world", 20, gpt.SampleOptions{}, 1); st != 0 || out != want {
			t.Errorf("%s: sample from the fine-tuned checkpoint: status %d %q\n%q\nwant\n%q", c.name, st, errs, out, want)
		}
		st, out, errs = runCmd("eval", "--checkpoint", moved, "--data", f.text, "--batches", "2")
		if st != 0 || !strings.Contains(out, "over 128 tokens (2 batches of 4×16)") {
			t.Errorf("%s: eval of the fine-tuned checkpoint: status %d %q %q", c.name, st, out, errs)
		}
	}
}

// TestFineTuneGPT2TokenFile fine-tunes GPT-2 weights that have no
// tokenizer beside them on a token file, which needs none: the run
// resumes bit for bit and its checkpoint, a model of token ids, evaluates
// the file and samples token ids. Text data is still refused, naming the
// directory and --tokenizer_dir.
func TestFineTuneGPT2TokenFile(t *testing.T) {
	f := newGPT2Fixture(t)
	var toks []uint16
	for _, id := range testTokenizer(t).EncodeWithSpecial(string(must(os.ReadFile(f.text)))) {
		toks = append(toks, uint16(id))
	}
	tokFile := filepath.Join(f.dir, "toks.bin")
	if err := data.WriteTokens(tokFile, toks, true); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(f.dir, "ft")
	ck, out := trainAndResume(t, dir, "--init", f.noTok, "--data", tokFile, "--block_size", "16", "--lr", "1e-6")
	if !strings.Contains(out, "fine-tuning GPT-2 weights") {
		t.Errorf("output\n%s", out)
	}
	if ck.Vocab != nil || ck.Extra[metaTokenizer] != "" || ck.Model.Config.Vocab != testVocab {
		t.Fatalf("checkpoint: vocabulary %v, tokenizer %q, %d tokens; want a model of %d token ids", ck.Vocab, ck.Extra[metaTokenizer], ck.Model.Config.Vocab, testVocab)
	}
	full := filepath.Join(dir, "full")
	if st, out, errs := runCmd("eval", "--checkpoint", full, "--data", tokFile, "--batches", "2"); st != 0 || !strings.Contains(out, "over 128 tokens (2 batches of 4×16)") {
		t.Errorf("eval of the fine-tuned checkpoint: status %d %q %q", st, out, errs)
	}
	if st, out, errs := runCmd("sample", "--checkpoint", full, "--prompt", "1 2", "-n", "3"); st != 0 || len(strings.Fields(out)) != 5 {
		t.Errorf("sample of the fine-tuned checkpoint: status %d %q %q", st, out, errs)
	}
	st, _, errs := runCmd("train", "--checkpoint_dir", filepath.Join(f.dir, "text"), "--init", f.noTok, "--data", f.text)
	if st != 1 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "no tokenizer for") || !strings.Contains(errs, f.noTok) || !strings.Contains(errs, "--tokenizer_dir") {
		t.Errorf("--init on text without a tokenizer: status %d %q", st, errs)
	}
}

// TestFineTuneOurs fine-tunes one of our character checkpoints: its
// vocabulary is kept (the new text uses only some of its characters), a
// character outside it is refused, and the run resumes bit for bit.
func TestFineTuneOurs(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	text := filepath.Join(dir, "base.txt")
	mustWrite(t, text, []byte(strings.Repeat("the quick brown fox jumps over the lazy dog. ", 40)))
	if st, _, errs := runCmd(tiny(base, "--max_iters", "5", "--data", text)...); st != 0 {
		t.Fatalf("train: %s", errs)
	}
	orig, err := gpt.Load(filepath.Join(base, gpt.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub.txt")
	mustWrite(t, sub, []byte(strings.Repeat("the lazy dog. ", 100)))
	ck, out := trainAndResume(t, filepath.Join(dir, "ft"), "--init", base, "--data", sub)
	if !strings.Contains(out, "fine-tuning checkpoint") || ck.Vocab == nil || ck.Vocab.String() != orig.Vocab.String() || ck.Model.Config != orig.Model.Config {
		t.Fatalf("fine-tuned vocabulary %v, config %+v; want %q, %+v\n%s", ck.Vocab, ck.Model.Config, orig.Vocab.String(), orig.Model.Config, out)
	}
	bad := filepath.Join(dir, "bad.txt")
	mustWrite(t, bad, []byte(strings.Repeat("the lazy cat! ", 100)))
	st, _, errs := runCmd("train", "--checkpoint_dir", filepath.Join(dir, "ft2"), "--init", base, "--data", bad)
	if st != 1 || !strings.Contains(errs, bad) || !strings.Contains(errs, "'!'") {
		t.Errorf("text outside the vocabulary: status %d %q", st, errs)
	}
}

// TestTrainGPT2Tokenizer trains a new model with tied embeddings on the
// BPE tokens of a text: its vocabulary is the tokenizer's, which the
// checkpoint embeds; it resumes bit for bit and samples BPE text.
func TestTrainGPT2Tokenizer(t *testing.T) {
	f := newGPT2Fixture(t)
	dir := filepath.Join(f.dir, "new")
	ck, out := trainAndResume(t, dir, "--tokenizer", "gpt2", "--tokenizer_dir", f.tokDir, "--data", f.text, "--tie_embeddings",
		"--d_model", "16", "--n_heads", "2", "--n_layers", "1", "--block_size", "16")
	cfg := ck.Model.Config
	if !strings.Contains(out, "GPT-2 BPE of 272 tokens") || cfg.Vocab != testVocab || !cfg.TieEmbeddings || ck.Extra[metaTokenizer] != kindBPE || ck.Vocab != nil {
		t.Fatalf("config %+v, tokenizer %q\n%s", cfg, ck.Extra[metaTokenizer], out)
	}
	st, got, errs := runCmd("sample", "--checkpoint", filepath.Join(dir, "snap"), "--prompt", "the world", "-n", "12", "--seed", "3", "--top_p", "0.8")
	if want := expectedSample(t, ck.Model, "the world", 12, gpt.SampleOptions{Temperature: 1, TopP: 0.8}, 3); st != 0 || got != want {
		t.Errorf("sample: status %d %q\n%q\nwant\n%q", st, errs, got, want)
	}
}
