package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	for _, want := range []string{"first", "second, longer"} {
		if err := Write(path, []byte(want)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != want {
			t.Fatalf("read %q, %v; want %q", got, err, want)
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != Perm {
		t.Errorf("mode %v, want %v", st.Mode().Perm(), os.FileMode(Perm))
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d entries in the directory, want 1 (temporary files left?)", len(ents))
	}
}

// TestWriteFuncFailure: a failing writer leaves the old file intact and
// no temporary file behind.
func TestWriteFuncFailure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	if err := Write(path, []byte("saved")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := WriteFunc(path, func(w io.Writer) error {
		w.Write([]byte("partial"))
		return boom
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), path) {
		t.Errorf("error %v, want boom naming %s", err, path)
	}
	if got, _ := os.ReadFile(path); string(got) != "saved" {
		t.Errorf("file holds %q after a failed write, want %q", got, "saved")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d entries in the directory, want 1", len(ents))
	}
	if err := Write(filepath.Join(dir, "missing", "f"), nil); err == nil {
		t.Error("write into a missing directory succeeded")
	}
}
