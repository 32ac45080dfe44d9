package gpt

import (
	"runtime"
	"sync"
)

// parallelFor runs fn over [0, n) split into contiguous chunks of at least
// minChunk items, one per goroutine up to GOMAXPROCS. Every caller computes
// each item independently of the others, so results never depend on the
// split (bit-identical whatever the thread count).
func parallelFor(n, minChunk int, fn func(lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
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
