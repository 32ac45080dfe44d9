//go:build unix

package readfile

import (
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRead: every kind of path Read must refuse is refused at once with
// one line naming the path and what it is, the FIFO and the device are
// left as they were, and regular files (directly or through a link) are
// read whole.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	mustWrite := func(name, s string) {
		if err := os.WriteFile(p(name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite("small", "hello")
	mustWrite("big", strings.Repeat("x", 101))
	if err := syscall.Mkfifo(p("fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, to := range map[string]string{"tozero": "/dev/zero", "tosmall": "small", "tofifo": p("fifo"), "dangling": "nowhere", "todir": dir} {
		if err := os.Symlink(to, p(link)); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name, path string
		want       string // the contents, or else the error
		is         error
	}{
		{"regular", p("small"), "hello", nil},
		{"symlink to regular", p("tosmall"), "hello", nil},
		{"at the limit", p("big"), strings.Repeat("x", 101), nil}, // limit 101 below
		{"FIFO", p("fifo"), p("fifo") + ": not a regular file (a named pipe (FIFO))", ErrNotRegular},
		{"symlink to a FIFO", p("tofifo"), p("tofifo") + ": not a regular file (a named pipe (FIFO))", ErrNotRegular},
		{"symlink to /dev/zero", p("tozero"), p("tozero") + ": not a regular file (a character device)", ErrNotRegular},
		{"device", "/dev/null", "/dev/null: not a regular file (a character device)", ErrNotRegular},
		{"directory", dir, dir + ": not a regular file (a directory)", ErrNotRegular},
		{"symlink to a directory", p("todir"), p("todir") + ": not a regular file (a directory)", ErrNotRegular},
		{"missing", p("missing"), "stat " + p("missing") + ": no such file or directory", fs.ErrNotExist},
		{"dangling symlink", p("dangling"), "stat " + p("dangling") + ": no such file or directory", fs.ErrNotExist},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			done := make(chan struct{})
			var b []byte
			var err error
			go func() {
				defer close(done)
				b, err = Read(c.path, 101)
			}()
			select {
			case <-done:
			case <-time.After(time.Minute):
				t.Fatalf("Read(%s) has not returned after a minute", c.path)
			}
			if c.is == nil {
				if err != nil || string(b) != c.want {
					t.Errorf("Read = %.20q, %v; want %.20q", b, err, c.want)
				}
				return
			}
			if err == nil || err.Error() != c.want || !errors.Is(err, c.is) {
				t.Errorf("Read error %v; want %q (%v)", err, c.want, c.is)
			}
		})
	}
	_, err := Read(p("big"), 100)
	if want := p("big") + ": 101 bytes, more than the limit of 100"; err == nil || err.Error() != want || !errors.Is(err, ErrTooLarge) || errors.Is(err, ErrNotRegular) {
		t.Errorf("oversized file: %v; want %q", err, want)
	}
	if st, err := os.Lstat(p("fifo")); err != nil || st.Mode().Type() != fs.ModeNamedPipe {
		t.Errorf("the FIFO after the reads: %v, %v", st, err)
	}
	if st, err := os.Stat("/dev/null"); err != nil || st.Mode().Type()&fs.ModeCharDevice == 0 {
		t.Errorf("/dev/null after the reads: %v, %v", st, err)
	}
}

// TestOpen: the file is open at its start, its size returned; no limit
// at math.MaxInt64.
func TestOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int64{10, math.MaxInt64} {
		f, size, err := Open(path, limit)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(f)
		f.Close()
		if size != 10 || string(b) != "0123456789" || err != nil {
			t.Errorf("limit %d: size %d, read %q, %v", limit, size, b, err)
		}
		if b, err := Read(path, limit); string(b) != "0123456789" || err != nil {
			t.Errorf("Read with limit %d: %q, %v", limit, b, err)
		}
	}
	if _, _, err := Open(path, 9); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Open over the limit: %v", err)
	}
}

// TestKind names every file type.
func TestKind(t *testing.T) {
	for m, want := range map[fs.FileMode]string{
		0: "a regular file", fs.ModeDir: "a directory", fs.ModeSymlink: "a symbolic link", fs.ModeNamedPipe: "a named pipe (FIFO)",
		fs.ModeSocket: "a socket", fs.ModeDevice | fs.ModeCharDevice: "a character device", fs.ModeDevice: "a block device", fs.ModeIrregular: "an irregular file",
	} {
		if got := Kind(m | 0o644); got != want {
			t.Errorf("Kind(%v) = %q, want %q", m, got, want)
		}
	}
}
