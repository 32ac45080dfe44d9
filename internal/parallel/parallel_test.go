package parallel

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countTask records which parts ran and the most goroutines that were
// inside RunPart at once.
type countTask struct {
	ran     []atomic.Int32
	inside  atomic.Int32
	most    atomic.Int32
	workers sync.Map
	nested  func()
}

func (t *countTask) RunPart(worker, part int) {
	n := t.inside.Add(1)
	for {
		m := t.most.Load()
		if n <= m || t.most.CompareAndSwap(m, n) {
			break
		}
	}
	t.workers.Store(worker, true)
	t.ran[part].Add(1)
	if t.nested != nil {
		t.nested()
	}
	spin()
	t.inside.Add(-1)
}

var sink atomic.Int64

func spin() {
	s := int64(0)
	for i := 0; i < 200000; i++ {
		s += int64(i ^ (i >> 3))
	}
	sink.Add(s)
}

func TestRunEveryPartOnce(t *testing.T) {
	for _, tc := range []struct{ procs, parts, workers int }{
		{1, 5, 4}, {2, 1, 2}, {2, 7, 2}, {4, 64, 4}, {4, 3, 8}, {3, 0, 3},
		{8, 20, 8}, {32, 40, 32}, {64, 64, 64}, {64, 3, 64},
	} {
		old := runtime.GOMAXPROCS(tc.procs)
		task := &countTask{ran: make([]atomic.Int32, tc.parts)}
		Run(task, tc.parts, tc.workers)
		runtime.GOMAXPROCS(old)
		for p := range task.ran {
			if n := task.ran[p].Load(); n != 1 {
				t.Errorf("procs %d parts %d: part %d ran %d times", tc.procs, tc.parts, p, n)
			}
		}
		task.workers.Range(func(k, _ any) bool {
			if w := k.(int); w < 0 || w >= max(min(tc.workers, tc.parts, tc.procs), 1) {
				t.Errorf("procs %d parts %d workers %d: worker number %d", tc.procs, tc.parts, tc.workers, w)
			}
			return true
		})
	}
}

