package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdgpt/simdgpt/gpt"
)

// TestAddressSpaceLimit runs the commands under ulimit -v (RLIMIT_AS) of
// about 3 GB, where what they need does not fit in the address space the
// limit leaves: each is refused with one line naming the limit that
// binds, exit status 1, never the Go runtime's "fatal error: out of
// memory" and its stack trace. attn's 1,200-token prompt on a block-2048
// checkpoint needs gigabytes for its images. eval of a batch of 64
// sequences of 2048 tokens, which needed B·H·T² attention probabilities
// through the training forward, runs under the same limit: the inference
// forward keeps one pass of rows per thread, whatever the batch.
func TestAddressSpaceLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("the binaries are not built under -short")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to set ulimit -v")
	}
	dir := t.TempDir()
	text := filepath.Join(dir, "text.txt")
	mustWrite(t, text, []byte(strings.Repeat("the quick brown fox jumps over the lazy dog. ", 3000)))
	ck := filepath.Join(dir, "b2048")
	if st, _, errs := runCmd("train", "--checkpoint_dir", ck, "--block_size", "2048", "--batch_size", "1", "--max_iters", "1", "--eval_iters", "1", "--data", text, "--threads", "1"); st != 0 {
		t.Fatalf("train: %s", errs)
	}
	bin := binary(t, "tinygpt")
	t.Run("eval of a large batch fits", func(t *testing.T) {
		cmd := exec.Command("bash", `-c`, `ulimit -v 3000000 && exec "$0" "$@"`, bin, "eval", "--checkpoint", ck, "--data", text, "--batch_size", "64", "--batches", "1")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "cross-entropy") {
			t.Errorf("eval of 64×2048 tokens under ulimit -v 3000000: %v\n%.2000s", err, out)
		}
	})
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"attn of 1200 tokens", []string{"attn", "--checkpoint", ck, "--prompt", strings.Repeat("the quick ", 120), "--out", filepath.Join(dir, "attn")}, "drawing the attention of 1200 tokens"},
		{"train of a large batch", []string{"train", "--checkpoint_dir", filepath.Join(dir, "new"), "--block_size", "2048", "--batch_size", "64", "--data", text}, "training"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command("bash", append([]string{"-c", `ulimit -v 3000000 && exec "$0" "$@"`, bin}, c.args...)...)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")} // no gpt.MemoryEnv, no GOMEMLIMIT
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := cmd.Run()
			var ee *exec.ExitError
			st := 0
			if errors.As(err, &ee) {
				st = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			e := errb.String()
			if st != 1 || strings.Count(e, "\n") != 1 || !strings.Contains(e, c.want) || !strings.Contains(e, "needs about") ||
				!strings.Contains(e, "is available (ulimit -v (RLIMIT_AS) less the address space mapped)") {
				t.Errorf("exit status %d, stderr %q; want 1 and one line saying what needs how much memory under ulimit -v", st, firstLine(e))
			}
			if strings.Contains(e, "fatal error") || strings.Contains(e, "goroutine ") {
				t.Errorf("the runtime died:\n%.2000s", e)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "new", gpt.CheckpointFile)); err == nil {
		t.Error("a refused training run wrote a checkpoint")
	}
}
