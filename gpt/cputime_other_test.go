//go:build !unix

package gpt

// cpuNanos is not available here: the CPU-time metrics are left out.
func cpuNanos() (int64, bool) { return 0, false }
