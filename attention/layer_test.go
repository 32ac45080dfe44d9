package attention

import (
	"fmt"
	"math"
	"runtime"
	"testing"

	"github.com/simdgpt/simdgpt/internal/parallel"
	"github.com/simdgpt/simdgpt/kernels"
	"github.com/simdgpt/simdgpt/kernels/kernelstest"
)

// fdShapes are small enough for a finite difference per parameter.
var fdShapes = []struct {
	s refShape
	h int // 0: single head
}{
	{refShape{1, 1, 4, 1}, 1},
	{refShape{2, 3, 6, 1}, 0},
	{refShape{2, 5, 8, 2}, 2},
	{refShape{1, 4, 6, 3}, 3},
	{refShape{2, 3, 8, 4}, 4},
}

// fdGradient returns dL/dqkv of the cross-entropy loss of the reference
// forward, by central differences in float64.
func fdGradient(pr *problem, scale float64) []float64 {
	s := pr.s
	n := s.b * s.t
	qkv := to64(pr.qkv)
	loss := func() float64 {
		l, _ := crossEntropy(n, s.c, refForward(s, scale, qkv).y, pr.targets)
		return l
	}
	const h = 1e-5
	d := make([]float64, len(qkv))
	for i := range qkv {
		old := qkv[i]
		qkv[i] = old + h
		lp := loss()
		qkv[i] = old - h
		lm := loss()
		qkv[i] = old
		d[i] = (lp - lm) / (2 * h)
	}
	return d
}

// TestGradientsFiniteDifferences holds the float64 reference backward and
// the fast path (float32) of every implementation to central differences
// of the cross-entropy loss computed in float64.
func TestGradientsFiniteDifferences(t *testing.T) {
	for _, tc := range fdShapes {
		s := tc.s
		t.Run(fmt.Sprintf("B=%d,T=%d,C=%d,H=%d", s.b, s.t, s.c, tc.h), func(t *testing.T) {
			pr := newProblem(s, 1)
			scale := float64(newLayer(t, nil, s.c, tc.h).Scale())
			fd := fdGradient(pr, scale)

			tr := refForward(s, scale, to64(pr.qkv))
			_, dy := crossEntropy(s.b*s.t, s.c, tr.y, pr.targets)
			if e := relErr64(refBackward(tr, dy), fd); e > 1e-6 {
				t.Errorf("reference dqkv vs finite differences: relative error %.2g", e)
			}

			kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
				fast := runFast(newLayer(t, p, s.c, tc.h), pr)
				if e := relErr(fast.dqkv, fd); e > 1e-4 {
					t.Errorf("fast dqkv vs finite differences: relative error %.2g", e)
				}
			})
		})
	}
}

func relErr64(got, want []float64) float64 {
	num, den := 0.0, 1e-30
	for i := range got {
		num = math.Max(num, math.Abs(got[i]-want[i]))
		den = math.Max(den, math.Abs(want[i]))
	}
	return num / den
}

// refCases cover H in {1,2,4,8}, the single head, T = 1, odd T, T across
// the row blocks, and B > 1.
var refCases = []struct {
	s refShape
	h int
}{
	{refShape{1, 1, 8, 1}, 0},
	{refShape{2, 7, 16, 1}, 0},
	{refShape{1, 1, 32, 8}, 8},
	{refShape{3, 9, 32, 1}, 1},
	{refShape{2, 17, 32, 2}, 2},
	{refShape{2, 33, 32, 4}, 4},
	{refShape{3, 13, 32, 8}, 8},
	{refShape{2, 64, 32, 4}, 4},
	{refShape{1, 130, 32, 2}, 2},
	{refShape{2, 131, 64, 8}, 8},
	{refShape{1, 200, 48, 1}, 1},
}

// TestFastMatchesReference holds output, probabilities and gradient of
// the fast path of every implementation to the explicit float64
// reference.
func TestFastMatchesReference(t *testing.T) {
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		for _, tc := range refCases {
			s := tc.s
			l := newLayer(t, p, s.c, tc.h)
			pr := newProblem(s, 2)
			fast := runFast(l, pr)
			tr := refForward(s, float64(l.Scale()), to64(pr.qkv))
			_, dy := crossEntropy(s.b*s.t, s.c, tr.y, pr.targets)
			want := [][]float64{tr.y, tr.probs, refBackward(tr, dy)}
			for i, got := range fast.named() {
				if e := relErr(got.s, want[i]); e > 2e-5 {
					t.Errorf("B=%d T=%d C=%d H=%d: %s: relative error %.2g against the reference", s.b, s.t, s.c, tc.h, got.name, e)
				}
			}
		}
	})
}

