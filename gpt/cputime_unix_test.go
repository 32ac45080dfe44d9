//go:build unix

package gpt

import "syscall"

// cpuNanos returns the CPU time (user + system) the process has used, in
// nanoseconds, and true; see BenchmarkGPT2Eval.
func cpuNanos() (int64, bool) {
	var r syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &r) != nil {
		return 0, false
	}
	return r.Utime.Nano() + r.Stime.Nano(), true
}
