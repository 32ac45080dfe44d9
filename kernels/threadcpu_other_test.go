//go:build !linux

package kernels_test

import "time"

// threadCPU returns 0: the benchmarks report wall-clock rates only.
func threadCPU() time.Duration { return 0 }
