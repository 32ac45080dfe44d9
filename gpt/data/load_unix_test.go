//go:build unix

package data

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLoadSpecialFiles: /dev/zero would never end and a FIFO would block;
// both are refused at once.
func TestLoadSpecialFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo.txt")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for p, want := range map[string]string{fifo: "named pipe", "/dev/zero": "device"} {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		done := make(chan error, 1)
		go func() { _, err := Load(p, 16); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), p+": ") {
				t.Errorf("Load(%s) = %v, want an error naming it and %q", p, err, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Load(%s) still running after 10 s", p)
		}
	}
}
