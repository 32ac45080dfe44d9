//go:build unix

package gpt

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLoadSpecialFiles: every file LoadGPT2 and Load read (the weights,
// the config.json beside them, a checkpoint) that is a FIFO, a device or
// a link to one is refused at once, with an error naming it, and left as
// it was; a FIFO would block the read forever, /dev/zero never end.
func TestLoadSpecialFiles(t *testing.T) {
	f := gpt2Files()[0]
	dir := t.TempDir()
	mk := func(files map[string][]byte) string {
		path, err := writeFiles(dir, f.file, files)
		if err != nil {
			t.Fatal(err)
		}
		return filepath.Dir(path)
	}
	fifo := func(path string) {
		if err := syscall.Mkfifo(path, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(to, path string) {
		if err := os.Symlink(to, path); err != nil {
			t.Fatal(err)
		}
	}
	configFIFO := mk(map[string][]byte{f.file: f.data})
	fifo(filepath.Join(configFIFO, HFConfigFile))
	configZero := mk(map[string][]byte{f.file: f.data})
	link("/dev/zero", filepath.Join(configZero, HFConfigFile))
	weightsFIFO := mk(map[string][]byte{HFConfigFile: f.config})
	fifo(filepath.Join(weightsFIFO, f.file))
	ckZero := filepath.Join(dir, "zero.safetensors")
	link("/dev/zero", ckZero)
	ckFIFO := filepath.Join(dir, "fifo.safetensors")
	fifo(ckFIFO)

	cases := []struct {
		name, path, want string
		load             func(string) error
	}{
		{"config.json FIFO", configFIFO, filepath.Join(configFIFO, HFConfigFile) + ": not a regular file (a named pipe (FIFO))", loadGPT2Err},
		{"config.json link to /dev/zero", configZero, filepath.Join(configZero, HFConfigFile) + ": not a regular file (a character device)", loadGPT2Err},
		{"weights FIFO", weightsFIFO, filepath.Join(weightsFIFO, f.file) + ": not a regular file (a named pipe (FIFO))", loadGPT2Err},
		{"weights file FIFO", filepath.Join(weightsFIFO, f.file), filepath.Join(weightsFIFO, f.file) + ": not a regular file (a named pipe (FIFO))", loadGPT2Err},
		{"checkpoint FIFO", ckFIFO, "checkpoint " + ckFIFO + ": not a regular file (a named pipe (FIFO))", loadErr},
		{"checkpoint link to /dev/zero", ckZero, "checkpoint " + ckZero + ": not a regular file (a character device)", loadErr},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { done <- c.load(c.path) }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
					t.Errorf("error %v, want one line holding %q", err, c.want)
				}
			case <-time.After(time.Minute):
				t.Fatalf("loading %s has not returned after a minute", c.path)
			}
		})
	}
	for _, p := range []string{filepath.Join(configFIFO, HFConfigFile), filepath.Join(weightsFIFO, f.file), ckFIFO} {
		if st, err := os.Lstat(p); err != nil || st.Mode().Type() != fs.ModeNamedPipe {
			t.Errorf("%s after the loads: %v, %v; want the FIFO", p, st, err)
		}
	}
}

func loadGPT2Err(path string) error { _, err := LoadGPT2(path); return err }
func loadErr(path string) error     { _, err := Load(path); return err }
