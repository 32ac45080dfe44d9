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

// TestWriteTokensSpecialFiles: WriteTokens refuses a FIFO and a link to a
// device, leaving them as they were, and writes through a link to a
// regular file, which Load then reads.
func TestWriteTokensSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo, toNull, toFile, file := filepath.Join(dir, "fifo.bin"), filepath.Join(dir, "null.bin"), filepath.Join(dir, "link.bin"), filepath.Join(dir, "file.bin")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for link, to := range map[string]string{toNull: "/dev/null", toFile: "file.bin"} {
		if err := os.Symlink(to, link); err != nil {
			t.Fatal(err)
		}
	}
	toks := make([]uint16, 100)
	for i := range toks {
		toks[i] = uint16(i % 7)
	}
	for p, want := range map[string]string{fifo: "named pipe", toNull: "character device"} {
		before, _ := os.Lstat(p)
		err := WriteTokens(p, toks, true)
		if err == nil || !strings.HasPrefix(err.Error(), "write "+p+": not a regular file") || !strings.Contains(err.Error(), want) {
			t.Errorf("WriteTokens(%s) = %v, want a refusal naming it and %q", p, err, want)
		}
		if after, err := os.Lstat(p); err != nil || after.Mode() != before.Mode() {
			t.Errorf("%s after WriteTokens: %v, %v; want %v", p, after, err, before.Mode())
		}
	}
	if err := WriteTokens(toFile, toks, true); err != nil {
		t.Fatal(err)
	}
	d, err := Load(file, 4)
	if err != nil || d.VocabSize != 7 || len(d.Train)+len(d.Val) != len(toks) {
		t.Errorf("Load of the file written through the link: %+v, %v", d, err)
	}
}
