//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/simdgpt/simdgpt/gpt"
	"github.com/simdgpt/simdgpt/gpt/safetensors"
)

// TestResumeKeepsSettings: the thread count and the evaluation and
// checkpoint intervals are saved, and a bare --resume takes them over; a
// different --threads is allowed with a note.
func TestResumeKeepsSettings(t *testing.T) {
	dir := t.TempDir()
	if st, _, errs := runCmd(tiny(dir, "--max_iters", "6", "--threads", "1", "--eval_interval", "5", "--eval_iters", "1", "--checkpoint_every", "3")...); st != 0 {
		t.Fatalf("train: %s", errs)
	}
	ck, err := gpt.Load(filepath.Join(dir, gpt.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	var rs runSettings
	if err := json.Unmarshal([]byte(ck.Extra[runMeta]), &rs); err != nil || rs != (runSettings{Threads: 1, EvalInterval: 5, EvalIters: 1, CheckpointEvery: 3}) {
		t.Fatalf("saved settings %q: %+v %v", ck.Extra[runMeta], rs, err)
	}
	// Stale temporary files of a killed save are removed.
	stale := filepath.Join(dir, ".checkpoint.safetensors.tmp12345")
	os.WriteFile(stale, []byte("partial"), 0o644)
	st, out, errs := runCmd("train", "--checkpoint_dir", dir, "--resume", "--max_iters", "12")
	if st != 0 || !strings.Contains(out, "step 10/12: train loss") || strings.Contains(out, "note:") {
		t.Fatalf("resume: status %d\n%s\n%s", st, out, errs)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Error("the stale temporary file is still there")
	}
	st, out, errs = runCmd("train", "--checkpoint_dir", dir, "--resume", "--max_iters", "14", "--threads", "2")
	if st != 0 || !strings.Contains(out, "note: --threads 2 differs from the run's 1") {
		t.Fatalf("resume with --threads 2: status %d\n%s\n%s", st, out, errs)
	}
}

// TestResumeDataPaths: --resume --data accepts the training file by a
// relative path when the checkpoint holds its absolute one.
func TestResumeDataPaths(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "text.txt")
	os.WriteFile(text, []byte(strings.Repeat("the quick brown fox jumps over the lazy dog. ", 40)), 0o644)
	ck := filepath.Join(dir, "ck")
	if st, _, errs := runCmd(tiny(ck, "--max_iters", "4", "--data", text)...); st != 0 {
		t.Fatalf("train: %s", errs)
	}
	t.Chdir(dir)
	for _, p := range []string{"text.txt", "./text.txt", text} {
		st, out, errs := runCmd("train", "--checkpoint_dir", "ck", "--resume", "--data", p, "--max_iters", "5")
		if st != 0 || !strings.Contains(out, "done: 5 steps") {
			t.Fatalf("--resume --data %s: status %d\n%s\n%s", p, st, out, errs)
		}
		os.Remove(filepath.Join(ck, gpt.CheckpointFile))
		if st, _, errs := runCmd(tiny("ck", "--max_iters", "4", "--data", text)...); st != 0 {
			t.Fatalf("train: %s", errs)
		}
	}
}

// TestResumeMovedData: a checkpoint keeps the size and SHA-256 of its
// training file, so --resume --data accepts the file at another path (and
// later saves record that path); a different file of the same size is
// refused naming --data and both paths, a missing training file names
// --data, and a checkpoint without the digest (written by an older
// version) accepts only its saved file.
func TestResumeMovedData(t *testing.T) {
	dir := t.TempDir()
	text := strings.Repeat("the quick brown fox jumps over the lazy dog. ", 40)
	orig, moved, other := filepath.Join(dir, "text.txt"), filepath.Join(dir, "sub", "moved.txt"), filepath.Join(dir, "other.txt")
	mustWrite(t, orig, []byte(text))
	mustWrite(t, other, []byte(strings.Replace(text, "lazy", "hazy", 1)))
	if err := os.Mkdir(filepath.Dir(moved), 0o755); err != nil {
		t.Fatal(err)
	}
	ckDir := filepath.Join(dir, "ck")
	ckPath := filepath.Join(ckDir, gpt.CheckpointFile)
	if st, _, errs := runCmd(tiny(ckDir, "--max_iters", "4", "--data", orig)...); st != 0 {
		t.Fatalf("train: %s", errs)
	}
	settings := func() runSettings {
		t.Helper()
		ck, err := gpt.Load(ckPath)
		if err != nil {
			t.Fatal(err)
		}
		var rs runSettings
		if err := json.Unmarshal([]byte(ck.Extra[runMeta]), &rs); err != nil {
			t.Fatal(err)
		}
		return rs
	}
	if rs := settings(); rs.DataBytes != int64(len(text)) || len(rs.DataSHA256) != 64 {
		t.Fatalf("saved digest: %d bytes, %q", rs.DataBytes, rs.DataSHA256)
	}
	if err := os.Rename(orig, moved); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		args   []string
		status int
		want   []string
	}{
		{"gone", nil, 1, []string{"training file " + orig + " is gone; give its new path with --data"}},
		{"other contents", []string{"--data", other}, 2, []string{"--data " + other + " is not the file the checkpoint was trained on (" + orig + "): its contents differ"}},
		{"missing", []string{"--data", orig}, 1, []string{orig, "no such file"}},
	} {
		st, _, errs := runCmd(append([]string{"train", "--checkpoint_dir", ckDir, "--resume", "--max_iters", "6"}, c.args...)...)
		if st != c.status || strings.Count(errs, "\n") != 1 {
			t.Errorf("%s: status %d, stderr %q; want %d and one line", c.name, st, errs, c.status)
		}
		for _, w := range c.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%s: stderr %q lacks %q", c.name, errs, w)
			}
		}
	}
	st, out, errs := runCmd("train", "--checkpoint_dir", ckDir, "--resume", "--max_iters", "6", "--data", moved)
	if st != 0 || !strings.Contains(out, "done: 6 steps") {
		t.Fatalf("--resume --data %s: status %d\n%s\n%s", moved, st, out, errs)
	}
	ck, err := gpt.Load(ckPath)
	if err != nil || ck.Train.Data != moved || ck.Step != 6 {
		t.Fatalf("after the resume: %v; data %q step %d, want %q and 6", err, ck.Train.Data, ck.Step, moved)
	}
	// The moved file is now the run's: a bare --resume continues on it.
	if st, out, errs := runCmd("train", "--checkpoint_dir", ckDir, "--resume", "--max_iters", "8"); st != 0 || !strings.Contains(out, "done: 8 steps") {
		t.Fatalf("bare --resume after the move: status %d\n%s\n%s", st, out, errs)
	}

	// Without the digest: only the saved path.
	b, err := os.ReadFile(ckPath)
	if err != nil {
		t.Fatal(err)
	}
	ts, meta, err := safetensors.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	rs := settings()
	rs.DataBytes, rs.DataSHA256 = 0, ""
	js, _ := json.Marshal(rs)
	meta[runMeta] = string(js)
	if b, err = safetensors.Encode(ts, meta); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, ckPath, b)
	if err := os.Rename(moved, orig); err != nil {
		t.Fatal(err)
	}
	st, _, errs = runCmd("train", "--checkpoint_dir", ckDir, "--resume", "--max_iters", "10", "--data", filepath.Join(dir, "text.txt"))
	if st != 2 || !strings.Contains(errs, "--data "+orig+" is not the file the checkpoint was trained on ("+moved+"; a resumed run keeps its data)") {
		t.Errorf("old checkpoint, moved data: status %d, stderr %q", st, errs)
	}
	if err := os.Rename(orig, moved); err != nil {
		t.Fatal(err)
	}
	if st, out, errs := runCmd("train", "--checkpoint_dir", ckDir, "--resume", "--max_iters", "10", "--data", moved); st != 0 || !strings.Contains(out, "done: 10 steps") {
		t.Fatalf("old checkpoint, its own data: status %d\n%s\n%s", st, out, errs)
	}
	if rs := settings(); rs.DataBytes != int64(len(text)) || len(rs.DataSHA256) != 64 {
		t.Errorf("a resumed old checkpoint saves no digest: %+v", rs)
	}
}

