package bench

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/simdgpt/simdgpt/kernels"
)

func kernelByName(t *testing.T, name string) *Kernel {
	t.Helper()
	for _, k := range Kernels() {
		if k.Name == name {
			return k
		}
	}
	t.Fatalf("no kernel %q", name)
	return nil
}

func shapeOf(t *testing.T, k *Kernel, name string) Shape {
	t.Helper()
	s, ok := k.Shape(name)
	if !ok {
		t.Fatalf("kernel %s has no shape %q", k.Name, name)
	}
	return s
}

// TestWork checks FLOP and byte counts against values computed by hand.
func TestWork(t *testing.T) {
	for _, tc := range []struct {
		kernel, shape string
		flops, bytes  float64
	}{
		// 2·512³; 4 bytes × 3 matrices of 512².
		{"gemm", "sq512", 268435456, 3145728},
		// 2·768·128·65; 4·(768·128 + 128·65 + 768·65).
		{"gemm", "768x128x65", 12779520, 626176},
		// transposes change nothing: 2·128·768·65.
		{"gemm", "128x768x65_TN", 12779520, 4 * (128*768 + 768*65 + 128*65)},
		// T(T+1)·d = 256·257·64; 4·(2·256·64 + 256²).
		{"maskedscores", "T=256,d=64", 4210688, 393216},
		// 64 rows × 1024: 5 flops, 8 bytes an element.
		{"softmax", "n=1024", 327680, 524288},
		// the stream case: 1024 rows × 4096 = 4 Mi elements.
		{"softmax", "n=4096,stream", 5 * 4194304, 8 * 4194304},
		// one row of 65536.
		{"softmax", "n=65536", 5 * 65536, 8 * 65536},
		{"softmaxbackward", "n=256", 4 * 65536, 12 * 65536},
		{"dot", "n=4096", 8192, 32768},
		{"axpy", "n=256", 512, 3072},
		{"sum", "n=16777216", 16777216, 67108864},
	} {
		k := kernelByName(t, tc.kernel)
		w := k.Work(shapeOf(t, k, tc.shape))
		if w.Flops != tc.flops || w.Bytes != tc.bytes {
			t.Errorf("%s/%s: work %+v, want flops %v bytes %v", tc.kernel, tc.shape, w, tc.flops, tc.bytes)
		}
	}
}

// TestShapesConsistent checks every kernel's benchmark cases against their
// own dimensions: names are unique and say the shape they stand for, the
// short shape is one of them, and the softmax matrices hold the element
// counts their names promise (L2-resident, or 64 times more to stream).
func TestShapesConsistent(t *testing.T) {
	for _, k := range Kernels() {
		if len(k.Shapes) == 0 {
			t.Errorf("%s: no shapes", k.Name)
		}
		seen := map[string]bool{}
		for _, s := range k.Shapes {
			if seen[s.Name] {
				t.Errorf("%s: shape %q listed twice", k.Name, s.Name)
			}
			seen[s.Name] = true
		}
		if !seen[k.Short] {
			t.Errorf("%s: short shape %q is not one of its shapes", k.Name, k.Short)
		}
		for _, s := range k.Shapes {
			var want string
			switch k.Name {
			case "gemm", "gemmbias", "gemmbiasgelu", "gemmbf16compute":
				want = gemmShape(s.M, s.K, s.N, s.TransA, s.TransB).Name
				if s.M == s.N && s.N == s.K && !s.TransA && !s.TransB && strings.HasPrefix(s.Name, "sq") {
					want = square(s.M).Name
				}
			case "maskedscores":
				want = fmt.Sprintf("T=%d,d=%d", s.M, s.K)
				if s.M != s.N {
					t.Errorf("%s %s: %d queries, %d keys; want equal", k.Name, s.Name, s.M, s.N)
				}
			case "softmax":
				elems := 1 << 16
				if strings.HasSuffix(s.Name, ",stream") {
					elems = 1 << 22
				}
				if s.M*s.N != elems {
					t.Errorf("softmax %s: %d×%d elements, want %d", s.Name, s.M, s.N, elems)
				}
				continue
			default:
				continue
			}
			if s.Name != want {
				t.Errorf("%s: shape %q has the dimensions of %q (%+v)", k.Name, s.Name, want, s)
			}
		}
	}
}