// TestNestedNeverOversubscribes runs parallel work inside every part of
// parallel work and checks that no more than GOMAXPROCS goroutines were
// ever inside the outer parts at once, nor inside the inner parts, and
// that every part ran exactly once.
func TestNestedNeverOversubscribes(t *testing.T) {
	for _, procs := range []int{1, 2, 3, 4, 8, 32, 64} {
		old := runtime.GOMAXPROCS(procs)
		inner := &countTask{ran: make([]atomic.Int32, 8*8)}
		var innerBase atomic.Int32
		outer := &countTask{ran: make([]atomic.Int32, 8)}
		var live atomic.Int32
		var most atomic.Int32
		outer.nested = func() {
			n := live.Add(1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			base := innerBase.Add(8) - 8
			sub := &offsetTask{inner, int(base)}
			Run(sub, 8, procs)
			live.Add(-1)
		}
		Run(outer, 8, procs)
		runtime.GOMAXPROCS(old)
		if m := most.Load(); int(m) > procs || m < 1 {
			t.Errorf("GOMAXPROCS %d: %d goroutines inside outer parts at once, want 1 to %d", procs, m, procs)
		}
		if m := inner.most.Load(); int(m) > procs || m < 1 {
			t.Errorf("GOMAXPROCS %d: %d goroutines inside inner parts at once, want 1 to %d", procs, m, procs)
		}
		for p := range outer.ran {
			if outer.ran[p].Load() != 1 {
				t.Fatalf("GOMAXPROCS %d: outer part %d ran %d times", procs, p, outer.ran[p].Load())
			}
		}
		for p := range inner.ran {
			if inner.ran[p].Load() != 1 {
				t.Fatalf("GOMAXPROCS %d: inner part %d ran %d times", procs, p, inner.ran[p].Load())
			}
		}
	}
}

// slowTask's part 0 sleeps for longer than the caller polls (spinFor);
// the other parts mark themselves done at once.
type slowTask struct{ done []atomic.Bool }

func (t *slowTask) RunPart(_, part int) {
	if part == 0 {
		time.Sleep(3 * spinFor)
	}
	t.done[part].Store(true)
}

// TestRunWaitsForSlowParts checks that Run returns only once every part
// is done, also when a part outlasts the caller's polling and the caller
// has to block, at every GOMAXPROCS from one to many more than the cores.
func TestRunWaitsForSlowParts(t *testing.T) {
	for _, procs := range []int{1, 2, 3, 8, 32, 64} {
		old := runtime.GOMAXPROCS(procs)
		for _, parts := range []int{2, procs, 3 * procs} {
			task := &slowTask{done: make([]atomic.Bool, parts)}
			Run(task, parts, parts)
			for p := range task.done {
				if !task.done[p].Load() {
					t.Errorf("GOMAXPROCS %d, %d parts: Run returned before part %d was done", procs, parts, p)
				}
			}
		}
		runtime.GOMAXPROCS(old)
	}
}

type offsetTask struct {
	t    *countTask
	base int
}

func (o *offsetTask) RunPart(worker, part int) { o.t.RunPart(worker, o.base+part) }

type panicTask struct{}

func (panicTask) RunPart(_, part int) {
	if part == 3 {
		panic("part 3 failed")
	}
	spin()
}

func TestPanicReachesCaller(t *testing.T) {
	old := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(old)
	for i := 0; i < 20; i++ {
		msg := func() (msg string) {
			defer func() { msg, _ = recover().(string) }()
			Run(panicTask{}, 8, 2)
			return ""
		}()
		if !strings.Contains(msg, "part 3 failed") {
			t.Fatalf("recovered %q, want the part's panic", msg)
		}
	}
	// The pool still works after a panic.
	task := &countTask{ran: make([]atomic.Int32, 4)}
	Run(task, 4, 2)
	for p := range task.ran {
		if task.ran[p].Load() != 1 {
			t.Fatalf("after a panic: part %d ran %d times", p, task.ran[p].Load())
		}
	}
}

func TestParts(t *testing.T) {
	old := runtime.GOMAXPROCS(4)
	defer runtime.GOMAXPROCS(old)
	for _, tc := range []struct{ work, min, want int }{
		{100, 10, 4}, {25, 10, 2}, {5, 10, 1}, {0, 10, 1}, {1000, 0, 4},
	} {
		if got := Parts(tc.work, tc.min); got != tc.want {
			t.Errorf("Parts(%d, %d) = %d, want %d", tc.work, tc.min, got, tc.want)
		}
	}
}

func TestFor(t *testing.T) {
	for _, procs := range []int{1, 2, 4} {
		old := runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 7, 100, 1001} {
			seen := make([]atomic.Int32, n)
			For(n, 8, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					seen[i].Add(1)
				}
			})
			for i := range seen {
				if seen[i].Load() != 1 {
					t.Fatalf("GOMAXPROCS %d n %d: index %d ran %d times", procs, n, i, seen[i].Load())
				}
			}
		}
		runtime.GOMAXPROCS(old)
	}
}

type nopTask struct{}

func (nopTask) RunPart(_, _ int) {}

func TestRunAllocatesNothing(t *testing.T) {
	old := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(old)
	Run(nopTask{}, 4, 2)
	if n := testing.AllocsPerRun(100, func() { Run(nopTask{}, 4, 2) }); n != 0 {
		t.Errorf("Run allocates %v times per call", n)
	}
}

func noopRange(lo, hi int) {}

// TestForAllocatesNothing checks that For takes its Task from a pool: with
// a function value that captures nothing, a split call allocates nothing.
func TestForAllocatesNothing(t *testing.T) {
	old := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(old)
	For(100, 1, noopRange)
	if n := testing.AllocsPerRun(100, func() { For(100, 1, noopRange) }); n != 0 {
		t.Errorf("For allocates %v times per call", n)
	}
}

