package attention

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// itemRunner is work split into independent items, claimed one at a time
// by the goroutines that share it. runItems claims and runs items until
// none are left; worker (0 <= worker < the number of goroutines) selects
// the goroutine's own scratch memory.
type itemRunner interface {
	runItems(worker int)
}

// items hands out the item indexes of one parallel phase.
type items struct {
	next atomic.Int64
	n    int64
	wg   sync.WaitGroup
}

// claim returns the next unclaimed item, or -1 when all are taken.
func (it *items) claim() int {
	i := it.next.Add(1) - 1
	if i >= it.n {
		return -1
	}
	return int(i)
}

// poolTask asks a pool goroutine to run items as worker.
type poolTask struct {
	r      itemRunner
	worker int
	done   *sync.WaitGroup
}

// pool holds goroutines that live for the whole program (they are started
// on first need and then reused), so a parallel phase allocates nothing.
var pool struct {
	sync.Mutex
	tasks   chan poolTask
	started int
}

// maxPoolWorkers bounds the pool goroutines (and so the parallelism of
// one phase, with the calling goroutine: maxPoolWorkers+1).
const maxPoolWorkers = 255

// workersFor is how many goroutines a phase of n items uses: at most
// GOMAXPROCS, at most n, at least 1.
func workersFor(n int) int {
	w := runtime.GOMAXPROCS(0)
	if w > maxPoolWorkers+1 {
		w = maxPoolWorkers + 1
	}
	if w > n {
		w = n
	}
	if w < 1 {
		w = 1
	}
	return w
}

// ensurePool starts pool goroutines until at least n exist.
func ensurePool(n int) {
	pool.Lock()
	defer pool.Unlock()
	if pool.tasks == nil {
		pool.tasks = make(chan poolTask, maxPoolWorkers)
	}
	for pool.started < n {
		pool.started++
		go func() {
			for t := range pool.tasks {
				t.r.runItems(t.worker)
				t.done.Done()
			}
		}()
	}
}

// runParallel runs r over n items with workers goroutines (the caller is
// worker 0) and waits for all of them. it must be the items r claims from;
// it is reset here.
func runParallel(r itemRunner, it *items, n, workers int) {
	it.next.Store(0)
	it.n = int64(n)
	if workers <= 1 {
		r.runItems(0)
		return
	}
	ensurePool(workers - 1)
	it.wg.Add(workers - 1)
	for w := 1; w < workers; w++ {
		pool.tasks <- poolTask{r, w, &it.wg}
	}
	r.runItems(0)
	it.wg.Wait()
}
