//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCommandsAnyGOMAXPROCS runs every command on a small model at each
// GOMAXPROCS a user may set, far beyond this machine's cores and the
// batch (nested parallel work: replicas, then the kernels' own splits),
// and fails if one does not finish in bounded time or exits non-zero.
func TestCommandsAnyGOMAXPROCS(t *testing.T) {
	if testing.Short() {
		t.Skip("the binaries are not built under -short (the qemu runs); internal/parallel's nesting test runs there")
	}
	procsList := []int{1, 2, 3, 8, 32, 64}
	dir := t.TempDir()
	text := filepath.Join(dir, "text.txt")
	mustWrite(t, text, []byte(strings.Repeat("the quick brown fox jumps over the lazy dog. ", 60)))
	for _, procs := range procsList {
		p := strconv.Itoa(procs)
		ck := filepath.Join(dir, "ck"+p)
		runs := []struct {
			bin  string
			args []string
		}{
			{"tinygpt", tiny(ck, "--max_iters", "6", "--eval_interval", "3", "--threads", p, "--data", text)},
			{"tinygpt", []string{"train", "--checkpoint_dir", ck, "--resume", "--max_iters", "8"}},
			{"tinygpt", []string{"eval", "--checkpoint", ck, "--data", text}},
			{"tinygpt", []string{"sample", "--checkpoint", ck, "--prompt", "the ", "-n", "20"}},
			{"tinygpt", []string{"attn", "--checkpoint", ck, "--prompt", "the quick", "--out", filepath.Join(dir, "attn"+p)}},
			{"tinygpt", []string{"compare", "--checkpoint_dir", filepath.Join(dir, "cmp"+p), "--d_model", "16", "--n_heads", "2",
				"--n_layers", "1", "--block_size", "8", "--batch_size", "4", "--max_iters", "4", "--eval_interval", "2", "--eval_iters", "2"}},
			{"trainbench", []string{"-no-torch", "-threads", p, "-config", "a", "-layers", "1", "-width", "32", "-heads", "2",
				"-block", "16", "-batch", "4", "-steps", "2", "-rounds", "1"}},
			{"kernelbench", []string{"-procs", p, "-kernels", "gemm", "-shapes", "sq128", "-impls", "generic,avx2", "-time", "1ms", "-count", "1"}},
		}
		for _, r := range runs {
			if r.bin == "kernelbench" && buildTags == "purego" {
				r.args[7] = "generic"
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			cmd := exec.CommandContext(ctx, binary(t, r.bin), r.args...)
			cmd.Env = append(os.Environ(), "GOMAXPROCS="+p)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := cmd.Run()
			timedOut := ctx.Err() != nil
			cancel()
			var ee *exec.ExitError
			switch {
			case timedOut:
				t.Fatalf("GOMAXPROCS=%d %s %q did not finish in 3 minutes (deadlock?); stderr:\n%s", procs, r.bin, r.args, errb.String())
			case errors.As(err, &ee):
				t.Fatalf("GOMAXPROCS=%d %s %q: exit status %d; stderr:\n%s", procs, r.bin, r.args, ee.ExitCode(), errb.String())
			case err != nil:
				t.Fatalf("GOMAXPROCS=%d %s %q: %v", procs, r.bin, r.args, err)
			}
		}
	}
}
