//go:build unix

package bpe

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLoadDirSpecialFiles: a tokenizer file that is a FIFO (whose opening
// would block) or a link to /dev/zero (which never ends) is refused at
// once with an error naming it, and left as it was.
func TestLoadDirSpecialFiles(t *testing.T) {
	ej, vb := handmadeFiles(testMerges, EndOfText)
	for _, c := range []struct {
		name, special, want string
		make                func(path string) error
	}{
		{"FIFO encoder.json", "encoder.json", "not a regular file (a named pipe (FIFO))", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"vocab.bpe link to /dev/zero", "vocab.bpe", "not a regular file (a character device)", func(p string) error { return os.Symlink("/dev/zero", p) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{"encoder.json": ej, "vocab.bpe": vb}
			for name, s := range files {
				var err error
				if name == c.special {
					err = c.make(filepath.Join(dir, name))
				} else {
					err = os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			special := filepath.Join(dir, c.special)
			before, _ := os.Lstat(special)
			done := make(chan error, 1)
			go func() { _, err := LoadDir(dir); done <- err }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), special+": "+c.want) {
					t.Errorf("LoadDir: %v; want an error naming %s: %s", err, special, c.want)
				}
			case <-time.After(time.Minute):
				t.Fatal("LoadDir has not returned after a minute")
			}
			if after, err := os.Lstat(special); err != nil || after.Mode().Type() != before.Mode().Type() {
				t.Errorf("%s after LoadDir: %v, %v; want it as it was (%v)", special, after, err, before.Mode())
			}
		})
	}
}