func TestSupports(t *testing.T) {
	gemm, scores := kernelByName(t, "gemm"), kernelByName(t, "maskedscores")
	generic := Ours(kernels.Implementations()[0])
	if generic.Name != "generic" {
		t.Fatalf("first implementation %q", generic.Name)
	}
	if !gemm.Supports(shapeOf(t, gemm, "768x128x384"), generic) {
		t.Error("generic should run 768x128x384 (75 MFLOP)")
	}
	if gemm.Supports(shapeOf(t, gemm, "sq512"), generic) {
		t.Error("generic should not run sq512 (2^28 flops)")
	}
	if gm := GemmThenMask(kernels.Implementations()[0]); scores.Supports(shapeOf(t, scores, "T=1024,d=128"), gm) || !scores.Supports(shapeOf(t, scores, "T=1024,d=64"), gm) {
		t.Error("generic gemm+mask should run T=1024,d=64 (67 MFLOP) but not T=1024,d=128 (134 MFLOP)")
	}
	gm := GemmThenMask(kernels.Default())
	if gemm.Supports(shapeOf(t, gemm, "sq64"), gm) || !scores.Supports(shapeOf(t, scores, "T=64,d=32"), gm) {
		t.Error("gemm+mask provides maskedscores only")
	}
	if !gm.Peer {
		t.Error("gemm+mask is a peer")
	}
}

// TestGemmThenMask checks the gemm+mask baseline against MaskedScores.
func TestGemmThenMask(t *testing.T) {
	for _, p := range kernels.Implementations() {
		for _, offset := range []int{0, 3, -2} {
			const tq, tk, d = 13, 17, 9
			r := newRand(3)
			q, k := randSlice(r, tq*d, 1), randSlice(r, tk*d, 1)
			want, got := make([]float32, tq*tk), make([]float32, tq*tk)
			kernels.Implementations()[0].MaskedScores(tq, tk, d, 0.5, q, d, k, d, offset, want, tk)
			GemmThenMask(p).MaskedScores(tq, tk, d, 0.5, q, d, k, d, offset, got, tk)
			for i := range want {
				if math.IsInf(float64(want[i]), -1) != math.IsInf(float64(got[i]), -1) || math.Abs(float64(want[i]-got[i])) > 1e-5 {
					t.Fatalf("%s offset %d: s[%d] = %v, want %v", p.Name(), offset, i, got[i], want[i])
				}
			}
		}
	}
}

// TestEveryCaseRuns sets up and runs every kernel's short shape with every
// implementation.
func TestEveryCaseRuns(t *testing.T) {
	for _, k := range Kernels() {
		s := shapeOf(t, k, k.Short)
		for _, im := range append(OursAll(), GemmThenMask(kernels.Default())) {
			op := k.Setup(s, im)
			if (op != nil) != k.Supports(s, im) {
				t.Errorf("%s/%s %s: Setup and Supports disagree", k.Name, s.Name, im.Name)
			}
			if op != nil {
				op()
			}
		}
	}
}

