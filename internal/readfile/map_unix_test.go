//go:build unix

package readfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestMapTruncated: a mapped file truncated by another program faults
// when its lost pages are read; within Guard that is ErrChanged, not a
// crash.
func TestMapTruncated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, make([]byte, 1<<16), 0o644); err != nil {
		t.Fatal(err)
	}
	f, n, err := Open(path, 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, unmap, err := Map(f, n)
	if err != nil {
		t.Fatal(err)
	}
	defer unmap()
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	var sum byte
	err = Guard(func() error {
		for _, v := range b {
			sum += v
		}
		return nil
	})
	if !errors.Is(err, ErrChanged) {
		t.Errorf("reading a truncated mapping: %v, want ErrChanged", err)
	}
}
