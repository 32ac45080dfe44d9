// Package parallel is the module's one parallel runtime: the goroutines
// that run parallel work and the policy for splitting it. GEMM, attention
// and the GPT trainer all use it, so parallel work nested inside parallel
// work (a GEMM inside an attention head inside a model replica) never runs
// more than GOMAXPROCS goroutines at once.
//
// Work is a Task split by the caller into parts. Run executes the parts on
// the calling goroutine plus as many idle pool goroutines as are free, up
// to the number asked for. The pool holds GOMAXPROCS-1 goroutines at most
// busy at once (a budget read at every Run), and a Run that finds no idle
// goroutine runs every part on its caller. How the parts are split never
// depends on how many goroutines ran them, so neither does any result:
// callers choose the number of parts from GOMAXPROCS (see Parts), never
// from what Run found free.
//
// The pool goroutines live for the whole program, and Run allocates
// nothing, so kernels that use it stay allocation-free.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Task is work split into parts that may run at the same time.
type Task interface {
	// RunPart computes part (0 <= part < parts of the Run). worker
	// identifies the goroutine running it, 0 <= worker < the workers
	// argument of Run, so that a task can give each goroutine its own
	// scratch memory; no two goroutines of one Run share a worker number.
	RunPart(worker, part int)
}

// maxPool bounds the pool goroutines.
const maxPool = 255

// job is one Run in progress.
type job struct {
	task  Task
	parts int64
	next  atomic.Int64
	wg    sync.WaitGroup
	// done counts the helpers that have finished, for the caller's
	// polling wait (see wait).
	done atomic.Int32

	panicked atomic.Bool
	panicVal any
}

type request struct {
	j      *job
	worker int
}

var (
	// busy counts pool goroutines running a job's parts right now.
	busy atomic.Int32

	startMu  sync.Mutex
	started  int
	requests = make(chan request, maxPool)

	jobs = sync.Pool{New: func() any { return new(job) }}
)

// Budget returns how many goroutines may run parallel work at once:
// GOMAXPROCS, at most maxPool+1.
func Budget() int {
	return min(runtime.GOMAXPROCS(0), maxPool+1)
}

// Parts returns how many parts to split work into: one per goroutine of
// the Budget, but no more than work/minWork (each part gets at least
// minWork units), and at least 1. It depends only on its arguments and
// GOMAXPROCS, never on what other work is running, so results computed
// from the split are the same from run to run.
func Parts(work, minWork int) int {
	p := Budget()
	if minWork > 0 {
		p = min(p, work/minWork)
	}
	return max(p, 1)
}

// acquire takes up to n pool goroutines from the budget and returns how
// many it took and how many are reserved in all, its own included.
func acquire(n int) (took, reserved int) {
	limit := int32(Budget() - 1)
	for {
		b := busy.Load()
		free := limit - b
		if free <= 0 {
			return 0, int(b)
		}
		take := min(int32(n), free)
		if busy.CompareAndSwap(b, b+take) {
			return int(take), int(b + take)
		}
	}
}

// ensureStarted starts pool goroutines until at least n exist.
//
// Run calls it with the number of reservations in all (busy), not only its
// own: a request waits in the channel until a pool goroutine that is not
// running parts receives it, and the goroutines running parts may be
// waiting, inside a nested Run, for requests queued behind it. Every
// reservation is either a goroutine running parts or a request queued, so
// with at least busy goroutines started there is an idle one for every
// queued request, and nested Runs always finish.
func ensureStarted(n int) {
	startMu.Lock()
	defer startMu.Unlock()
	for started < n {
		started++
		go func() {
			for {
				r, ok := receive()
				if !ok {
					return
				}
				r.j.work(r.worker)
				busy.Add(-1)
				r.j.done.Add(1)
				r.j.wg.Done()
			}
		}()
	}
}

// spinFor is how long an idle pool goroutine polls for the next request
// before it blocks. Waking a goroutine blocked on a channel means waking
// an OS thread, and on a virtual machine waking the halted virtual CPU
// under it, which can take a large part of a split GEMM's time (PERF.md,
// "Pool goroutines poll before they block", has the delay measured).
// Work that comes in bursts of Runs (the GEMMs of a layer, the parts of a
// step) finds the helpers still polling; a pool goroutine idle for longer
// blocks and costs nothing. The polling yields the processor
// (runtime.Gosched), so other goroutines are not kept from it.
const spinFor = 200 * time.Microsecond

