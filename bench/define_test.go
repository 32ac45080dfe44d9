package bench_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/simdgpt/simdgpt/bench"
)

// countingDef defines a kernel whose calls add to *calls; only Impls
// with an Own run it.
func countingDef(calls map[string]int) bench.KernelDef {
	return bench.KernelDef{
		Name:   "twice",
		Doc:    "a fake kernel",
		Bound:  bench.ComputeBound,
		Shapes: []bench.Shape{{Name: "n=1", N: 1}, {Name: "n=2", N: 2}},
		Short:  "n=2",
		Work:   func(s bench.Shape) bench.Work { return bench.Work{Flops: 1000 * float64(s.N)} },
		Has:    func(im *bench.Impl) bool { return im.Own != nil },
		Setup: func(s bench.Shape, im *bench.Impl) func() {
			return func() {
				calls[im.Name+"/"+s.Name]++
				time.Sleep(10 * time.Microsecond)
			}
		},
	}
}

// TestNewKernel checks that a kernel defined outside the package is
// selected, supported and run as bench's own are.
func TestNewKernel(t *testing.T) {
	calls := map[string]int{}
	k := bench.NewKernel(countingDef(calls))
	all := append(bench.Kernels(), k)
	cases, err := bench.Select(all, []string{"twice"}, nil, true)
	if err != nil || len(cases) != 1 || cases[0].String() != "twice/n=2" {
		t.Fatalf("short selection: %v, %v; want twice/n=2", cases, err)
	}
	if w := cases[0].Work(); w.Flops != 2000 {
		t.Errorf("Work = %+v, want 2000 flops", w)
	}
	if _, err := bench.Select(all, []string{"twice"}, []string{"n=3"}, false); err == nil || !strings.Contains(err.Error(), "valid shapes: n=1, n=2") {
		t.Errorf("unknown shape: error %v", err)
	}
	ours := bench.OursAll()
	peer := &bench.Impl{Name: "peer", Peer: true}
	for _, im := range ours {
		if !k.Supports(cases[0].Shape, im) {
			t.Errorf("%s does not support %s", im.Name, cases[0])
		}
	}
	if k.Supports(cases[0].Shape, peer) || k.Setup(cases[0].Shape, peer) != nil {
		t.Error("a peer (Own nil) supports the kernel, though Has refuses it")
	}
	res := bench.Run(cases[0], append(ours, peer), bench.Options{Count: 2, Time: time.Millisecond})
	if len(res) != len(ours) {
		t.Fatalf("%d results, want one per simdgpt implementation (%d)", len(res), len(ours))
	}
	for _, r := range res {
		n := 0
		for _, it := range r.Iters {
			n += it
		}
		if len(r.Ns) != 2 || calls[r.Impl.Name+"/n=2"] < n {
			t.Errorf("%s: %d samples, %d calls made, %d timed", r.Impl.Name, len(r.Ns), calls[r.Impl.Name+"/n=2"], n)
		}
		if rate, _ := r.Rate(); rate <= 0 || rate > 2000/10e-6/1e9 {
			t.Errorf("%s: %v GFLOP/s; each call of 2000 flops takes at least 10µs", r.Impl.Name, rate)
		}
	}
	if calls["peer/n=2"] != 0 || calls[ours[0].Name+"/n=1"] != 0 {
		t.Errorf("calls outside the case: %v", calls)
	}
}

// TestNewKernelDefaults checks that a nil Has accepts every Impl and that
// NewKernel copies the shapes.
func TestNewKernelDefaults(t *testing.T) {
	d := countingDef(map[string]int{})
	d.Has = nil
	k := bench.NewKernel(d)
	d.Shapes[0].Name = "changed"
	if !k.Supports(k.Shapes[0], &bench.Impl{Name: "peer", Peer: true}) {
		t.Error("nil Has refuses an Impl")
	}
	if k.Shapes[0].Name != "n=1" {
		t.Errorf("kernel's shape changed with the caller's slice: %q", k.Shapes[0].Name)
	}
}

// TestNewKernelPanics checks the message of each mistake in a definition.
func TestNewKernelPanics(t *testing.T) {
	for _, tc := range []struct {
		change func(d *bench.KernelDef)
		want   string
	}{
		{func(d *bench.KernelDef) { d.Name = "" }, `bench.NewKernel: Name = "", want a non-empty name without spaces or '/'`},
		{func(d *bench.KernelDef) { d.Name = "a/b" }, `bench.NewKernel: Name = "a/b", want a non-empty name without spaces or '/'`},
		{func(d *bench.KernelDef) { d.Shapes = nil }, "bench.NewKernel: kernel twice has no Shapes"},
		{func(d *bench.KernelDef) { d.Shapes[1].Name = "n 2" }, `bench.NewKernel: kernel twice: Shapes[1].Name = "n 2", want a non-empty name without spaces or '/'`},
		{func(d *bench.KernelDef) { d.Shapes[1].Name = "n=1" }, `bench.NewKernel: kernel twice: Shapes[1].Name = "n=1" repeats an earlier shape`},
		{func(d *bench.KernelDef) { d.Short = "n=3" }, `bench.NewKernel: kernel twice: Short = "n=3" is not the name of one of its 2 Shapes`},
		{func(d *bench.KernelDef) { d.Work = nil }, "bench.NewKernel: kernel twice: Work and Setup must not be nil"},
		{func(d *bench.KernelDef) { d.Setup = nil }, "bench.NewKernel: kernel twice: Work and Setup must not be nil"},
	} {
		d := countingDef(map[string]int{})
		tc.change(&d)
		got := func() (msg string) {
			defer func() { msg = fmt.Sprint(recover()) }()
			bench.NewKernel(d)
			return "no panic"
		}()
		if got != tc.want {
			t.Errorf("panic %q, want %q", got, tc.want)
		}
	}
}

// NewKernel defines a kernel in code that bench cannot import; appended
// to Kernels, it is selected and run like bench's own.
func ExampleNewKernel() {
	sink := 0.0
	k := bench.NewKernel(bench.KernelDef{
		Name:   "triad",
		Doc:    "a[i] = b[i] + s·c[i] in float64",
		Bound:  bench.MemoryBound,
		Shapes: []bench.Shape{{Name: "n=1024", N: 1024}, {Name: "n=65536", N: 65536}},
		Short:  "n=1024",
		Work: func(s bench.Shape) bench.Work {
			return bench.Work{Flops: 2 * float64(s.N), Bytes: 24 * float64(s.N)}
		},
		Setup: func(s bench.Shape, _ *bench.Impl) func() {
			a, b, c := make([]float64, s.N), make([]float64, s.N), make([]float64, s.N)
			return func() {
				for i := range a {
					a[i] = b[i] + 3*c[i]
				}
				sink += a[0]
			}
		},
	})
	cases, _ := bench.Select(append(bench.Kernels(), k), []string{"triad"}, nil, true)
	res := bench.Run(cases[0], bench.OursAll()[:1], bench.Options{Count: 3, Time: time.Millisecond})
	fmt.Println(cases[0], cases[0].Work().Bytes, "bytes per call;", len(res[0].Ns), "samples")
	// Output: triad/n=1024 24576 bytes per call; 3 samples
}