// TestMemory checks Kernel.Memory against what Setup allocates, for every
// kernel on its short shape and its largest: at least that (the estimate
// is on the high side), and not more than three times it and a MiB; and
// Case.Memory, the sum over the implementations that run the case.
func TestMemory(t *testing.T) {
	impls := append(OursAll(), GemmThenMask(kernels.Default()), Memmove())
	for _, k := range Kernels() {
		largest := k.Shapes[0]
		for _, s := range k.Shapes {
			if k.Memory(s) > k.Memory(largest) {
				largest = s
			}
		}
		shapes := []Shape{shapeOf(t, k, k.Short)}
		if !testing.Short() && largest.Name != k.Short {
			shapes = append(shapes, largest)
		}
		for _, s := range shapes {
			var im *Impl
			for _, c := range impls {
				if k.Supports(s, c) {
					im = c
					break
				}
			}
			if im == nil {
				// Too large for every implementation compiled in (generic
				// alone, under purego, stops at MaxFlops): nothing to set up.
				continue
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			op := k.Setup(s, im)
			runtime.ReadMemStats(&after)
			runtime.KeepAlive(op)
			got, est := float64(after.TotalAlloc-before.TotalAlloc), k.Memory(s)
			if est < got || est > 3*got+(1<<20) {
				t.Errorf("%s/%s on %s: Memory %.0f bytes, Setup allocated %.0f", k.Name, s.Name, im.Name, est, got)
			}
			n := 0
			for _, c := range impls {
				if k.Supports(s, c) {
					n++
				}
			}
			if got := (Case{k, s}).Memory(impls); got != float64(n)*est {
				t.Errorf("%s/%s: Case.Memory %.0f, want %d × %.0f", k.Name, s.Name, got, n, est)
			}
		}
	}
}

func TestUCritical(t *testing.T) {
	for _, tc := range []struct {
		n1, n2 int
		tail   float64
		want   int
	}{
		// 5 and 5: C(10,5) = 252 orderings; P(U≤2) = 4/252 = 0.016,
		// P(U≤3) = 7/252 = 0.028.
		{5, 5, 0.025, 3},
		// 4 and 4: P(U≤0) = 1/70 = 0.014, P(U≤1) = 2/70 = 0.029.
		{4, 4, 0.025, 1},
		// 3 and 3: P(U≤0) = 1/20 = 0.05 > 0.025: no interval.
		{3, 3, 0.025, 0},
		{0, 5, 0.025, 0},
	} {
		if got := uCritical(tc.n1, tc.n2, tc.tail); got != tc.want {
			t.Errorf("uCritical(%d, %d, %v) = %d, want %d", tc.n1, tc.n2, tc.tail, got, tc.want)
		}
	}
	// The normal approximation, used above exactU samples a side, within
	// one of the exact value at sizes where both are computed.
	for _, tc := range []struct{ n1, n2 int }{{40, 40}, {30, 40}, {20, 40}, {40, 10}} {
		exact, approx := uCritical(tc.n1, tc.n2, 0.025), uCriticalNormal(tc.n1, tc.n2, 0.025)
		if approx < exact-1 || approx > exact+1 || exact < 1 {
			t.Errorf("sizes %d and %d: normal approximation %d, exact %d", tc.n1, tc.n2, approx, exact)
		}
	}
	// Large samples: the approximation, a k below the mean of U.
	if k := uCritical(1000, 1000, 0.025); k < 1 || k >= 500000 {
		t.Errorf("uCritical(1000, 1000, 0.025) = %d, want in [1, 500000)", k)
	}
}

func TestSpeedup(t *testing.T) {
	// Reference 100..500 ns, x 1..5 ns. Pairwise ratios ref/x: the three
	// smallest are 100/5 = 20, 100/4 = 25, 100/3 = 33.3; the three largest
	// 500/1, 400/1, 300/1. With k = 3 (5 and 5 samples) the 95% interval
	// is [33.3, 300]; the ratio of medians is 300/3 = 100; the samples do
	// not overlap, so the two-sided U test gives p = 2/252.
	r := Speedup([]float64{100, 200, 300, 400, 500}, []float64{1, 2, 3, 4, 5})
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"X", r.X, 100}, {"Lo", r.Lo, 100.0 / 3}, {"Hi", r.Hi, 300}, {"P", r.P, 2.0 / 252}} {
		if math.Abs(c.got-c.want) > 1e-9*c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if !r.HasCI {
		t.Error("no interval")
	}
	if got, want := r.String(), "100× [33.3, 300] p=0.008"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	// Three samples each cannot give a 95% interval.
	r = Speedup([]float64{2, 2.1, 2.2}, []float64{1, 1.1, 1.2})
	if r.HasCI || math.Abs(r.X-2.1/1.1) > 1e-12 {
		t.Errorf("3 samples: %+v", r)
	}
	if got, want := r.String(), "1.91× p=0.100"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	// 8 and 8 samples apart: p = 2/C(16,8) = 2/12870. Medians 23.5 and
	// 13.5: 1.74×. P(U ≤ 13) ≤ 0.025 < P(U ≤ 14), so k = 14: the 14th
	// smallest of the 64 ratios is 25/17 = 1.47 (after 20/17, 21/17, 20/16,
	// 22/17, 21/16, 20/15, 23/17, 22/16, 21/15, 24/17, 20/14, 23/16,
	// 22/15) and the 14th largest 23/11 = 2.09 (after 27/10 ... 21/10 and
	// 27/11, 26/11, 25/11, 24/11, 27/12, 26/12).
	r = Speedup([]float64{20, 21, 22, 23, 24, 25, 26, 27}, []float64{10, 11, 12, 13, 14, 15, 16, 17})
	if got, want := r.String(), "1.74× [1.47, 2.09] p<0.001"; got != want || math.Abs(r.P-2.0/12870) > 1e-12 {
		t.Errorf("String() = %q (p %v), want %q (p %v)", got, r.P, want, 2.0/12870)
	}
}

