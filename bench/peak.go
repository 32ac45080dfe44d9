package bench

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/simdgpt/simdgpt/kernels"
)

// MinPeakTime is the shortest FMA peak sample a PeakSampler takes.
const MinPeakTime = 5 * time.Millisecond

// PeakTime is the duration of the FMA peak samples a PeakSampler takes
// before the first and after the last timed call.
const PeakTime = 20 * time.Millisecond

// peakEvery is the timed work after which a PeakSampler takes a sample,
// and peakShare the part of it the sample lasts.
const (
	peakEvery = 16 * MinPeakTime
	peakShare = 16
)

// OverPeakMark follows a percent of peak above 100% (FormatPercent).
const OverPeakMark = "!"

// OverPeakNote is the line printed under a table holding a percent of
// peak marked with OverPeakMark.
const OverPeakNote = OverPeakMark + " above the FMA peak: the kernel ran faster than every sample of the peak loop, so the loop is not at this machine's peak (a bug in the loop or in the kernel's operation count)"

// PeakKey names one FMA peak: the peak loop of the implementation named
// ISA run on Threads goroutines.
type PeakKey struct {
	ISA     string
	Threads int
}

// String returns "avx512 on 2 goroutines" (or "1 goroutine").
func (k PeakKey) String() string {
	if k.Threads == 1 {
		return k.ISA + " on 1 goroutine"
	}
	return fmt.Sprintf("%s on %d goroutines", k.ISA, k.Threads)
}

// Peaks collects the FMA peak samples of a run, in FLOP/s, by PeakKey. Its
// zero value is empty and ready to use; it is safe for concurrent use.
type Peaks struct {
	mu      sync.Mutex
	samples map[PeakKey][]float64
}

// Add records a sample of rate FLOP/s for k. A rate that is not a
// positive finite number (a loop that did not run) is ignored.
func (p *Peaks) Add(k PeakKey, rate float64) {
	if !(rate > 0) || math.IsInf(rate, 0) {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.samples == nil {
		p.samples = map[PeakKey][]float64{}
	}
	p.samples[k] = append(p.samples[k], rate)
}

// Measure runs the FMA peak loop of isa on threads goroutines for about
// d (MeasurePeak), records the rate for PeakKey{isa.Name(), threads} and
// returns it; 0, and nothing recorded, when isa is nil or has no peak
// loop.
func (p *Peaks) Measure(isa *kernels.Impl, threads int, d time.Duration) float64 {
	if isa == nil {
		return 0
	}
	rate := MeasurePeak(isa, threads, d)
	p.Add(PeakKey{isa.Name(), threads}, rate)
	return rate
}

// Samples returns a copy of the samples of k in the order they were
// recorded.
func (p *Peaks) Samples(k PeakKey) []float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.samples[k])
}

// Max returns the largest sample of k in FLOP/s, the peak of k; 0 when
// there is none.
func (p *Peaks) Max(k PeakKey) float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.samples[k]; len(s) > 0 {
		return slices.Max(s)
	}
	return 0
}

// Keys returns the keys that have samples, ordered by implementation
// name, then thread count.
func (p *Peaks) Keys() []PeakKey {
	p.mu.Lock()
	defer p.mu.Unlock()
	var ks []PeakKey
	for k := range p.samples {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b PeakKey) int {
		return cmp.Or(cmp.Compare(a.ISA, b.ISA), cmp.Compare(a.Threads, b.Threads))
	})
	return ks
}

// Fraction returns rate (FLOP/s) as a fraction of the peak of k (Max),
// and false when there is no sample of k. The fraction is not clamped: it
// is above 1 when rate is above every sample.
func (p *Peaks) Fraction(k PeakKey, rate float64) (float64, bool) {
	peak := p.Max(k)
	if peak <= 0 {
		return 0, false
	}
	return rate / peak, true
}

// Describe summarises the samples of k for a report: "157 GFLOP/s
// (largest of 12 samples; lowest 121)", or "none" without samples.
func (p *Peaks) Describe(k PeakKey) string {
	s := p.Samples(k)
	switch len(s) {
	case 0:
		return "none"
	case 1:
		return FormatRate(s[0]/1e9) + " GFLOP/s (1 sample)"
	}
	return fmt.Sprintf("%s GFLOP/s (largest of %d samples; lowest %s)", FormatRate(slices.Max(s)/1e9), len(s), FormatRate(slices.Min(s)/1e9))
}

// FormatPercent formats a fraction of the peak as a whole percentage,
// "87%", followed by OverPeakMark when the fraction is above 1 ("127%!").
// NaN and infinities give "–".
func FormatPercent(frac float64) string {
	if math.IsNaN(frac) || math.IsInf(frac, 0) {
		return "–"
	}
	s := fmt.Sprintf("%.0f%%", 100*frac)
	if frac > 1 {
		s += OverPeakMark
	}
	return s
}

// fmaLoop is an FMA peak loop, as kernels.Impl.FMAPeakLoop: it runs iters
// iterations and returns the floating-point operations done (0: no loop).
type fmaLoop interface{ FMAPeakLoop(iters int) int }

// MeasurePeak runs the FMA peak loop of isa on threads goroutines (at
// least one) and returns their combined rate in FLOP/s; 0 when isa is nil
// or has no peak loop. Each goroutine first runs the loop for a quarter of
// d untimed, in calls that grow until each takes about d/32; then all run
// it for d, timed together from the start of the first to the end of the
// last. The caller sets GOMAXPROCS.
func MeasurePeak(isa *kernels.Impl, threads int, d time.Duration) float64 {
	if isa == nil {
		return 0
	}
	return measurePeak(isa, threads, d)
}