// TestMultiHeadOneEqualsSingleHead is the seed's sanity anchor: with one
// head the multi-head layer is the single-head layer, in output and in
// the gradient of the cross-entropy loss, bit for bit.
func TestMultiHeadOneEqualsSingleHead(t *testing.T) {
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		for _, s := range []refShape{{1, 1, 4, 1}, {2, 7, 16, 1}, {3, 65, 24, 1}, {1, 128, 64, 1}} {
			pr := newProblem(s, 3)
			single := runFast(NewSingleHead(s.c, WithImpl(p)), pr)
			multi := runFast(newLayer(t, p, s.c, 1), pr)
			equal(t, fmt.Sprintf("B=%d T=%d C=%d: multi-head H=1 against single head", s.b, s.t, s.c), multi.named(), single.named())
		}
	})
}

// TestCausality changes qkv at every position after t0 and checks that
// the output at positions up to t0 does not change at all.
func TestCausality(t *testing.T) {
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		for _, tc := range []struct {
			s refShape
			h int
		}{{refShape{2, 9, 16, 2}, 2}, {refShape{1, 70, 32, 4}, 4}, {refShape{2, 5, 8, 1}, 0}} {
			s := tc.s
			l := newLayer(t, p, s.c, tc.h)
			pr := newProblem(s, 4)
			n := s.b * s.t
			base := make([]float32, n*s.c)
			l.Forward(base, pr.qkv, s.b, s.t)
			out := make([]float32, n*s.c)
			for t0 := 0; t0 < s.t-1; t0++ {
				qkv := append([]float32(nil), pr.qkv...)
				for b := 0; b < s.b; b++ {
					for i := (b*s.t + t0 + 1) * 3 * s.c; i < (b+1)*s.t*3*s.c; i++ {
						qkv[i] = -3 * qkv[i]
					}
				}
				l.Forward(out, qkv, s.b, s.t)
				for b := 0; b < s.b; b++ {
					for i := b * s.t * s.c; i < (b*s.t+t0+1)*s.c; i++ {
						if out[i] != base[i] {
							t.Fatalf("B=%d T=%d H=%d: changing positions > %d changed out at position %d of sequence %d: %v -> %v",
								s.b, s.t, tc.h, t0, (i/s.c)%s.t, b, base[i], out[i])
						}
					}
				}
			}
		}
	})
}

// TestProbs checks that every probability row sums to 1, masked entries
// are exactly 0 and unmasked ones positive.
func TestProbs(t *testing.T) {
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		for _, tc := range refCases {
			s := tc.s
			l := newLayer(t, p, s.c, tc.h)
			pr := newProblem(s, 5)
			l.Forward(make([]float32, s.b*s.t*s.c), pr.qkv, s.b, s.t)
			P := l.Probs()
			H := l.Heads()
			if len(P) != s.b*H*s.t*s.t {
				t.Fatalf("len(Probs()) = %d, want B*H*T*T = %d", len(P), s.b*H*s.t*s.t)
			}
			for r := 0; r < s.b*H*s.t; r++ {
				i := r % s.t
				row := P[r*s.t : (r+1)*s.t]
				sum := 0.0
				for j, v := range row {
					if j > i && v != 0 {
						t.Fatalf("B=%d T=%d H=%d: masked probability [%d,%d] = %v, want exactly 0", s.b, s.t, H, i, j, v)
					}
					if j <= i && !(v > 0) {
						t.Fatalf("B=%d T=%d H=%d: probability [%d,%d] = %v, want > 0", s.b, s.t, H, i, j, v)
					}
					sum += float64(v)
				}
				if math.Abs(sum-1) > 1e-5 {
					t.Fatalf("B=%d T=%d H=%d: row %d sums to %v", s.b, s.t, H, r, sum)
				}
			}
		}
	})
}

