//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/simdgpt/simdgpt/internal/cmdtest"
)

// TestSignal builds trainbench, sends it SIGINT after its first round of
// a run of a thousand, and checks that it exits within 10 s with status
// 130, one line, no table, and its temporary directory removed.
func TestSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "trainbench")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-no-torch", "-config", "a", "-rounds", "1000", "-steps", "3", "-threads", "1")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var seen time.Time
	ready := func(_, stderr string) bool {
		if seen.IsZero() && strings.Contains(stderr, "round 1/1000") {
			seen = time.Now()
		}
		return !seen.IsZero() && time.Since(seen) >= 0
	}
	st, stdout, stderr := cmdtest.Signal(t, cmd, ready, false, syscall.SIGINT)
	if st != 130 {
		t.Fatalf("exit status %d, want 130\n%s", st, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if last := lines[len(lines)-1]; last != "trainbench: interrupted by SIGINT: no table printed" || strings.Contains(stderr, "goroutine") {
		t.Errorf("stderr ends %q", last)
	}
	if strings.Contains(stdout, "rounds ×") {
		t.Errorf("table printed by an interrupted run:\n%s", stdout)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left in the temporary directory: %v", left)
	}
}
