package main

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/simdgpt/simdgpt/attention"
	"github.com/simdgpt/simdgpt/bench"
	"github.com/simdgpt/simdgpt/kernels"
)

// TestAttentionCases checks the attention kernel's shapes, their work
// (attention's causal FLOP count), the -short selection and which
// implementations run it.
func TestAttentionCases(t *testing.T) {
	all := allKernels()
	cases, err := bench.Select(all, []string{"attention"}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name  string
		flops float64
	}{
		{"fwd,B=12,T=64,C=128,H=4", attention.ForwardFlops(12, 64, 128)},
		{"fwd,B=8,T=256,C=384,H=6", attention.ForwardFlops(8, 256, 384)},
		{"fwdbwd,B=12,T=64,C=128,H=4", 3 * attention.ForwardFlops(12, 64, 128)},
		{"fwdbwd,B=8,T=256,C=384,H=6", 3 * attention.ForwardFlops(8, 256, 384)},
		{"fused,B=1,T=1024,C=384,H=6", attention.ForwardFlops(1, 1024, 384)},
		{"fused,B=1,T=2048,C=384,H=6", attention.ForwardFlops(1, 2048, 384)},
		{"fused,B=1,T=4096,C=384,H=6", attention.ForwardFlops(1, 4096, 384)},
	}
	if len(cases) != len(want) {
		t.Fatalf("-kernels attention selects %d cases, want %d: %v", len(cases), len(want), cases)
	}
	for i, w := range want {
		c := cases[i]
		if c.Shape.Name != w.name || c.Work().Flops != w.flops || c.Kernel.Bound != bench.ComputeBound {
			t.Errorf("case %d: %s, %v flops, bound %v; want %s, %v flops, compute-bound", i, c, c.Work().Flops, c.Kernel.Bound, w.name, w.flops)
		}
	}
	// 2·12·128·64·65, the heads alone: the figure attention's benchmarks use.
	if got := cases[0].Work().Flops; got != 12779520 {
		t.Errorf("fwd,B=12,T=64,C=128,H=4: %v flops, want 12779520", got)
	}

	short, err := bench.Select(all, nil, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	var shortAttn []string
	for _, c := range short {
		if c.Kernel.Name == "attention" {
			shortAttn = append(shortAttn, c.String())
		}
	}
	if len(shortAttn) != 1 || shortAttn[0] != "attention/fwd,B=12,T=64,C=128,H=4" {
		t.Errorf("-short attention cases %v, want the one forward shape", shortAttn)
	}

	// Every simdgpt implementation runs the small forward (generic too:
	// it is under generic's MaxFlops); no peer runs attention.
	for _, im := range allImpls() {
		if got := cases[0].Kernel.Supports(cases[0].Shape, im); got != !im.Peer {
			t.Errorf("%s supports %s: %v, want %v", im.Name, cases[0], got, !im.Peer)
		}
	}
}

// TestWithImpl checks that an attention case's call runs with the chosen
// implementation as the kernels' default and restores the previous one.
// TestAttentionMemory checks the attention kernel's Memory against what
// a case allocates, set up and called once (the layer grows its buffers
// on the first call): at least that, and at most three times it and a
// MiB. Under -short only the training shapes run.
func TestAttentionMemory(t *testing.T) {
	k := attentionKernel()
	im := bench.Ours(kernels.Default())
	checked := 0
	for _, a := range attnShapes() {
		if testing.Short() && a.mode == "fused" {
			continue
		}
		s, _ := k.Shape(a.name())
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		op := k.Setup(s, im)
		if op == nil {
			// Too large for the implementation (generic, under purego,
			// stops at MaxFlops).
			if k.Supports(s, im) {
				t.Errorf("%s: Supports, but Setup returned nil", a.name())
			}
			continue
		}
		checked++
		op()
		runtime.ReadMemStats(&after)
		got, est := float64(after.TotalAlloc-before.TotalAlloc), k.Memory(s)
		if est < got || est > 3*got+(1<<20) {
			t.Errorf("%s: Memory %.0f bytes, a case and its first call allocated %.0f", a.name(), est, got)
		}
	}
	if checked == 0 {
		t.Error("no attention shape could be set up")
	}
}

func TestWithImpl(t *testing.T) {
	prev := kernels.Default()
	for _, p := range kernels.Implementations() {
		var during *kernels.Impl
		withImpl(p, func() { during = kernels.Default() })()
		if during != p || kernels.Default() != prev {
			t.Errorf("withImpl(%s): default %s during the call and %s after; want %s and %s", p.Name(), during.Name(), kernels.Default().Name(), p.Name(), prev.Name())
		}
	}
	// Restored even when the call panics.
	func() {
		defer func() { recover() }()
		withImpl(kernels.Implementations()[0], func() { panic("boom") })()
	}()
	if kernels.Default() != prev {
		t.Errorf("after a panic the default is %s, want %s", kernels.Default().Name(), prev.Name())
	}
}

// TestAttentionRun runs the forward and forward+backward on the small
// training shape with the default implementation and checks the table
// and that the -o file's GFLOP/s is attention's FLOP count over the time.
// (generic, the default of a purego build, runs only the forward: the
// other is beyond its MaxFlops.)
func TestAttentionRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run.txt")
	impl := kernels.Default().Name()
	k := attentionKernel()
	var im *bench.Impl
	for _, o := range bench.OursAll() {
		if o.Name == impl {
			im = o
		}
	}
	fwd, fwdbwd := attention.ForwardFlops(12, 64, 128), 3*attention.ForwardFlops(12, 64, 128)
	flops := map[string]float64{}
	for _, c := range []struct {
		shape string
		flops float64
	}{{"fwd,B=12,T=64,C=128,H=4", fwd}, {"fwdbwd,B=12,T=64,C=128,H=4", fwdbwd}} {
		if s, _ := k.Shape(c.shape); k.Supports(s, im) {
			flops["Attention/shape="+c.shape+"/impl="+impl] = c.flops
		}
	}
	if len(flops) == 0 {
		t.Fatalf("%s runs neither attention shape", impl)
	}
	code, stdout, stderr := kernelbench(t, "-kernels", "attention", "-shapes", "fwd,B=12,T=64,C=128,H=4,fwdbwd,B=12,T=64,C=128,H=4",
		"-impls", impl, "-time", "1ms", "-count", "2", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, stderr)
	}
	for _, want := range []string{"\n## attention: ", "| GFLOP/s ", "| fwd,B=12,T=64,C=128,H=4 ", " " + impl + " "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]int{}
	rd := benchfmt.NewReader(f, out)
	for rd.Scan() {
		r, ok := rd.Result().(*benchfmt.Result)
		if !ok {
			continue
		}
		name := r.Name.String()
		want, known := flops[name]
		if !known {
			t.Errorf("unexpected result %s", name)
			continue
		}
		seen[name]++
		ns, _ := r.Value("sec/op")
		gflops, ok := r.Value("GFLOP/s")
		if !ok || math.Abs(gflops-want/(ns*1e9))/gflops > 1e-6 {
			t.Errorf("%s: %v GFLOP/s at %v s/op, want %v flops a call", name, gflops, ns, want)
		}
	}
	for name := range flops {
		if seen[name] != 2 {
			t.Errorf("%s: %d samples, want 2", name, seen[name])
		}
	}
}