// TestThreadCountDoesNotChangeResults runs the same problem with 1, 2, 3,
// 8, 32 and 64 goroutines: outputs and gradients of Forward and Backward, and the
// outputs of Fused.Forward and Decoder.Decode (a prompt whose heads run in
// parallel; on a bf16 cache too, then a call of 6 rows and single tokens,
// which read it in place), must be bit-identical (the problems are below
// Gemm's own parallel threshold).
func TestThreadCountDoesNotChangeResults(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	s := refShape{3, 67, 32, 4}
	pr := newProblem(s, 6)
	ds := refShape{1, 160, 64, 4}
	dpr := newProblem(ds, 7)
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		var first []namedF32
		for _, procs := range []int{1, 2, 3, 8, 32, 64} {
			runtime.GOMAXPROCS(procs)
			l := newLayer(t, p, s.c, 4)
			got := runFast(l, pr).named()
			fused := make([]float32, s.b*s.t*s.c)
			l.NewFused().Forward(fused, pr.qkv, s.b, s.t)
			dl := newLayer(t, p, ds.c, 4)
			dec := make([]float32, ds.t*ds.c)
			d := dl.NewDecoder(ds.t)
			d.Decode(dec, dpr.qkv, 150)
			d.Decode(dec[150*ds.c:], dpr.qkv[150*3*ds.c:], 10)
			dec16 := make([]float32, ds.t*ds.c)
			d16 := dl.NewDecoderKV(ds.t, KVBF16)
			d16.Decode(dec16, dpr.qkv, 150)
			d16.Decode(dec16[150*ds.c:], dpr.qkv[150*3*ds.c:], 6)
			for pos := 156; pos < ds.t; pos++ {
				d16.Decode(dec16[pos*ds.c:], dpr.qkv[pos*3*ds.c:], 1)
			}
			got = append(got, namedF32{"fused out", fused}, namedF32{"decoded out", dec}, namedF32{"decoded out, bf16 cache", dec16})
			if first == nil {
				first = got
				continue
			}
			equal(t, fmt.Sprintf("GOMAXPROCS=%d against 1", procs), got, first)
		}
	})
}

// TestDecodeTokenThreadCount decodes one token after a cache long enough
// that its heads are split between goroutines (decodeMinFlops), on each
// cache format, and checks that its output is bit-identical at 1, 2, 3,
// 8, 32 and 64 goroutines.
func TestDecodeTokenThreadCount(t *testing.T) {
	if testing.Short() {
		t.Skip("a prompt of 1040 tokens")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	const past = 1040
	s := refShape{1, past + 1, 256, 4}
	if 4*(past+1)*s.c < decodeMinFlops {
		t.Fatalf("the token's heads would not be split: 4·%d·%d < %d", past+1, s.c, decodeMinFlops)
	}
	pr := newProblem(s, 8)
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		for _, kv := range []KVCache{KVFloat32, KVBF16} {
			runtime.GOMAXPROCS(1)
			l := newLayer(t, p, s.c, s.h)
			d := l.NewDecoderKV(s.t, kv)
			prompt := make([]float32, past*s.c)
			d.Decode(prompt, pr.qkv, past)
			var first []float32
			for _, procs := range []int{1, 2, 3, 8, 32, 64} {
				runtime.GOMAXPROCS(procs)
				out := make([]float32, s.c)
				d.Decode(out, pr.qkv[past*3*s.c:], 1)
				d.n = past // forget the token: the next thread count decodes it again
				if first == nil {
					first = out
					continue
				}
				equal(t, fmt.Sprintf("%v cache, GOMAXPROCS=%d against 1", kv, procs), []namedF32{{"token out", out}}, []namedF32{{"token out", first}})
			}
		}
	})
}

func TestNewMultiHeadErrors(t *testing.T) {
	for _, tc := range []struct {
		c, h int
		want string // "" means no error
	}{
		{8, 2, ""}, {8, 8, ""}, {7, 1, ""},
		{10, 4, "attention.NewMultiHead: C = 10 is not divisible by H = 4 heads (C must be H*D)"},
		{6, 4, "attention.NewMultiHead: C = 6 is not divisible by H = 4 heads (C must be H*D)"},
		{0, 1, "attention.NewMultiHead: C = 0 and H = 1 must both be >= 1"},
		{8, 0, "attention.NewMultiHead: C = 8 and H = 0 must both be >= 1"},
	} {
		l, err := NewMultiHead(tc.c, tc.h)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("NewMultiHead(%d, %d): %v", tc.c, tc.h, err)
		case tc.want == "" && (l.C() != tc.c || l.Heads() != tc.h || l.HeadDim()*tc.h != tc.c):
			t.Errorf("NewMultiHead(%d, %d): C=%d Heads=%d HeadDim=%d", tc.c, tc.h, l.C(), l.Heads(), l.HeadDim())
		case tc.want != "" && (err == nil || err.Error() != tc.want || l != nil):
			t.Errorf("NewMultiHead(%d, %d) = %v, %v; want nil, %q", tc.c, tc.h, l, err, tc.want)
		}
	}
}

