//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/simdgpt/simdgpt/gpt"
	"github.com/simdgpt/simdgpt/gpt/data"
	"github.com/simdgpt/simdgpt/gpt/rng"
	"github.com/simdgpt/simdgpt/internal/cmdtest"
)

// signalRun runs the built tinygpt with args, waits until ready reports
// true of its output so far (stdout, stderr), sends it sigs (the later
// ones every millisecond until it exits, when flood is set) and returns
// its exit status and output. The process must end within 10 s of the
// first signal.
func signalRun(t *testing.T, args []string, ready func(stdout, stderr string) bool, flood bool, sigs ...syscall.Signal) (int, string, string) {
	t.Helper()
	return cmdtest.Signal(t, exec.Command(binary(t, "tinygpt"), args...), ready, flood, sigs...)
}

// oneLine checks that stderr is one line holding want, with no stack trace.
func oneLine(t *testing.T, what, stderr, want string) {
	t.Helper()
	if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, want) || strings.Contains(stderr, "goroutine") {
		t.Errorf("%s: stderr %q; want one line with %q", what, stderr, want)
	}
}

// TestSignalTrain stops training runs with real signals: during an
// evaluation far too long to wait for, between steps with SIGTERM, and
// with a flood of SIGINTs while the checkpoint is saved. Each must exit
// within 10 s with the status of its signal and one line, and its
// checkpoint must resume to a complete run.
func TestSignalTrain(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	resumeArgs := func(dir string, extra ...string) []string {
		return append([]string{"train", "--checkpoint_dir", dir, "--resume"}, extra...)
	}
	for _, c := range []struct {
		name   string
		first  []string      // flags of a run completed first, if any
		args   []string      // flags of the run signalled (after "train --checkpoint_dir dir")
		ready  string        // the signal is sent once stdout holds this
		after  time.Duration // and this long after it (to reach the last step)
		sig    syscall.Signal
		flood  bool // signals every millisecond until the exit
		status int
		want   string // in the message, the last line of stdout
		step   int    // of the checkpoint; -1: at least 10
		eval   bool   // the message says an evaluation was interrupted
		resume []string
	}{
		// Half a second after the header: the trainer is made and the
		// evaluation of step 0 (a million batches) has begun.
		{"evaluation", nil, []string{"--eval_iters", "1000000"}, "training on", 500 * time.Millisecond, syscall.SIGINT, false,
			130, "interrupted by SIGINT at step 0 of 30 during its evaluation", 0, true, []string{"--eval_iters", "2"}},
		// The evaluation of the last step of a resumed run (its ten
		// steps take milliseconds).
		{"final evaluation", []string{"--max_iters", "10"}, []string{"--resume", "--max_iters", "20", "--eval_iters", "1000000"}, "resuming", 1500 * time.Millisecond, syscall.SIGINT, false,
			130, "interrupted by SIGINT at step 20 of 20 during its evaluation", 20, true, []string{"--eval_iters", "2"}},
		{"steps", nil, []string{"--max_iters", "1000000"}, "step 10/", 0, syscall.SIGTERM, false,
			143, "interrupted by SIGTERM at step", -1, false, []string{"--max_iters", "45"}},
		{"flood", nil, []string{"--max_iters", "1000000", "--checkpoint_every", "1"}, "step 10/", 0, syscall.SIGINT, true,
			130, "interrupted by SIGINT at step", -1, false, []string{"--max_iters", "45"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.first != nil {
				if st, out, errs := runBinary(t, "tinygpt", append(tiny(dir), c.first...)...); st != 0 {
					t.Fatalf("first run: status %d\n%s\n%s", st, out, errs)
				}
			}
			args := append(tiny(dir), c.args...)
			if c.first != nil {
				args = resumeArgs(dir, c.args[1:]...)
			}
			var seen time.Time
			ready := func(out, _ string) bool {
				if seen.IsZero() && strings.Contains(out, c.ready) {
					seen = time.Now()
				}
				return !seen.IsZero() && time.Since(seen) >= c.after
			}
			st, out, errs := signalRun(t, args, ready, c.flood, c.sig)
			if st != c.status || !strings.Contains(out, c.want) || errs != "" {
				t.Fatalf("status %d, stdout:\n%s\nstderr %q; want %d and %q", st, out, errs, c.status, c.want)
			}
			if strings.Count(out[strings.Index(out, "interrupted"):], "\n") != 1 {
				t.Errorf("the message is not one last line:\n%s", out)
			}
			ck, err := gpt.Load(filepath.Join(dir, gpt.CheckpointFile))
			if err != nil {
				t.Fatal(err)
			}
			if c.step >= 0 && ck.Step != c.step || c.step < 0 && ck.Step < 10 {
				t.Fatalf("checkpoint at step %d, want %d", ck.Step, c.step)
			}
			last := func() []string {
				rows, _ := readCSV(filepath.Join(dir, lossCSV), ck.Step)
				if len(rows) == 0 {
					return nil
				}
				return rows[len(rows)-1]
			}
			if row := last(); c.eval && row != nil && row[0] == strconv.Itoa(ck.Step) {
				t.Fatalf("the interrupted evaluation of step %d was logged: %v", ck.Step, row)
			}
			st, o, errs := runBinary(t, "tinygpt", resumeArgs(dir, c.resume...)...)
			if st != 0 || !strings.Contains(o, "done:") {
				t.Fatalf("resume: status %d\n%s\n%s", st, o, errs)
			}
			if row := last(); c.eval && (row == nil || row[0] != strconv.Itoa(ck.Step) || row[2] == "") {
				t.Fatalf("the resumed run did not evaluate step %d: last row %v", ck.Step, row)
			}
		})
	}
}

