package gpt

import (
	"strings"
	"testing"
)

// TestMemoryEnv checks that MemoryEnv sets the memory CheckMemory
// compares with, and that a value that is not a number of bytes is
// ignored.
func TestMemoryEnv(t *testing.T) {
	t.Setenv(MemoryEnv, "1048576")
	if n, src := AvailableMemory(); n != 1<<20 || !strings.Contains(src, MemoryEnv) {
		t.Errorf("AvailableMemory() = %d, %q; want 1048576 from %s", n, src, MemoryEnv)
	}
	if err := CheckMemory("a thing", 1<<20); err != nil {
		t.Errorf("CheckMemory of exactly what is available: %v", err)
	}
	if err := CheckMemory("a thing", 1<<20+1); err == nil || !strings.Contains(err.Error(), "a thing needs about 1.0 MiB of memory, but only 1.0 MiB is available") {
		t.Errorf("CheckMemory above what is available: %v", err)
	}
	for _, v := range []string{"", "lots", "-1", "1e9"} {
		t.Setenv(MemoryEnv, v)
		if _, src := AvailableMemory(); strings.Contains(src, MemoryEnv) {
			t.Errorf("%s=%q was taken as a number of bytes", MemoryEnv, v)
		}
	}
}