// TestWithImpl checks which implementation a layer computes with, and
// that its decoders and fused forwards share it and its shape.
func TestWithImpl(t *testing.T) {
	def := kernels.Default()
	impls := kernels.Implementations()
	last := impls[len(impls)-1]
	for _, tc := range []struct {
		name string
		l    *Layer
		want *kernels.Impl
	}{
		{"single, no option", NewSingleHead(8), def},
		{"single, generic", NewSingleHead(8, WithImpl(impls[0])), impls[0]},
		{"multi, " + last.Name(), must(NewMultiHead(8, 2, WithImpl(last))), last},
		{"multi, WithImpl(nil)", must(NewMultiHead(8, 2, WithImpl(nil))), def},
		{"multi, nil option", must(NewMultiHead(8, 4, nil)), def},
	} {
		d, f := tc.l.NewDecoder(4), tc.l.NewFused()
		for _, got := range []struct {
			job           string
			impl          *kernels.Impl
			c, h, hd      int
			scale, wscale float32
		}{
			{"Layer", tc.l.Impl(), tc.l.C(), tc.l.Heads(), tc.l.HeadDim(), tc.l.Scale(), tc.l.Scale()},
			{"Decoder", d.Impl(), d.C(), d.Heads(), d.HeadDim(), d.Scale(), tc.l.Scale()},
			{"Fused", f.Impl(), f.C(), f.Heads(), f.HeadDim(), f.Scale(), tc.l.Scale()},
		} {
			if got.impl != tc.want {
				t.Errorf("%s: %s.Impl() = %v, want %v", tc.name, got.job, got.impl, tc.want)
			}
			if got.c != 8 || got.h*got.hd != 8 || got.scale != float32(1/math.Sqrt(float64(got.hd))) || got.scale != got.wscale {
				t.Errorf("%s: %s has C=%d H=%d D=%d scale=%v", tc.name, got.job, got.c, got.h, got.hd, got.scale)
			}
		}
	}
}

// allJobs runs a layer on p through every job: Forward and Backward,
// Fused.Forward and a Decoder over a prompt and single tokens.
func allJobs(t *testing.T, p *kernels.Impl, pr *problem, h int) []namedF32 {
	s := pr.s
	l := newLayer(t, p, s.c, h)
	got := runFast(l, pr).named()
	fused := make([]float32, s.b*s.t*s.c)
	l.NewFused().Forward(fused, pr.qkv, s.b, s.t)
	dec := make([]float32, s.t*s.c)
	d := l.NewDecoder(s.t)
	d.Decode(dec, pr.qkv, s.t-2)
	for pos := s.t - 2; pos < s.t; pos++ {
		d.Decode(dec[pos*s.c:], pr.qkv[pos*3*s.c:], 1)
	}
	return append(got, namedF32{"fused out", fused}, namedF32{"decoded out", dec})
}

// TestImplNotDefault checks that a layer made WithImpl(p) computes with p
// whatever kernels.Default() is: its results with every other
// implementation as the default are bit-identical to those with p as the
// default. (Implementations round differently, so a kernel call that
// went through the default would show.)
func TestImplNotDefault(t *testing.T) {
	defer kernels.SetDefault(kernels.Default().Name())
	s := refShape{2, 70, 32, 4}
	pr := newProblem(s, 42)
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		if err := kernels.SetDefault(p.Name()); err != nil {
			t.Fatal(err)
		}
		want := allJobs(t, p, pr, 4)
		for _, q := range kernels.Implementations() {
			if q == p {
				continue
			}
			if err := kernels.SetDefault(q.Name()); err != nil {
				t.Fatal(err)
			}
			equal(t, fmt.Sprintf("%s layer with default %s against default %s", p.Name(), q.Name(), p.Name()), allJobs(t, p, pr, 4), want)
		}
	})
}

func must(l *Layer, err error) *Layer {
	if err != nil {
		panic(err)
	}
	return l
}

