//go:build linux

package gpt

import (
	"os"
	"syscall"
)

// asMargin is the address space that a run needs beyond the memory its
// estimate counts: the Go runtime maps its heap in arenas of 64 MiB with
// their metadata, and reserves more as the heap grows, so a run under
// ulimit -v that fits its estimate to the byte still fails to map. It is
// subtracted from what RLIMIT_AS leaves (measured: see the tests).
const asMargin = 256 << 20

// systemLimits returns the limits Linux states: MemAvailable, the
// cgroups', RLIMIT_AS's and RLIMIT_DATA's.
func systemLimits() []memLimit {
	var lims []memLimit
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		if n, ok := parseMemAvailable(b); ok {
			lims = append(lims, memLimit{n, "MemAvailable in /proc/meminfo"})
		}
	}
	lims = append(lims, cgroupLimits(os.DirFS("/"))...)
	status, _ := os.ReadFile("/proc/self/status")
	for _, r := range []struct {
		res       int
		used, src string
		margin    int64
	}{
		{syscall.RLIMIT_AS, "VmSize:", "ulimit -v (RLIMIT_AS) less the address space mapped", asMargin},
		{syscall.RLIMIT_DATA, "VmData:", "ulimit -d (RLIMIT_DATA) less the data mapped", asMargin},
	} {
		var rl syscall.Rlimit
		if syscall.Getrlimit(r.res, &rl) != nil {
			continue
		}
		if l, ok := rlimitAvail(uint64(rl.Cur), uint64(rl.Cur) == ^uint64(0), string(status), r.used, r.margin, r.src); ok {
			lims = append(lims, l)
		}
	}
	return lims
}
