package bench

import (
	"context"
	"math"
	"runtime"
	"time"
)

// Options configure Run.
type Options struct {
	// Count is the number of samples taken of each implementation.
	Count int
	// Time is the target duration of one sample; a sample runs at least
	// one call.
	Time time.Duration
}

// Result holds the samples of one implementation on one case.
type Result struct {
	Case Case
	Impl *Impl
	// Iters[i] is the number of calls sample i timed and Ns[i] its time
	// per call in nanoseconds.
	Iters []int
	Ns    []float64
	// PeakFrac[i] is, for compute-bound kernels, the rate of sample i as a
	// fraction of the FMA peak of Impl.ISA measured right after it (times
	// the number of cores in use); nil when there is no peak loop.
	PeakFrac []float64
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
// the machine falls on all of them. For compute-bound kernels each sample
// is followed by the FMA peak loop of its Impl.ISA for an eighth of the
// sample's operations, and the sample's percent of peak is its rate over
// that loop's. Implementations that do not support c are left out.
func Run(c Case, impls []*Impl, opt Options) []*Result {
	rs, _ := RunContext(context.Background(), c, impls, opt)
	return rs
}

// RunContext is Run that checks ctx before each implementation's
// calibration and each sample: once ctx is done it returns ctx's error
// and the samples taken so far (fewer than opt.Count: not a complete
// measurement).
func RunContext(ctx context.Context, c Case, impls []*Impl, opt Options) ([]*Result, error) {
	var ps []*prepared
	for _, im := range impls {
		op := c.Kernel.Setup(c.Shape, im)
		if op == nil {
			continue
		}
		ps = append(ps, &prepared{res: &Result{Case: c, Impl: im}, op: op})
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
	w := c.Work()
	cores := float64(min(runtime.GOMAXPROCS(0), runtime.NumCPU()))
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
			ns := float64(d.Nanoseconds()) / float64(p.iters)
			p.res.Iters = append(p.res.Iters, p.iters)
			p.res.Ns = append(p.res.Ns, ns)
			if c.Kernel.Bound == ComputeBound && p.res.Impl.ISA != nil {
				if peak := PeakRate(p.res.Impl.ISA, max(minPeakFlops, w.Flops*float64(p.iters)/8)); peak > 0 {
					p.res.PeakFrac = append(p.res.PeakFrac, w.Flops/ns*1e9/(peak*cores))
				}
			}
		}
	}
	return results(), nil
}

// minPeakFlops is the least work of an interleaved peak measurement
// (about 0.2 ms), so that a short sample still gets a steady reading.
const minPeakFlops = 2e7

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

// PeakRate runs the FMA peak loop of p for about flops floating-point
// operations (at least one iteration) and returns the rate it measured in
// FLOP/s; 0 if p has no peak loop.
func PeakRate(p interface{ FMAPeakLoop(int) int }, flops float64) float64 {
	per := p.FMAPeakLoop(1)
	if per == 0 {
		return 0
	}
	iters := max(1, int(flops/float64(per)))
	t0 := time.Now()
	done := p.FMAPeakLoop(iters)
	el := time.Since(t0)
	if el <= 0 {
		return 0
	}
	return float64(done) / el.Seconds()
}