// TestBadArguments checks that every shape mistake panics with a message
// naming the method, the argument and the numbers, and that the panic
// comes before anything is written.
func TestBadArguments(t *testing.T) {
	const c = 8
	l := newLayer(t, nil, c, 2)
	qkv := make([]float32, 3*2*3*c)
	sentinel := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = 42
		}
		return s
	}
	for _, tc := range []struct {
		name string
		f    func(y []float32)
		want []string
	}{
		{"b=0", func(y []float32) { l.Forward(y, qkv, 0, 3) }, []string{"attention.Layer.Forward: b = 0, must be >= 1"}},
		{"t<0", func(y []float32) { l.Forward(y, qkv, 2, -1) }, []string{"attention.Layer.Forward: t = -1, must be >= 1"}},
		{"qkv short", func(y []float32) { l.Forward(y, qkv[:143], 2, 3) }, []string{"attention.Layer.Forward: len(qkv) = 143, want >= 3*b*t*C = 3*2*3*8 = 144"}},
		{"qkv of y's size", func(y []float32) { l.Forward(y, qkv[:48], 2, 3) }, []string{"attention.Layer.Forward: len(qkv) = 48, want >= 3*b*t*C = 3*2*3*8 = 144"}},
		{"y short", func(y []float32) { l.Forward(y[:47], qkv, 2, 3) }, []string{"attention.Layer.Forward: len(y) = 47, want >= b*t*C = 2*3*8 = 48"}},
	} {
		y := sentinel(2 * 3 * c)
		mustPanic(t, func() { tc.f(y) }, tc.want...)
		for i, v := range y {
			if v != 42 {
				t.Errorf("%s: y[%d] = %v was written before the panic", tc.name, i, v)
				break
			}
		}
	}

	// Backward.
	fresh := newLayer(t, nil, c, 2)
	dy := make([]float32, 2*3*c)
	mustPanic(t, func() { fresh.Backward(make([]float32, len(qkv)), dy, qkv) }, "attention.Layer.Backward: no Forward to differentiate (call Forward first)")
	l.Forward(make([]float32, 2*3*c), qkv, 2, 3)
	for _, tc := range []struct {
		f    func(dqkv []float32)
		want string
	}{
		{func(dqkv []float32) { l.Backward(dqkv[:10], dy, qkv) }, "attention.Layer.Backward: len(dqkv) = 10, want >= 3*b*t*C = 3*2*3*8 = 144"},
		{func(dqkv []float32) { l.Backward(dqkv, dy[:47], qkv) }, "attention.Layer.Backward: len(dy) = 47, want >= b*t*C = 2*3*8 = 48"},
		{func(dqkv []float32) { l.Backward(dqkv, dy, qkv[:100]) }, "attention.Layer.Backward: len(qkv) = 100, want >= 3*b*t*C = 3*2*3*8 = 144"},
	} {
		dqkv := sentinel(len(qkv))
		mustPanic(t, func() { tc.f(dqkv) }, tc.want)
		for _, v := range dqkv {
			if v != 42 {
				t.Errorf("%q: dqkv written before the panic", tc.want)
				break
			}
		}
	}

	// Constructors.
	mustPanic(t, func() { NewSingleHead(0) }, "attention.NewSingleHead: c = 0, must be >= 1")
}

// TestNoAllocs checks that warm layers, decoders and fused forwards
// allocate nothing per call, on one goroutine and with their work split
// over several.
func TestNoAllocs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		for _, procs := range []int{1, 4} {
			runtime.GOMAXPROCS(procs)
			for _, tc := range []struct {
				s refShape
				h int
			}{{refShape{2, 70, 32, 4}, 4}, {refShape{3, 16, 24, 1}, 0}} {
				s := tc.s
				l := newLayer(t, p, s.c, tc.h)
				pr := newProblem(s, 8)
				n := s.b * s.t * s.c
				y, dqkv := make([]float32, n), make([]float32, 3*n)
				f := l.NewFused()
				d := l.NewDecoder(s.t)
				for _, job := range []struct {
					name string
					f    func()
				}{
					{"Layer.Forward", func() { l.Forward(y, pr.qkv, s.b, s.t) }},
					{"Layer.Backward", func() { l.Backward(dqkv, y, pr.qkv) }},
					{"Fused.Forward", func() { f.Forward(y, pr.qkv, s.b, s.t) }},
					// A whole sequence as a prompt (its heads in parallel
					// when the work is large enough), then again.
					{"Decoder.Decode", func() { d.Reset(); d.Decode(y, pr.qkv, s.t) }},
				} {
					job.f() // warm up
					if a := testing.AllocsPerRun(10, job.f); a != 0 {
						t.Errorf("GOMAXPROCS=%d H=%d: %s allocates %v times per call", procs, tc.h, job.name, a)
					}
				}
			}
		}
	})
}

