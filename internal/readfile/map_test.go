package readfile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestMap: Map returns the file's bytes, of every size (empty included),
// and Guard passes fn's result through.
func TestMap(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{0, 1, 4095, 4096, 3*4096 + 7} {
		want := make([]byte, size)
		for i := range want {
			want[i] = byte(i*7 + 3)
		}
		path := filepath.Join(dir, "f")
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		f, n, err := Open(path, int64(size))
		if err != nil {
			t.Fatal(err)
		}
		b, unmap, err := Map(f, n)
		if err != nil {
			t.Fatal(err)
		}
		var got []byte
		if err := Guard(func() error { got = bytes.Clone(b); return nil }); err != nil {
			t.Errorf("size %d: Guard = %v", size, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("size %d: Map returned %d bytes, not the file's", size, len(got))
		}
		unmap()
		f.Close()
	}
	if err := Guard(func() error { return ErrTooLarge }); err != ErrTooLarge {
		t.Errorf("Guard returned %v, want fn's error", err)
	}
}
