//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/simdgpt/simdgpt/gpt"
	"github.com/simdgpt/simdgpt/gpt/rng"
)

// TestCrashResume kills the trainer with SIGKILL at moments drawn from a
// seeded schedule (mid-step, mid-save, mid-log), in at least 20 runs. After
// each, the directory must hold a loadable checkpoint, no later than the
// steps the run reported and no earlier than the one before the last
// evaluation it printed, and --resume from it must end with the parameters
// and validation losses of an uninterrupted run, bit for bit.
func TestCrashResume(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary some 50 times")
	}
	const steps = 30
	args := func(dir string) []string {
		return []string{"train", "--checkpoint_dir", dir, "--d_model", "16", "--n_heads", "2", "--n_layers", "1",
			"--block_size", "16", "--batch_size", "4", "--eval_iters", "1", "--eval_interval", "5",
			"--max_iters", strconv.Itoa(steps), "--threads", "1", "--checkpoint_every", "1"}
	}
	root := t.TempDir()
	ref := filepath.Join(root, "ref")
	binary(t, "tinygpt") // built before the timing
	t0 := time.Now()
	if st, out, errs := runBinary(t, "tinygpt", args(ref)...); st != 0 {
		t.Fatalf("reference run: status %d\n%s\n%s", st, out, errs)
	}
	runTime := time.Since(t0)
	want, err := gpt.Load(filepath.Join(ref, gpt.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	wantVal := valLosses(t, ref)

	r := rng.New(13)
	kills := 0
	var at []string // checkpoint step of each kill ("-": none yet)
	defer func() { t.Logf("%d kills; checkpoint steps found: %s", kills, strings.Join(at, " ")) }()
	for run := 0; kills < 20; run++ {
		if run == 60 {
			t.Fatalf("only %d of 60 runs were killed before they finished (the reference run took %v)", kills, runTime)
		}
		dir := filepath.Join(root, "run"+strconv.Itoa(run))
		cmd := exec.Command(binary(t, "tinygpt"), args(dir)...)
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		delay := time.Duration((0.05 + 0.95*r.Float64()) * float64(runTime))
		start := time.Now()
		timer := time.AfterFunc(delay, func() { cmd.Process.Signal(syscall.SIGKILL) })
		err := cmd.Wait()
		timer.Stop()
		if err == nil {
			// Finished before the kill: the reference run was slowed by
			// the machine's load. Draw later delays within this run's time.
			runTime = min(runTime, time.Since(start))
			continue
		}
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("run %d: %v\n%s", run, err, out.String())
		}
		kills++
		ckPath := filepath.Join(dir, gpt.CheckpointFile)
		lastEval := -1
		for _, line := range strings.Split(out.String(), "\n") {
			var s, total int
			if n, _ := fmtSscanf(line, &s, &total); n == 2 {
				lastEval = s
			}
		}
		resume := []string{"train", "--checkpoint_dir", dir, "--resume"}
		if _, err := os.Stat(ckPath); err != nil {
			// Killed before the first save (the evaluation of step 0 and
			// the first step come first): start again.
			if lastEval > 1 {
				t.Fatalf("run %d: no checkpoint after the evaluation of step %d was printed", run, lastEval)
			}
			resume = args(dir)
			resume = append(resume, "--force")
			at = append(at, "-")
		} else {
			ck, err := gpt.Load(ckPath)
			if err != nil {
				t.Fatalf("run %d killed after %v: the checkpoint does not load: %v", run, delay, err)
			}
			if ck.Step > steps || ck.Step < lastEval-1 {
				t.Fatalf("run %d: checkpoint at step %d, the run printed the evaluation of step %d", run, ck.Step, lastEval)
			}
			at = append(at, strconv.Itoa(ck.Step))
			if ck.Step == steps {
				continue // killed after the last save
			}
		}
		if st, out, errs := runBinary(t, "tinygpt", resume...); st != 0 {
			t.Fatalf("run %d: resume: status %d\n%s\n%s", run, st, out, errs)
		}
		got, err := gpt.Load(ckPath)
		if err != nil {
			t.Fatal(err)
		}
		if got.Step != steps {
			t.Fatalf("run %d: resumed to step %d, want %d", run, got.Step, steps)
		}
		for i, p := range want.Model.Params {
			if got.Model.Params[i] != p {
				t.Fatalf("run %d (killed after %v): parameter %d is %v after the resume, %v uninterrupted", run, delay, i, got.Model.Params[i], p)
			}
		}
		for i := range want.Opt.M {
			if got.Opt.M[i] != want.Opt.M[i] || got.Opt.V[i] != want.Opt.V[i] {
				t.Fatalf("run %d: optimizer moment %d differs from the uninterrupted run's", run, i)
			}
		}
		if gotVal := valLosses(t, dir); gotVal != wantVal {
			t.Fatalf("run %d: validation losses\n%s\nuninterrupted:\n%s", run, gotVal, wantVal)
		}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if strings.Contains(e.Name(), ".tmp") {
				t.Errorf("run %d: %s left after the resume", run, e.Name())
			}
		}
		os.RemoveAll(dir)
	}
}

// fmtSscanf reads "step S/T:" of an evaluation line.
func fmtSscanf(line string, s, total *int) (int, error) {
	rest, ok := strings.CutPrefix(line, "step ")
	if !ok {
		return 0, nil
	}
	a, b, ok := strings.Cut(rest, "/")
	if !ok {
		return 0, nil
	}
	b, _, ok = strings.Cut(b, ":")
	if !ok {
		return 0, nil
	}
	var err error
	if *s, err = strconv.Atoi(a); err != nil {
		return 0, err
	}
	if *total, err = strconv.Atoi(b); err != nil {
		return 1, err
	}
	return 2, nil
}

// valLosses returns the step and validation loss columns of dir's loss.csv.
func valLosses(t *testing.T, dir string) string {
	t.Helper()
	rows, err := readCSV(filepath.Join(dir, lossCSV), steps1e9)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(r[0] + " " + r[2] + "\n")
	}
	return b.String()
}

const steps1e9 = 1e9