// treeTask is one node of a tree of nested Runs: each of its parts runs
// the Run of the child of the same index, if any, and counts itself.
type treeTask struct {
	workers  int
	children []*treeTask
	ran      []atomic.Int32
}

func (t *treeTask) RunPart(_, part int) {
	t.ran[part].Add(1)
	if c := t.children[part]; c != nil {
		Run(c, len(c.children), c.workers)
	}
}

// randomTree returns a tree of nested Runs at most depth deep, with up to
// 9 parts a node, a random worker count (sometimes more than parts or
// GOMAXPROCS), and a child Run under about half the parts.
func randomTree(r *rand.Rand, depth int) *treeTask {
	parts := r.IntN(10)
	t := &treeTask{workers: r.IntN(70), children: make([]*treeTask, parts), ran: make([]atomic.Int32, parts)}
	for p := range t.children {
		if depth > 1 && r.IntN(2) == 0 {
			t.children[p] = randomTree(r, depth-1)
		}
	}
	return t
}

// check reports the first part of the tree that did not run exactly once.
func (t *treeTask) check(path string) error {
	for p := range t.ran {
		if n := t.ran[p].Load(); n != 1 {
			return fmt.Errorf("part %s%d ran %d times", path, p, n)
		}
		if c := t.children[p]; c != nil {
			if err := c.check(fmt.Sprintf("%s%d.", path, p)); err != nil {
				return err
			}
		}
	}
	return nil
}

// TestNestedTreesFinish runs random trees of nested Runs (parallel work
// inside parallel work, as model replicas run GEMMs and attention heads)
// at every GOMAXPROCS a user may set, up to far more than the machine's
// cores, several trees at once from separate goroutines, and fails if they
// do not all finish within a bounded time (a reserved helper slot left
// without a goroutine to serve it makes nested Runs wait for it forever)
// or if any part did not run exactly once.
func TestNestedTreesFinish(t *testing.T) {
	old := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(old)
	r := rand.New(rand.NewPCG(1, 2))
	for _, procs := range []int{1, 2, 3, 8, 32, 64} {
		runtime.GOMAXPROCS(procs)
		for round := 0; round < 20; round++ {
			callers := 1 + r.IntN(4)
			trees := make([]*treeTask, callers)
			for i := range trees {
				trees[i] = randomTree(r, 1+r.IntN(4))
			}
			done := make(chan struct{})
			go func() {
				var wg sync.WaitGroup
				for _, tr := range trees {
					wg.Add(1)
					go func() {
						defer wg.Done()
						Run(tr, len(tr.children), tr.workers)
					}()
				}
				wg.Wait()
				close(done)
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				buf := make([]byte, 1<<20)
				t.Fatalf("GOMAXPROCS %d round %d: nested Runs did not finish in 20 s (deadlock); goroutines:\n%s",
					procs, round, buf[:runtime.Stack(buf, true)])
			}
			for i, tr := range trees {
				if err := tr.check(""); err != nil {
					t.Fatalf("GOMAXPROCS %d round %d caller %d: %v", procs, round, i, err)
				}
			}
		}
	}
}

// spinTask is a Task whose parts each spin for about d.
type spinTask struct{ d time.Duration }

func (t spinTask) RunPart(_, _ int) {
	for end := time.Now().Add(t.d); time.Now().Before(end); {
	}
}

// BenchmarkRunShort measures Run of two parts of a few microseconds each,
// the size of a split product while decoding: with -cpu 2 the time per
// Run against one part's length is the cost of handing a part over and
// waiting for it.
func BenchmarkRunShort(b *testing.B) {
	for _, d := range []time.Duration{2 * time.Microsecond, 10 * time.Microsecond, 40 * time.Microsecond} {
		b.Run(d.String(), func(b *testing.B) {
			t := spinTask{d}
			for b.Loop() {
				Run(t, 2, 2)
			}
			b.ReportMetric(float64(b.Elapsed())/float64(b.N)/float64(d), "part-lengths/op")
		})
	}
}
