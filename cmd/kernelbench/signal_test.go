//go:build unix

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer that a process's output goroutine writes
// while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

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
	var out, errb lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(errb.String(), "kernelbench: [1/"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-done
			t.Fatalf("no progress line within 60 s\n%s", errb.String())
		}
	}
	time.Sleep(200 * time.Millisecond) // into the case's samples
	cmd.Process.Signal(syscall.SIGINT)
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("still running 10 s after SIGINT\n%s", errb.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit: %v, want status 130\n%s", err, errb.String())
	}
	lines := strings.Split(strings.TrimSuffix(errb.String(), "\n"), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "kernelbench: interrupted by SIGINT in case [1/") || strings.Contains(errb.String(), "goroutine") {
		t.Errorf("stderr ends %q", last)
	}
	if strings.Contains(out.String(), "\n|") {
		t.Errorf("tables printed from an interrupted run:\n%s", out.String())
	}
	if _, err := os.Stat(outFile); err == nil {
		t.Errorf("-o %s written by an interrupted run", outFile)
	}
}
