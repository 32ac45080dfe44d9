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

// TestErrorsNameThePath: whatever fails, the error names the file asked
// for and the cause, never the hidden temporary file.
func TestErrorsNameThePath(t *testing.T) {
	dir := t.TempDir()
	asDir := filepath.Join(dir, "isdir")
	if err := os.Mkdir(asDir, 0o755); err != nil {
		t.Fatal(err)
	}
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path, want string
		skip             bool
	}{
		{"missing directory", filepath.Join(dir, "missing", "f"), "no such file or directory", false},
		{"target is a directory", asDir, "", false},
		// root ignores directory permissions.
		{"read-only directory", filepath.Join(ro, "f"), "permission denied", os.Geteuid() == 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.skip {
				t.Skip("running as root")
			}
			err := Write(c.path, []byte("x"))
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "write "+c.path+": ") || strings.Contains(msg, ".tmp") || !strings.Contains(msg, c.want) {
				t.Errorf("error %q; want %q naming the path and %q, no temporary file", msg, "write "+c.path+": ", c.want)
			}
		})
	}
}

func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "checkpoint.safetensors")
	names := map[string]bool{ // name: stale
		".checkpoint.safetensors.tmp123":   true,
		".checkpoint.safetensors.tmp9":     true,
		"checkpoint.safetensors":           false,
		".checkpoint.safetensors.tmp":      false,
		".checkpoint.safetensors.tmp12x":   false,
		".loss.csv.tmp42":                  false,
		".checkpoint.safetensors.tmp7.bak": false,
	}
	for n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := RemoveStale(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 2 {
		t.Errorf("removed %q, want the 2 stale files", removed)
	}
	for n, stale := range names {
		_, err := os.Stat(filepath.Join(dir, n))
		if exists := err == nil; exists == stale {
			t.Errorf("%s: exists %v after RemoveStale, stale %v", n, exists, stale)
		}
	}
}