// TestSignalEvalSample stops eval on a file of many batches and sample
// asked for a million tokens with SIGINT; each must exit within 10 s with
// status 130 and one line on stderr, and eval must print no result.
func TestSignalEvalSample(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	dir := t.TempDir()
	ckDir := filepath.Join(dir, "ck")
	// A model large enough that the file takes minutes to evaluate.
	if st, out, errs := runBinary(t, "tinygpt", "train", "--checkpoint_dir", ckDir, "--d_model", "256", "--n_layers", "4",
		"--block_size", "64", "--batch_size", "2", "--max_iters", "1", "--eval_iters", "1"); st != 0 {
		t.Fatalf("train: %d\n%s\n%s", st, out, errs)
	}
	r := rng.New(3)
	toks := make([]uint16, 1<<20)
	for i := range toks {
		toks[i] = uint16(r.Intn(8))
	}
	tokPath := filepath.Join(dir, "toks.tok")
	if err := data.WriteTokens(tokPath, toks, false); err != nil {
		t.Fatal(err)
	}
	started := func(time.Duration) func(string, string) bool {
		t0 := time.Now()
		return func(string, string) bool { return time.Since(t0) > 500*time.Millisecond }
	}
	st, out, errs := signalRun(t, []string{"eval", "--checkpoint", ckDir, "--data", tokPath}, started(0), false, syscall.SIGINT)
	if st != 130 || out != "" {
		t.Errorf("eval: status %d, stdout %q; want 130 and no result", st, out)
	}
	oneLine(t, "eval", errs, "tinygpt eval: interrupted by SIGINT after ")

	st, out, errs = signalRun(t, []string{"sample", "--checkpoint", ckDir, "-n", "1000000"},
		func(out, _ string) bool { return len(out) > 100 }, false, syscall.SIGINT)
	if st != 130 || !strings.HasSuffix(out, "\n") {
		t.Errorf("sample: status %d, stdout ends %q; want 130 and a newline", st, out[max(0, len(out)-20):])
	}
	oneLine(t, "sample", errs, "tinygpt sample: interrupted by SIGINT after ")
	if _, err := os.Stat(ckDir); err != nil {
		t.Fatal(err)
	}
}