// TestResumeWithoutLossLog: a finished run whose loss.csv was deleted
// resumes to more steps (it panicked at the end, indexing an empty log).
func TestResumeWithoutLossLog(t *testing.T) {
	dir := t.TempDir()
	if st, _, errs := runCmd(tiny(dir, "--max_iters", "4")...); st != 0 {
		t.Fatalf("train: %s", errs)
	}
	os.Remove(filepath.Join(dir, lossCSV))
	st, out, errs := runCmd("train", "--checkpoint_dir", dir, "--resume", "--max_iters", "6")
	if st != 0 || !strings.Contains(out, "done: 6 steps") {
		t.Fatalf("resume: status %d\n%s\n%s", st, out, errs)
	}
	rows, err := readCSV(filepath.Join(dir, lossCSV), 100)
	if err != nil || len(rows) != 1 || rows[0][0] != "6" {
		t.Errorf("loss.csv after the resume: %v %v", rows, err)
	}
}

// TestLossLogFailureKeepsTraining: a loss.png that cannot be written in
// the middle of a run (here a link into a directory removed after the
// checks at the start, made between a run and its resumption) costs no
// training: the checkpoint of the step is saved, the run stops with the
// reason and the command that continues it, which then works.
func TestLossLogFailureKeepsTraining(t *testing.T) {
	dir := t.TempDir()
	if st, _, errs := runCmd(tiny(dir, "--max_iters", "5", "--eval_interval", "4", "--checkpoint_every", "0")...); st != 0 {
		t.Fatalf("train: %s", errs)
	}
	png, gone := filepath.Join(dir, lossPNG), filepath.Join(dir, "gone")
	os.Remove(png)
	if err := os.Symlink(filepath.Join("gone", lossPNG), png); err != nil {
		t.Fatal(err)
	}
	// The directory is there for the checks and gone for the run.
	startedHook = func() { os.RemoveAll(gone) }
	defer func() { startedHook = nil }()
	mkGone := func() {
		if err := os.Mkdir(gone, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mkGone()
	st, _, errs := runCmd("train", "--checkpoint_dir", dir, "--resume", "--max_iters", "12")
	if st != 1 || !strings.Contains(errs, png) || !strings.Contains(errs, "checkpoint of step 8 saved") || !strings.Contains(errs, "--resume") {
		t.Fatalf("status %d, stderr %q; want 1 and the checkpoint of step 8 saved", st, errs)
	}
	if ck, err := gpt.Load(filepath.Join(dir, gpt.CheckpointFile)); err != nil || ck.Step != 8 {
		t.Fatalf("checkpoint after the failure: %v", err)
	}
	// At the last step: the run is complete.
	mkGone()
	st, _, errs = runCmd("train", "--checkpoint_dir", dir, "--resume", "--max_iters", "10")
	if st != 1 || !strings.Contains(errs, "the run is complete: checkpoint of step 10 saved") {
		t.Fatalf("status %d, stderr %q", st, errs)
	}
	os.Remove(png)
	if st, out, errs := runCmd("train", "--checkpoint_dir", dir, "--resume", "--max_iters", "12"); st != 0 || !strings.Contains(out, "done: 12 steps") {
		t.Fatalf("resume after the fix: status %d\n%s\n%s", st, out, errs)
	}
}

// TestResumeThreads: the thread count a resumed run takes when the memory
// here cannot hold the run's own.
func TestResumeThreads(t *testing.T) {
	cpus := runtime.NumCPU()
	for _, c := range []struct {
		name      string
		saved     int
		given     bool
		fits      int // the most threads the memory holds (0: none)
		want      int
		wantNote  bool
		wantError bool
	}{
		{"fits", 64, false, 64, 64, false, false},
		{"this machine's CPUs", cpus + 62, false, cpus, cpus, true, false},
		{"one thread", cpus + 62, false, 1, 1, true, false},
		{"nothing fits", cpus + 62, false, 0, cpus + 62, false, true},
		{"given is kept", cpus + 62, true, 1, cpus + 62, false, true},
	} {
		check := func(n int) error {
			if n > c.fits {
				return fmt.Errorf("%d threads need too much", n)
			}
			return nil
		}
		got, note, err := resumeThreads(c.saved, c.given, check)
		if got != c.want || (note != "") != c.wantNote || (err != nil) != c.wantError {
			t.Errorf("%s: %d threads, note %q, error %v; want %d, note %v, error %v", c.name, got, note, err, c.want, c.wantNote, c.wantError)
		}
	}
}

// TestResumeAnyEnvironment: checkpoints the program wrote resume whatever
// the environment was: a GOMAXPROCS above --threads' limit (--threads 0
// takes it), and a --data path relative to another working directory,
// resumed from elsewhere with no --data and with --data relative to the
// new one.
func TestResumeAnyEnvironment(t *testing.T) {
	root := t.TempDir()
	text := strings.Repeat("the quick brown fox jumps over the lazy dog. ", 40)
	if err := os.MkdirAll(filepath.Join(root, "a", "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "a", "data", "t.txt"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "ck")
	t.Chdir(filepath.Join(root, "a"))
	old := runtime.GOMAXPROCS(gpt.MaxThreads + 7)
	st, _, errs := runCmd(tiny(dir, "--max_iters", "10", "--data", "data/t.txt", "--threads", "0")...)
	runtime.GOMAXPROCS(old)
	if st != 0 {
		t.Fatalf("train: status %d %q", st, errs)
	}
	t.Chdir(root)
	st, out, errs := runCmd("train", "--checkpoint_dir", dir, "--resume", "--max_iters", "20")
	if st != 0 || !strings.Contains(out, "above the limit of") || !strings.Contains(out, "done: 20 steps") {
		t.Fatalf("resume above the thread limit: status %d\n%s\n%s", st, out, errs)
	}
	st, out, errs = runCmd("train", "--checkpoint_dir", dir, "--resume", "--max_iters", "30", "--data", filepath.Join("a", "data", "t.txt"))
	if st != 0 || !strings.Contains(out, "done: 30 steps") {
		t.Fatalf("resume with --data relative to another directory: status %d\n%s\n%s", st, out, errs)
	}
}

// TestCompareTableNamesFiles: loss logs of the two runs that do not line
// up are an error naming both files.
func TestCompareTableNamesFiles(t *testing.T) {
	a, b := filepath.Join("d", "1head"), filepath.Join("d", "2heads")
	for _, c := range []struct {
		name         string
		rowsA, rowsB [][]string
		want         string
	}{
		{"lengths", [][]string{{"0", "", "3.1"}}, nil, "the runs logged 1 and 0 evaluations"},
		{"steps", [][]string{{"0", "", "3.1"}}, [][]string{{"5", "", "3.0"}}, "evaluation 0: the runs logged steps 0 and 5"},
	} {
		_, err := compareTable([]*compareRun{{dir: a, rows: c.rowsA}, {dir: b, rows: c.rowsB}})
		if err == nil || !strings.Contains(err.Error(), filepath.Join(a, lossCSV)+" and "+filepath.Join(b, lossCSV)) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