func TestSummarize(t *testing.T) {
	// Six values: median 3.5; the 95% interval of the median is from the
	// first to the sixth order statistic (confidence 1 - 2/64).
	s := Summarize([]float64{6, 1, 5, 2, 4, 3})
	if s.Center != 3.5 || s.Lo != 1 || s.Hi != 6 || s.Confidence != 1-2.0/64 {
		t.Errorf("Summarize = %+v", s)
	}
	if m := Median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("Median = %v, want 2", m)
	}
	if m := Median(nil); !math.IsNaN(m) {
		t.Errorf("Median(nil) = %v, want NaN", m)
	}
	// The samples keep their order: sample i of a Result is Ns[i] with
	// Iters[i], in the order taken.
	ns, ref := []float64{6, 1, 5, 2, 4, 3}, []float64{9, 7, 8, 12, 10, 11}
	Summarize(ns)
	Median(ns)
	Speedup(ref, ns)
	if fmt.Sprint(ns, ref) != "[6 1 5 2 4 3] [9 7 8 12 10 11]" {
		t.Errorf("the statistics reordered their input: %v %v", ns, ref)
	}
}

func TestUnits(t *testing.T) {
	if g := GFLOPS(2e9, 1e9); g != 2 {
		t.Errorf("2e9 flops in 1 s = %v GFLOP/s, want 2", g)
	}
	if g := GBPS(512, 128); g != 4 {
		t.Errorf("512 B in 128 ns = %v GB/s, want 4", g)
	}
	// A sq512 call of 2^28 flops taking 4 ms: 67.1 GFLOP/s.
	r := &Result{Case: Case{kernelByName(t, "gemm"), shapeOf(t, kernelByName(t, "gemm"), "sq512")}, Ns: []float64{4e6, 5e6, 3e6}}
	if v, unit := r.Rate(); math.Abs(v-268435456/4e6) > 1e-9 || unit != "GFLOP/s" {
		t.Errorf("Rate = %v %s", v, unit)
	}
	dot := kernelByName(t, "dot")
	r = &Result{Case: Case{dot, shapeOf(t, dot, "n=4096")}, Ns: []float64{1000}}
	if v, unit := r.Rate(); v != 32.768 || unit != "GB/s" {
		t.Errorf("Rate = %v %s", v, unit)
	}
	for _, tc := range []struct {
		ns   float64
		want string
	}{{812, "812ns"}, {1250, "1.25µs"}, {34.5e6, "34.5ms"}, {2e9, "2.00s"}, {999.6, "1000ns"}, {9.996, "10.0ns"}, {99.96, "100ns"}, {0.344, "0.34ns"}, {1.005e6, "1.00ms"}, {math.NaN(), "–"}} {
		if got := FormatNs(tc.ns); got != tc.want {
			t.Errorf("FormatNs(%v) = %q, want %q", tc.ns, got, tc.want)
		}
	}
	if got := (Ratio{X: 9.996, P: math.NaN()}).String(); got != "10.0×" {
		t.Errorf("ratio 9.996 = %q, want 10.0×", got)
	}
}

