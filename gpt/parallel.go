package gpt

import "github.com/simdgpt/simdgpt/internal/parallel"

// parallelFor runs fn over [0, n) on the module's parallel runtime
// (parallel.For): contiguous chunks whose split depends only on n,
// minChunk and GOMAXPROCS, run on the caller and whichever pool goroutines
// the runtime's budget has free (inside model replicas that already hold
// the whole budget, on the calling goroutine alone). Every caller computes
// each item independently of the others, so results never depend on the
// split or on who ran it.
func parallelFor(n, minChunk int, fn func(lo, hi int)) { parallel.For(n, minChunk, fn) }
