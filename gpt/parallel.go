package gpt

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// replicasRunning counts model replicas running at once (Model.Forward and
// Backward with several replicas): while any run, every core already has a
// replica, so parallelFor stays on the calling goroutine. This only
// changes how work is split, never a result.
var replicasRunning atomic.Int32

// parallelFor runs fn over [0, n) split into contiguous chunks of at least
// minChunk items, one per goroutine up to GOMAXPROCS. Every caller computes
// each item independently of the others, so results never depend on the
// split (bit-identical whatever the thread count).
func parallelFor(n, minChunk int, fn func(lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	if replicasRunning.Load() > 0 {
		workers = 1
	}
	if w := n / max(minChunk, 1); w < workers {
		workers = w
	}
	if workers <= 1 {
		if n > 0 {
			fn(0, n)
		}
		return
	}
	chunk := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := chunk; lo < n; lo += chunk {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			fn(lo, hi)
		}(lo, min(lo+chunk, n))
	}
	fn(0, chunk)
	wg.Wait()
}