// receive returns the next request, polling for spinFor before it blocks;
// ok is false if the channel was closed.
func receive() (r request, ok bool) {
	select {
	case r, ok = <-requests:
		return r, ok
	default:
	}
	deadline := time.Now().Add(spinFor)
	for i := 0; ; i++ {
		select {
		case r, ok = <-requests:
			return r, ok
		default:
		}
		if i%16 == 15 && time.Now().After(deadline) {
			break
		}
		runtime.Gosched()
	}
	r, ok = <-requests
	return r, ok
}

// work claims and runs parts until none are left. A panic in a part is
// kept for the caller of Run (and the remaining parts are skipped).
func (j *job) work(worker int) {
	defer func() {
		if r := recover(); r != nil {
			if j.panicked.CompareAndSwap(false, true) {
				j.panicVal = r
			}
			j.next.Store(j.parts)
		}
	}()
	for {
		p := j.next.Add(1) - 1
		if p >= j.parts {
			return
		}
		j.task.RunPart(worker, int(p))
	}
}

// wait returns once the job's helpers have finished. The caller polls
// for up to spinFor before it blocks, as the pool's goroutines poll for
// work (see spinFor): the parts are of equal size, so the helpers finish
// close to when the caller does, and a caller that blocked would have to
// be woken like a pool goroutine (PERF.md, "The caller polls for its
// helpers too", has the cost measured).
func (j *job) wait(helpers int32) {
	if j.done.Load() < helpers {
		deadline := time.Now().Add(spinFor)
		for i := 0; j.done.Load() < helpers; i++ {
			if i%64 == 63 {
				if time.Now().After(deadline) {
					break
				}
				runtime.Gosched()
			}
		}
	}
	j.wg.Wait() // at once when every helper is done; orders their writes before the caller's reads
}

// Run runs task's parts 0..parts-1 and returns when all are done. They run
// on the calling goroutine (worker 0) and on up to workers-1 idle pool
// goroutines (workers 1, 2, ...), each claiming the next part in order
// when it is free; with workers <= 1, or no pool goroutine free, every
// part runs on the caller, in order. A panic in a part is raised again on
// the calling goroutine once the others have stopped.
func Run(task Task, parts, workers int) {
	if parts <= 0 {
		return
	}
	workers = min(workers, parts, Budget())
	helpers, reserved := 0, 0
	if workers > 1 {
		helpers, reserved = acquire(workers - 1)
	}
	if helpers == 0 {
		for p := 0; p < parts; p++ {
			task.RunPart(0, p)
		}
		return
	}
	ensureStarted(reserved)
	j := jobs.Get().(*job)
	j.task, j.parts = task, int64(parts)
	j.next.Store(0)
	j.done.Store(0)
	j.wg.Add(helpers)
	for w := 1; w <= helpers; w++ {
		requests <- request{j, w}
	}
	j.work(0)
	j.wait(int32(helpers))
	panicked, val := j.panicked.Load(), j.panicVal
	j.task, j.panicVal = nil, nil
	j.panicked.Store(false)
	jobs.Put(j)
	if panicked {
		panic(val)
	}
}

// rangeTask runs fn over contiguous chunks of [0, n).
type rangeTask struct {
	n, chunk int
	fn       func(lo, hi int)
}

func (t *rangeTask) RunPart(_, part int) {
	lo := part * t.chunk
	t.fn(lo, min(lo+t.chunk, t.n))
}

var rangeTasks = sync.Pool{New: func() any { return new(rangeTask) }}

// For runs fn over [0, n) split into Parts(n, minChunk) contiguous chunks
// of equal size (the last may be shorter), in parallel where goroutines
// are free. fn must compute each index independently of the others; the
// chunks depend only on n, minChunk and GOMAXPROCS, so results do not
// depend on who ran them. For takes its Task from a pool: a call costs no
// allocation beyond what fn's closure does (kernels use Run with a Task
// of their own and allocate nothing).
func For(n, minChunk int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	parts := Parts(n, minChunk)
	if parts == 1 {
		fn(0, n)
		return
	}
	chunk := (n + parts - 1) / parts
	parts = (n + chunk - 1) / chunk
	t := rangeTasks.Get().(*rangeTask)
	t.n, t.chunk, t.fn = n, chunk, fn
	Run(t, parts, parts) // a panic in fn leaves t to the collector
	t.fn = nil
	rangeTasks.Put(t)
}
