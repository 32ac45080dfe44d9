package gpt

import (
	"sync"

	"github.com/simdgpt/simdgpt/internal/parallel"
)

// parallelFor runs fn over [0, n) on the module's parallel runtime, split
// as parallel.For splits it: parallel.Parts(n, minChunk) contiguous chunks
// of equal size (the last may be shorter), a split that depends only on n,
// minChunk and GOMAXPROCS. The chunks run on the caller and whichever pool
// goroutines the runtime's budget has free: inside model replicas that
// already hold the whole budget, on the calling goroutine alone. Every
// caller computes each item independently of the others, so results never
// depend on the split or on who ran it.
//
// Unlike parallel.For it takes its Task from a pool, so a call costs no
// allocation beyond fn's closure.
func parallelFor(n, minChunk int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	parts := parallel.Parts(n, minChunk)
	if parts == 1 {
		fn(0, n)
		return
	}
	chunk := (n + parts - 1) / parts
	parts = (n + chunk - 1) / chunk
	t := rangeTasks.Get().(*rangeTask)
	t.n, t.chunk, t.fn = n, chunk, fn
	parallel.Run(t, parts, parts) // a panic in fn leaves t to the collector
	t.fn = nil
	rangeTasks.Put(t)
}

// rangeTask is parallelFor's Task: part p is [p·chunk, min((p+1)·chunk, n)).
type rangeTask struct {
	n, chunk int
	fn       func(lo, hi int)
}

var rangeTasks = sync.Pool{New: func() any { return new(rangeTask) }}

// RunPart runs fn over the part's chunk.
func (t *rangeTask) RunPart(_, part int) {
	lo := part * t.chunk
	t.fn(lo, min(lo+t.chunk, t.n))
}
