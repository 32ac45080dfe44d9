//go:build unix

package gpt

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestLoadNotRegular: a directory or a FIFO is refused at once (a FIFO
// would block the read forever).
func TestLoadNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, p := range []string{dir, fifo} {
		if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("Load(%s) = %v, want 'not a regular file'", p, err)
		}
	}
}
