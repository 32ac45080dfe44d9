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

// TestSignal builds kernelbench, sends it SIGINT once its first case has
// started, and checks that it exits within 10 s with status 130, one line
// naming the case, no tables and no -o file.
func TestSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "kernelbench")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	outFile := filepath.Join(dir, "new.txt")
	cmd := exec.Command(bin, "-kernels", "gemm", "-count", "1000", "-o", outFile)
	var seen time.Time
	ready := func(_, stderr string) bool {
		if seen.IsZero() && strings.Contains(stderr, "kernelbench: [1/") {
			seen = time.Now()
		}
		return !seen.IsZero() && time.Since(seen) >= 200*time.Millisecond
	}
	st, stdout, stderr := cmdtest.Signal(t, cmd, ready, false, syscall.SIGINT)
	if st != 130 {
		t.Fatalf("exit status %d, want 130\n%s", st, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "kernelbench: interrupted by SIGINT in case [1/") || strings.Contains(stderr, "goroutine") {
		t.Errorf("stderr ends %q", last)
	}
	if strings.Contains(stdout, "\n|") {
		t.Errorf("tables printed from an interrupted run:\n%s", stdout)
	}
	if _, err := os.Stat(outFile); err == nil {
		t.Errorf("-o %s written by an interrupted run", outFile)
	}
}