// TestConcurrentLayers runs layers of every implementation at once from
// several goroutines (they share the parallel runtime's goroutines and
// budget) and checks every result against the same layer run alone. CI
// runs it under the race detector.
func TestConcurrentLayers(t *testing.T) {
	type job struct {
		p    *kernels.Impl
		s    refShape
		h    int
		pr   *problem
		want []namedF32
	}
	var jobs []*job
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		for i, tc := range []struct {
			s refShape
			h int
		}{{refShape{2, 70, 32, 4}, 4}, {refShape{3, 20, 16, 1}, 0}, {refShape{1, 130, 32, 8}, 8}, {refShape{4, 9, 24, 3}, 3}} {
			pr := newProblem(tc.s, uint64(30+i))
			jobs = append(jobs, &job{p, tc.s, tc.h, pr, runFast(newLayer(t, p, tc.s.c, tc.h), pr).named()})
		}
	})
	reps, calls := 3, 3
	if testing.Short() {
		reps, calls = 2, 1
	}
	errs := make(chan string, reps*len(jobs))
	done := make(chan struct{})
	for rep := 0; rep < reps; rep++ {
		for _, j := range jobs {
			go func() {
				defer func() { done <- struct{}{} }()
				l, err := NewMultiHead(j.s.c, max(j.h, 1), WithImpl(j.p))
				if j.h == 0 {
					l, err = NewSingleHead(j.s.c, WithImpl(j.p)), nil
				}
				if err != nil {
					errs <- err.Error()
					return
				}
				for k := 0; k < calls; k++ {
					got := runFast(l, j.pr).named()
					for i := range got {
						for e := range got[i].s {
							if got[i].s[e] != j.want[i].s[e] {
								errs <- fmt.Sprintf("%s C=%d H=%d: %s[%d] = %v concurrently, %v alone", j.p.Name(), j.s.c, j.h, got[i].name, e, got[i].s[e], j.want[i].s[e])
								return
							}
						}
					}
				}
			}()
		}
	}
	for i := 0; i < reps*len(jobs); i++ {
		<-done
	}
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// replicaTask runs one layer per part, as a model's data-parallel step
// runs its replicas: each part does Forward and Backward on its layer.
type replicaTask struct {
	layers []*Layer
	pr     *problem
	got    [][]namedF32
}

func (r *replicaTask) RunPart(_, part int) {
	r.got[part] = runFast(r.layers[part], r.pr).named()
}

// TestNestedInParallelRun calls layers from inside the parts of an outer
// parallel.Run, whose goroutines hold the budget the layers' own
// parallel.Run then shares, with 1, 2 and 4 goroutines: every replica's
// results must equal the layer run alone at the same GOMAXPROCS.
func TestNestedInParallelRun(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	s := refShape{2, 70, 32, 4}
	pr := newProblem(s, 41)
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		for _, procs := range []int{1, 2, 4} {
			runtime.GOMAXPROCS(procs)
			want := runFast(newLayer(t, p, s.c, 4), pr).named()
			const replicas = 3
			r := &replicaTask{pr: pr, got: make([][]namedF32, replicas)}
			for range replicas {
				r.layers = append(r.layers, newLayer(t, p, s.c, 4))
			}
			parallel.Run(r, replicas, replicas)
			for i, got := range r.got {
				equal(t, fmt.Sprintf("GOMAXPROCS=%d: replica %d against the layer alone", procs, i), got, want)
			}
		}
	})
}

// TestBackwardOverwrites checks the contract the model relies on:
// Backward overwrites dqkv whole (nothing is added to what it held) and
// may be called again after one Forward, with the same result.
func TestBackwardOverwrites(t *testing.T) {
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		s := refShape{2, 75, 16, 2}
		pr := newProblem(s, 40)
		l := newLayer(t, p, s.c, 2)
		if l.Probs() != nil {
			t.Error("Probs() before any Forward is not nil")
		}
		once := runFast(l, pr) // Forward, then Backward into zeros
		n := s.b * s.t * s.c
		y := make([]float32, n)
		l.Forward(y, pr.qkv, s.b, s.t)
		dy := lossGradient(pr, y)
		dqkv := make([]float32, 3*n)
		for rep := 0; rep < 2; rep++ {
			for i := range dqkv {
				dqkv[i] = 1e9 // must be overwritten, not added to
			}
			l.Backward(dqkv, dy, pr.qkv)
			equal(t, fmt.Sprintf("Backward call %d over a dqkv of 1e9", rep+1), []namedF32{{"dqkv", dqkv}}, []namedF32{{"dqkv", once.dqkv}})
		}
	})
}
