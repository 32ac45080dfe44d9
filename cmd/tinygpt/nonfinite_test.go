package main

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdgpt/simdgpt/gpt"
)

// writeOverflowing trains a tiny model in dir and rewrites its checkpoint
// with every weight ±3e38 (finite, the sign of the trained one): its
// LayerNorms overflow and its logits are NaN. It returns the checkpoint's
// path.
func writeOverflowing(t *testing.T, dir string) string {
	t.Helper()
	if st, _, errs := runCmd(tiny(dir, "--max_iters", "2", "--threads", "1")...); st != 0 {
		t.Fatalf("train: %s", errs)
	}
	path := filepath.Join(dir, gpt.CheckpointFile)
	ck, err := gpt.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range ck.Model.Params {
		ck.Model.Params[i] = float32(math.Copysign(3e38, float64(v)))
	}
	d, err := loadData("", ck.Model.Config.BlockSize)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := ck.Resume(d)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.SaveWith(path, d.Vocab, ck.Extra); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestNonFiniteWeights: finite weights whose logits are NaN are an error
// naming the checkpoint, one line and exit status 1, in every command
// that computes logits or a loss: sample (what it printed stays: the
// prompt and the line's end), eval, and a training run started from them.
func TestNonFiniteWeights(t *testing.T) {
	dir := t.TempDir()
	path := writeOverflowing(t, filepath.Join(dir, "ck"))
	text := filepath.Join(dir, "text.txt")
	mustWrite(t, text, []byte(strings.Repeat("abcab", 200)))
	for _, c := range []struct {
		name string
		args []string
		out  string // stdout
		want []string
	}{
		{"sample", []string{"sample", "--checkpoint", path, "-n", "50"}, "\n", []string{"tinygpt sample: checkpoint " + path, "the next-token logits at position 1 are not finite", "overflow float32"}},
		{"sample greedy with a prompt", []string{"sample", "--checkpoint", filepath.Dir(path), "--prompt", "ab", "--temperature", "0"}, "ab\n", []string{"checkpoint " + path, "the next-token logits at position 2 are not finite"}},
		{"sample bf16", []string{"sample", "--checkpoint", path, "--weights", "bf16"}, "\n", []string{"checkpoint " + path, "not finite"}},
		{"eval", []string{"eval", "--checkpoint", path, "--data", text}, "", []string{"tinygpt eval: checkpoint " + path, "on " + text, "the cross-entropy of batch 0 is NaN, not finite"}},
		{"train --init", []string{"train", "--checkpoint_dir", filepath.Join(dir, "ft"), "--init", path, "--data", text, "--max_iters", "2", "--eval_iters", "1"}, "",
			[]string{"step 0: the validation loss is NaN: the weights of " + path + " give logits that are not finite"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, out, errs := runCmd(c.args...)
			if st != 1 || strings.Count(errs, "\n") != 1 {
				t.Errorf("status %d, stderr %q; want 1 and one line", st, errs)
			}
			for _, w := range c.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr %q lacks %q", errs, w)
				}
			}
			if c.name != "train --init" && out != c.out {
				t.Errorf("stdout %q, want %q", out, c.out)
			}
		})
	}
}
