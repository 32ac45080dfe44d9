package bench

import (
	"context"
	"math"
	"runtime"
	"time"

	"github.com/simdgpt/simdgpt/kernels"
)

// Options configure Run.
type Options struct {
	// Count is the number of samples taken of each implementation.
	Count int
	// Time is the target duration of one sample; a sample runs at least
	// one call.
	Time time.Duration
	// Peaks, if not nil, receives the FMA peak samples of compute-bound
	// cases: a PeakSampler for each distinct Impl.ISA of the case, on
	// GOMAXPROCS goroutines, begun before the first round of samples, fed
	// each sample's time, and ended after the last round. Result.PeakFracs
	// divides by them once the run is over.
	Peaks *Peaks
}

// Result holds the samples of one implementation on one case.
type Result struct {
	Case Case
	Impl *Impl
	// Iters[i] is the number of calls sample i timed and Ns[i] its time
	// per call in nanoseconds.
	Iters []int
	Ns    []float64
	// Procs is GOMAXPROCS during the samples.
	Procs int
}

// prepared is one implementation of a case, ready to run.
type prepared struct {
	res   *Result
	op    func()
	iters int
}

// Run measures the implementations of case c that support it, taking
// opt.Count samples of each, interleaved: every round takes one sample of
// each implementation (A B C, then B C A, ...), so that a slow spell of
// the machine falls on all of them. For compute-bound kernels, with
// opt.Peaks set, the FMA peak of each Impl.ISA is sampled before, between
// and after the samples (see Options.Peaks and the package documentation).
// Implementations that do not support c are left out.
func Run(c Case, impls []*Impl, opt Options) []*Result {
	rs, _ := RunContext(context.Background(), c, impls, opt)
	return rs
}

// RunContext is Run that checks ctx before each implementation's
// calibration and each sample: once ctx is done it returns ctx's error
// and the samples taken so far (fewer than opt.Count: not a complete
// measurement).
func RunContext(ctx context.Context, c Case, impls []*Impl, opt Options) ([]*Result, error) {
	procs := runtime.GOMAXPROCS(0)
	var ps []*prepared
	for _, im := range impls {
		op := c.Kernel.Setup(c.Shape, im)
		if op == nil {
			continue
		}
		ps = append(ps, &prepared{res: &Result{Case: c, Impl: im, Procs: procs}, op: op})
	}
	results := func() []*Result {
		out := make([]*Result, len(ps))
		for i, p := range ps {
			out[i] = p.res
		}
		return out
	}
	for _, p := range ps {
		if err := ctx.Err(); err != nil {
			return results(), err
		}
		p.iters = calibrate(p.op, opt.Time)
	}
	// One peak sampler per implementation whose peak loop is a yardstick
	// here, shared by the Impls that have it as their ISA.
	samplers := map[*kernels.Impl]*PeakSampler{}
	var order []*PeakSampler
	if opt.Peaks != nil && c.Kernel.Bound == ComputeBound {
		for _, p := range ps {
			if isa := p.res.Impl.ISA; isa != nil && samplers[isa] == nil {
				s := opt.Peaks.SamplerFor(c.Kernel, isa, procs)
				samplers[isa] = s
				order = append(order, s)
			}
		}
	}
	for _, s := range order {
		s.Begin()
	}
	for round := range opt.Count {
		for i := range ps {
			if err := ctx.Err(); err != nil {
				return results(), err
			}
			p := ps[(round+i)%len(ps)]
			t0 := time.Now()
			for range p.iters {
				p.op()
			}
			d := time.Since(t0)
			p.res.Iters = append(p.res.Iters, p.iters)
			p.res.Ns = append(p.res.Ns, float64(d.Nanoseconds())/float64(p.iters))
			if s := samplers[p.res.Impl.ISA]; s != nil {
				s.Timed(d)
			}
		}
	}
	for _, s := range order {
		s.End()
	}
	return results(), nil
}

// calibrate warms op up and returns the number of calls that take about d.
func calibrate(op func(), d time.Duration) int {
	op()
	n := 1
	for {
		t0 := time.Now()
		for range n {
			op()
		}
		el := time.Since(t0)
		if el >= d/4 || el >= 50*time.Millisecond || n >= 1<<30 {
			if el <= 0 {
				el = 1
			}
			return int(max(1, min(1<<30, math.Round(float64(n)*float64(d)/float64(el)))))
		}
		n *= 4
	}
}

// PeakKey returns the peak r's percent of peak divides by: the FMA peak
// loop of its Impl.ISA on Procs goroutines (the bfloat16 one, its key's
// ISA ending in BF16PeakSuffix, for a Kernel.PeakBF16 case on an ISA
// whose bfloat16 products run on its dot-product instruction,
// kernels.Impl.BF16Dot); false for a memory-bound case or an Impl
// without an ISA.
func (r *Result) PeakKey() (PeakKey, bool) {
	if r.Case.Kernel.Bound != ComputeBound || r.Impl.ISA == nil {
		return PeakKey{}, false
	}
	if r.Case.Kernel.PeakBF16 && r.Impl.ISA.BF16Dot() {
		return PeakKey{r.Impl.ISA.Name() + BF16PeakSuffix, r.Procs}, true
	}
	return PeakKey{r.Impl.ISA.Name(), r.Procs}, true
}

// PeakFracs returns the rate of each sample as a fraction of the peak of
// r's PeakKey in p (Peaks.Max, the largest sample of the run), not
// clamped; nil when r has no PeakKey or p no sample of it. Call it once
// the run is over, when p holds every sample.
func (r *Result) PeakFracs(p *Peaks) []float64 {
	k, ok := r.PeakKey()
	if !ok || p == nil {
		return nil
	}
	peak := p.Max(k)
	if peak <= 0 {
		return nil
	}
	flops := r.Case.Work().Flops
	out := make([]float64, len(r.Ns))
	for i, ns := range r.Ns {
		out[i] = flops / ns * 1e9 / peak
	}
	return out
}

// PeakFrac returns the rate at the median time (Rate) as a fraction of
// the peak of r's PeakKey in p, not clamped, and false when r has no
// PeakKey or p no sample of it. Call it once the run is over.
func (r *Result) PeakFrac(p *Peaks) (float64, bool) {
	k, ok := r.PeakKey()
	if !ok || p == nil || len(r.Ns) == 0 {
		return 0, false
	}
	rate, _ := r.Rate()
	return p.Fraction(k, rate*1e9)
}
