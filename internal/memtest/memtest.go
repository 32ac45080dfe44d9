// Package memtest measures the memory a function takes at its peak, for
// tests that check memory estimates against it.
package memtest

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
)

// PeakGrowth runs f and returns how much the process's memory grew at its
// peak, in bytes. On Linux that is the peak resident set (VmHWM in
// /proc/self/status, reset through /proc/self/clear_refs) less the
// resident set before, with the heap's free pages returned to the system
// first. Where that cannot be read it is read with runtime.ReadMemStats:
// the heap mapped and not returned to the system afterwards less the heap
// in use before, a bound on the peak unless the scavenger returns pages
// while f runs.
func PeakGrowth(f func()) int64 {
	debug.FreeOSMemory()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rss := procStatus("VmRSS:")
	if rss < 0 || os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) != nil || procStatus("VmHWM:") > rss+1<<20 {
		f()
		runtime.ReadMemStats(&after)
		return int64(after.HeapSys-after.HeapReleased) - int64(before.HeapInuse)
	}
	f()
	return procStatus("VmHWM:") - rss
}

// procStatus returns the field key (in kB) of /proc/self/status in bytes,
// or -1.
func procStatus(key string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, key); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return n << 10
				}
			}
		}
	}
	return -1
}
