//go:build unix

// Package cmdtest helps the commands' tests stop a running binary with a
// signal: start it, wait until its output shows it is where the test
// wants it, signal it, and hold it to exiting on its own within a bounded
// time.
package cmdtest

import (
	"bytes"
	"errors"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// LockedBuffer is a bytes.Buffer that a process's output goroutine writes
// while the test reads it.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns what has been written so far.
func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Signal starts cmd (whose Stdout and Stderr it sets), waits up to 60 s
// for ready(stdout, stderr) to hold, then sends sigs[0], and the later
// signals one a millisecond after it (with flood, the last one again
// every millisecond until the exit). It returns the exit status and the
// outputs. It fails t if cmd ends before it is ready, is not ready within
// 60 s, runs on 10 s after the first signal, or is ended by a signal
// rather than exiting on its own.
func Signal(t testing.TB, cmd *exec.Cmd, ready func(stdout, stderr string) bool, flood bool, sigs ...syscall.Signal) (status int, stdout, stderr string) {
	t.Helper()
	var out, errb LockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for deadline := time.Now().Add(60 * time.Second); !ready(out.String(), errb.String()); time.Sleep(5 * time.Millisecond) {
		select {
		case err := <-done:
			t.Fatalf("%q ended before the signal: %v\n%s\n%s", cmd.Args, err, out.String(), errb.String())
		default:
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-done
			t.Fatalf("%q: not ready within 60 s\n%s\n%s", cmd.Args, out.String(), errb.String())
		}
	}
	timeout := time.After(10 * time.Second)
	var err error
	for i, exited := 0, false; !exited; i++ {
		if i < len(sigs) || flood {
			cmd.Process.Signal(sigs[min(i, len(sigs)-1)])
		}
		select {
		case err = <-done:
			exited = true
		case <-time.After(time.Millisecond):
		case <-timeout:
			cmd.Process.Kill()
			<-done
			t.Fatalf("%q: still running 10 s after %v\n%s\n%s", cmd.Args, sigs[0], out.String(), errb.String())
		}
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errb.String()
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return ee.ExitCode(), out.String(), errb.String()
	}
	t.Fatalf("%q: %v (ended by the signal, not by itself)\n%s\n%s", cmd.Args, err, out.String(), errb.String())
	return 0, "", ""
}