// TestRunInterleaves runs a fake case and checks that the samples of the
// implementations alternate, rotating which goes first, and are counted.
func TestRunInterleaves(t *testing.T) {
	var trace []string
	k := &Kernel{
		Name: "fake", Bound: MemoryBound,
		Shapes: []Shape{{Name: "n=1", N: 1}},
		work:   func(Shape) Work { return Work{Flops: 1, Bytes: 4} },
		has:    func(im *Impl) bool { return im.Sum != nil },
		setup: func(_ Shape, im *Impl) func() {
			return func() {
				trace = append(trace, im.Name)
				time.Sleep(20 * time.Microsecond)
			}
		},
	}
	sum := func([]float32) float32 { return 0 }
	a, b, none := &Impl{Name: "A", KernelFuncs: KernelFuncs{Sum: sum}}, &Impl{Name: "B", KernelFuncs: KernelFuncs{Sum: sum}}, &Impl{Name: "C"}
	res := Run(Case{k, k.Shapes[0]}, []*Impl{a, none, b}, Options{Count: 3, Time: time.Millisecond})
	if len(res) != 2 || res[0].Impl != a || res[1].Impl != b {
		t.Fatalf("results for %v, want A and B (C lacks the kernel)", res)
	}
	for _, r := range res {
		if len(r.Ns) != 3 || len(r.Iters) != 3 || r.Procs != runtime.GOMAXPROCS(0) {
			t.Fatalf("%s: %d samples, %d iters, GOMAXPROCS %d", r.Impl.Name, len(r.Ns), len(r.Iters), r.Procs)
		}
		if _, ok := r.PeakKey(); ok {
			t.Errorf("%s: a memory-bound case has a peak key", r.Impl.Name)
		}
		for i, ns := range r.Ns {
			if ns < 20e3 || r.Iters[i] < 1 {
				t.Errorf("%s sample %d: %v ns/op over %d calls; each call sleeps 20µs", r.Impl.Name, i, ns, r.Iters[i])
			}
		}
	}
	// The samples are the end of the trace: rounds A B, B A, A B.
	var want []string
	for _, s := range []struct {
		r      *Result
		sample int
	}{{res[0], 0}, {res[1], 0}, {res[1], 1}, {res[0], 1}, {res[0], 2}, {res[1], 2}} {
		for range s.r.Iters[s.sample] {
			want = append(want, s.r.Impl.Name)
		}
	}
	if len(trace) < len(want) {
		t.Fatalf("%d calls traced, want at least %d", len(trace), len(want))
	}
	if got := strings.Join(trace[len(trace)-len(want):], ""); got != strings.Join(want, "") {
		t.Errorf("calls of the samples\n%s\nwant\n%s", got, strings.Join(want, ""))
	}
}

func TestSelect(t *testing.T) {
	all := Kernels()
	cases, err := Select(all, nil, nil, true)
	if err != nil || len(cases) != len(all) {
		t.Fatalf("short: %d cases, %v; want one per kernel", len(cases), err)
	}
	cases, err = Select(all, []string{"gemm", "softmax"}, []string{"sq64", "n=4096,stream"}, false)
	if err != nil || len(cases) != 2 || cases[0].String() != "gemm/sq64" || cases[1].String() != "softmax/n=4096,stream" {
		t.Errorf("Select = %v, %v", cases, err)
	}
	for _, tc := range []struct {
		kernels, shapes []string
		want            string
	}{
		// Every kernel, in the order of Kernels (kernels added later included).
		{[]string{"gemmm"}, nil, `unknown kernel "gemmm"; valid kernels: ` + strings.Join(KernelNames(all), ", ")},
		{[]string{"dot"}, []string{"sq64"}, `unknown shape "sq64" for kernels dot; valid shapes: n=256, n=4096, n=65536, n=16777216`},
	} {
		if _, err := Select(all, tc.kernels, tc.shapes, false); err == nil || err.Error() != tc.want {
			t.Errorf("Select(%v, %v) error %v, want %s", tc.kernels, tc.shapes, err, tc.want)
		}
	}
	impls := []*Impl{{Name: "generic"}, {Name: "gonum"}}
	if got, err := SelectImpls(impls, []string{"gonum"}); err != nil || len(got) != 1 || got[0] != impls[1] {
		t.Errorf("SelectImpls = %v, %v", got, err)
	}
	if _, err := SelectImpls(impls, []string{"mkl"}); err == nil || err.Error() != `unknown implementation "mkl"; valid implementations: generic, gonum` {
		t.Errorf("SelectImpls error %v", err)
	}
}