func measurePeak(loop fmaLoop, threads int, d time.Duration) float64 {
	if loop.FMAPeakLoop(1) == 0 {
		return 0
	}
	threads = max(1, threads)
	iters := make([]int, threads) // per goroutine: the calibrated call size
	done := make([]float64, threads)
	var wg sync.WaitGroup
	// run calls the loop on every goroutine until d has passed since the
	// start, counting the operations when count is set.
	run := func(d time.Duration, count bool) time.Duration {
		t0 := time.Now()
		for g := range threads {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n := max(1, iters[g])
				var flops float64
				for {
					c0 := time.Now()
					flops += float64(loop.FMAPeakLoop(n))
					now := time.Now()
					if now.Sub(t0) >= d {
						break
					}
					if now.Sub(c0) < d/32 && n < 1<<30 {
						n *= 2
					}
				}
				iters[g] = n
				if count {
					done[g] = flops
				}
			}()
		}
		wg.Wait()
		return time.Since(t0)
	}
	run(d/4, false)
	el := run(d, true)
	if el <= 0 {
		return 0
	}
	var total float64
	for _, f := range done {
		total += f
	}
	return total / el.Seconds()
}

// A PeakSampler takes the FMA peak samples of one implementation and
// thread count through a measurement (see the package documentation):
// Begin before the first timed call, Timed (or Add and Sample) after each
// timed stretch of work, End after the last. The samples go to its Peaks.
type PeakSampler struct {
	peaks   *Peaks
	key     PeakKey
	measure func(d time.Duration) float64 // nil: no peak loop
	pending time.Duration                 // timed work since the last sample
}

// Sampler returns a PeakSampler recording samples of isa's peak loop on
// threads goroutines into p. With a nil isa, or one without a peak loop
// (generic), its methods do nothing.
func (p *Peaks) Sampler(isa *kernels.Impl, threads int) *PeakSampler {
	s := &PeakSampler{peaks: p}
	if isa != nil && isa.FMAPeakLoop(1) > 0 {
		s.key = PeakKey{isa.Name(), threads}
		s.measure = func(d time.Duration) float64 { return MeasurePeak(isa, threads, d) }
	}
	return s
}

// BF16PeakSuffix follows the implementation's name in the ISA of a
// PeakKey of the bfloat16 peak loop (kernels.Impl.BF16PeakLoop): "avx512
// bf16".
const BF16PeakSuffix = " bf16"

// bf16Loop runs an implementation's bfloat16 peak loop as a fmaLoop.
type bf16Loop struct{ p *kernels.Impl }

func (l bf16Loop) FMAPeakLoop(iters int) int { return l.p.BF16PeakLoop(iters) }

// SamplerFor returns the PeakSampler of kernel k's yardstick: Sampler's,
// or for a kernel measured against the bfloat16 peak (Kernel.PeakBF16)
// on an isa whose bfloat16 products run on its dot-product instruction
// (kernels.Impl.BF16Dot) one of isa's bfloat16 peak loop, recorded under
// the ISA name with BF16PeakSuffix.
func (p *Peaks) SamplerFor(k *Kernel, isa *kernels.Impl, threads int) *PeakSampler {
	if !k.PeakBF16 || isa == nil || !isa.BF16Dot() {
		return p.Sampler(isa, threads)
	}
	return p.BF16Sampler(isa, threads)
}

// BF16Sampler returns a PeakSampler of isa's bfloat16 peak loop on
// threads goroutines, recorded under the ISA name with BF16PeakSuffix;
// its methods do nothing when isa has no such loop.
func (p *Peaks) BF16Sampler(isa *kernels.Impl, threads int) *PeakSampler {
	s := &PeakSampler{peaks: p}
	if isa != nil && isa.BF16PeakLoop(1) > 0 {
		s.key = PeakKey{isa.Name() + BF16PeakSuffix, threads}
		s.measure = func(d time.Duration) float64 { return measurePeak(bf16Loop{isa}, threads, d) }
	}
	return s
}

// Key returns the PeakKey the samples are recorded under, and false when
// the sampler has no peak loop.
func (s *PeakSampler) Key() (PeakKey, bool) { return s.key, s.measure != nil }

// Begin takes the sample before the first timed call: PeakTime long.
func (s *PeakSampler) Begin() { s.sample(PeakTime) }

// Add adds d of timed work and reports whether a sample is due: whether
// the work since the last sample has reached 16·MinPeakTime. A caller that
// stops its clock around samples (a testing benchmark) calls Sample then;
// others call Timed.
func (s *PeakSampler) Add(d time.Duration) bool {
	if s.measure == nil {
		return false
	}
	s.pending += d
	return s.pending >= peakEvery
}

// Sample takes a sample of a sixteenth of the timed work since the last
// one, at least MinPeakTime.
func (s *PeakSampler) Sample() { s.sample(max(MinPeakTime, s.pending/peakShare)) }

// Timed adds d of timed work and, when a sample is due (Add), takes it
// (Sample) and reports true.
func (s *PeakSampler) Timed(d time.Duration) bool {
	if !s.Add(d) {
		return false
	}
	s.Sample()
	return true
}

// End takes the sample after the last timed call: PeakTime long.
func (s *PeakSampler) End() { s.sample(PeakTime) }

func (s *PeakSampler) sample(d time.Duration) {
	if s.measure == nil {
		return
	}
	s.peaks.Add(s.key, s.measure(d))
	s.pending = 0
}
