//go:build !race

// Package race tells tests whether the race detector is on. Under -race,
// sync.Pool drops a random share of what it is given, so allocation counts
// (testing.AllocsPerRun) and peak-memory measurements are not the
// program's own: the tests that assert them skip under the race detector
// and say so, and the race detector's own runs check the concurrency.
package race

// Enabled reports whether the binary was built with the race detector
// (go test -race).
const Enabled = false
