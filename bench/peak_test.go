package bench

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simdgpt/simdgpt/kernels"
)

// TestPeaksMax checks the aggregation of peak samples with injected
// rates: the peak of a key is its largest sample whatever the others (a
// low one among them), samples of other keys and invalid rates do not
// count, every rate up to the peak is a fraction of at most 1 printed
// without the mark, and a rate above it is a fraction above 1, printed
// with the mark, not clamped.
func TestPeaksMax(t *testing.T) {
	k := PeakKey{"avx512", 1}
	for _, tc := range []struct {
		name    string
		samples []float64 // GFLOP/s, in the order taken
		want    float64
	}{
		{"one low sample first", []float64{90, 150, 152, 149}, 152},
		{"one low sample last", []float64{150, 152, 149, 60}, 152},
		{"low sample in the middle", []float64{151, 30, 152}, 152},
		{"all but one low", []float64{40, 45, 152, 41}, 152},
		{"invalid rates ignored", []float64{0, -5, math.NaN(), math.Inf(1), 152, 100}, 152},
		{"single sample", []float64{152}, 152},
	} {
		var p Peaks
		for i, s := range tc.samples {
			p.Add(k, s*1e9)
			// Other implementations and thread counts, faster and
			// slower, are other peaks.
			p.Add(PeakKey{"avx512", 2}, float64(300+i)*1e9)
			p.Add(PeakKey{"avx2", 1}, 10e9)
		}
		if got := p.Max(k) / 1e9; got != tc.want {
			t.Errorf("%s: Max = %v GFLOP/s, want %v", tc.name, got, tc.want)
		}
		valid := 0
		for _, s := range tc.samples {
			if s > 0 && !math.IsInf(s, 0) {
				valid++
			}
		}
		if got := len(p.Samples(k)); got != valid {
			t.Errorf("%s: %d samples kept, want %d", tc.name, got, valid)
		}
		// Every sample's own rate, and rates between, read at most 100%.
		for _, gf := range append(append([]float64(nil), tc.samples...), tc.want, tc.want*0.999, tc.want/2) {
			if !(gf > 0) || math.IsInf(gf, 0) {
				continue
			}
			frac, ok := p.Fraction(k, gf*1e9)
			if !ok || frac > 1 {
				t.Errorf("%s: rate %v GFLOP/s: fraction %v (%v), want at most 1", tc.name, gf, frac, ok)
			}
			if s := FormatPercent(frac); strings.Contains(s, OverPeakMark) {
				t.Errorf("%s: rate %v GFLOP/s printed %q, marked over the peak", tc.name, gf, s)
			}
		}
		// Above every sample: flagged, not clamped.
		frac, ok := p.Fraction(k, tc.want*1.27*1e9)
		if !ok || math.Abs(frac-1.27) > 1e-12 {
			t.Errorf("%s: rate 1.27× the peak: fraction %v (%v), want 1.27", tc.name, frac, ok)
		}
		if got := FormatPercent(frac); got != "127%"+OverPeakMark {
			t.Errorf("%s: rate 1.27× the peak printed %q, want 127%%%s", tc.name, got, OverPeakMark)
		}
	}

	var empty Peaks
	if m := empty.Max(k); m != 0 {
		t.Errorf("empty Peaks: Max = %v, want 0", m)
	}
	if _, ok := empty.Fraction(k, 1e9); ok {
		t.Error("empty Peaks: Fraction reported a peak")
	}
	if d := empty.Describe(k); d != "none" {
		t.Errorf("empty Peaks: Describe = %q", d)
	}
}

func TestPeaksKeysDescribe(t *testing.T) {
	var p Peaks
	for _, s := range []struct {
		k    PeakKey
		rate float64
	}{{PeakKey{"avx512", 2}, 300e9}, {PeakKey{"avx2", 1}, 70e9}, {PeakKey{"avx512", 1}, 121e9}, {PeakKey{"avx512", 1}, 157e9}, {PeakKey{"avx512", 1}, 150e9}} {
		p.Add(s.k, s.rate)
	}
	want := []PeakKey{{"avx2", 1}, {"avx512", 1}, {"avx512", 2}}
	if got := p.Keys(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Keys = %v, want %v", got, want)
	}
	for _, tc := range []struct {
		k    PeakKey
		want string
	}{
		{PeakKey{"avx512", 1}, "157 GFLOP/s (largest of 3 samples; lowest 121)"},
		{PeakKey{"avx2", 1}, "70.0 GFLOP/s (1 sample)"},
		{PeakKey{"neon", 1}, "none"},
	} {
		if got := p.Describe(tc.k); got != tc.want {
			t.Errorf("Describe(%v) = %q, want %q", tc.k, got, tc.want)
		}
	}
	if got := (PeakKey{"avx2", 1}).String() + "; " + (PeakKey{"avx512", 2}).String(); got != "avx2 on 1 goroutine; avx512 on 2 goroutines" {
		t.Errorf("PeakKey.String: %q", got)
	}
}

func TestFormatPercent(t *testing.T) {
	for _, tc := range []struct {
		frac float64
		want string
	}{
		{0.873, "87%"},
		{0.01, "1%"},
		{1, "100%"},
		{1.004, "100%!"}, // above the peak, if by less than the rounding
		{1.24, "124%!"},
		{math.NaN(), "–"},
		{math.Inf(1), "–"},
	} {
		if got := FormatPercent(tc.frac); got != tc.want {
			t.Errorf("FormatPercent(%v) = %q, want %q", tc.frac, got, tc.want)
		}
	}
}

// TestPeakSampler checks the schedule of a PeakSampler with an injected
// measurement: PeakTime before and after, a sixteenth of the timed work
// (at least MinPeakTime) once 16·MinPeakTime of it has gathered, and that
// every sample lands in its Peaks, whose maximum is the largest.
func TestPeakSampler(t *testing.T) {
	var p Peaks
	k := PeakKey{"fake", 2}
	rates := []float64{150e9, 90e9, 152e9, 151e9, 149e9} // the second is low
	var asked []time.Duration
	s := &PeakSampler{peaks: &p, key: k, measure: func(d time.Duration) float64 {
		asked = append(asked, d)
		return rates[len(asked)-1]
	}}
	s.Begin()
	var sampled []bool
	for _, d := range []time.Duration{30 * time.Millisecond, 30 * time.Millisecond, 30 * time.Millisecond, time.Millisecond, 2 * time.Second, 79 * time.Millisecond, time.Millisecond} {
		sampled = append(sampled, s.Timed(d))
	}
	s.End()
	wantAsked := []time.Duration{PeakTime, 90 * time.Millisecond / 16, 2001 * time.Millisecond / 16, MinPeakTime, PeakTime}
	if fmt.Sprint(asked) != fmt.Sprint(wantAsked) {
		t.Errorf("samples of %v, want %v", asked, wantAsked)
	}
	if want := "[false false true false true false true]"; fmt.Sprint(sampled) != want {
		t.Errorf("Timed sampled %v, want %s", sampled, want)
	}
	if got := p.Samples(k); fmt.Sprint(got) != fmt.Sprint(rates) {
		t.Errorf("Peaks holds %v, want %v", got, rates)
	}
	if got := p.Max(k); got != 152e9 {
		t.Errorf("Max = %v, want 152e9", got)
	}
	if got, ok := s.Key(); !ok || got != k {
		t.Errorf("Key = %v, %v", got, ok)
	}
	// Add and Sample, for a caller that stops its clock around samples.
	rates = append(rates, 10e9)
	if s.Add(50*time.Millisecond) || !s.Add(50*time.Millisecond) {
		t.Error("Add: a sample due after 50ms, or none after 100ms")
	}
	if len(asked) != 5 {
		t.Errorf("Add took a sample")
	}
	s.Sample()
	if len(asked) != 6 || asked[5] != 100*time.Millisecond/16 || p.Max(k) != 152e9 || len(p.Samples(k)) != 6 {
		t.Errorf("Sample: asked %v; peak %v of %d samples", asked, p.Max(k), len(p.Samples(k)))
	}

	// Without a peak loop nothing is measured or recorded.
	var q Peaks
	none := q.Sampler(nil, 1)
	none.Begin()
	if none.Timed(time.Hour) {
		t.Error("a sampler without a loop sampled")
	}
	none.End()
	if _, ok := none.Key(); ok || len(q.Keys()) != 0 {
		t.Errorf("a sampler without a loop recorded %v", q.Keys())
	}
	if q.Measure(nil, 1, time.Millisecond) != 0 || len(q.Keys()) != 0 {
		t.Error("Measure(nil) recorded a sample")
	}
}

// tbLog is a testing.TB that records what is logged.
type tbLog struct {
	testing.TB
	lines []string
}

func (l *tbLog) Logf(format string, args ...any) {
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

// TestPeakReport checks that Report logs a rate above the peak with the
// note, and stays silent at or below it.
func TestPeakReport(t *testing.T) {
	var p Peaks
	k := PeakKey{"fake", 1}
	p.Add(k, 100e9)
	p.Add(k, 40e9)
	s := &PeakSampler{peaks: &p, key: k, measure: func(time.Duration) float64 { return 0 }}
	for _, tc := range []struct {
		rate float64
		logs int
	}{{99e9, 0}, {100e9, 0}, {50e9, 0}, {124e9, 1}} {
		l := &tbLog{TB: t}
		s.Report(l, tc.rate)
		if len(l.lines) != tc.logs {
			t.Errorf("rate %v: logged %q, want %d lines", tc.rate, l.lines, tc.logs)
		}
		if tc.logs > 0 && (!strings.Contains(l.lines[0], "124%!") || !strings.Contains(l.lines[0], OverPeakNote)) {
			t.Errorf("rate %v: logged %q, want 124%%! and the note", tc.rate, l.lines[0])
		}
	}
}

// sleepLoop is a fake FMA peak loop that does its operations by
// sleeping: flops per 10µs iteration, at most flops·1e5 per second on each
// goroutine. It records the most calls it saw in progress at once.
type sleepLoop struct {
	flops             int
	inFlight, maxSeen atomic.Int32
}

func (c *sleepLoop) FMAPeakLoop(iters int) int {
	if c.flops == 0 {
		return 0
	}
	n := c.inFlight.Add(1)
	for {
		m := c.maxSeen.Load()
		if n <= m || c.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	time.Sleep(time.Duration(iters) * 10 * time.Microsecond)
	c.inFlight.Add(-1)
	return iters * c.flops
}

// TestMeasurePeak checks the plumbing of a measurement with a fake loop:
// the goroutines run it at once, for at least the asked duration after a
// warm-up, and their rate cannot exceed what the loop can do; no rate
// without a loop.
func TestMeasurePeak(t *testing.T) {
	d := 40 * time.Millisecond
	loop := &sleepLoop{flops: 1000}
	t0 := time.Now()
	rate := measurePeak(loop, 2, d)
	if el := time.Since(t0); el < d+d/4 {
		t.Errorf("measured for %v, want at least %v and its warm-up", el, d)
	}
	if !(rate > 0 && rate <= 2e8) {
		t.Errorf("rate %g, want in (0, 2e8]: two goroutines of at most 1e8 each", rate)
	}
	if n := loop.maxSeen.Load(); n != 2 {
		t.Errorf("at most %d calls at once, want 2 goroutines", n)
	}
	if got := measurePeak(&sleepLoop{}, 2, d); got != 0 {
		t.Errorf("no loop: rate %g", got)
	}
	if got := MeasurePeak(nil, 1, d); got != 0 {
		t.Errorf("nil: rate %g", got)
	}
}

// TestResultPeakFracs checks a result's percent of peak against injected
// peak samples: against the largest, sample by sample and at the median,
// above 1 only for a sample faster than every peak sample; none for a
// memory-bound case or without samples of its key.
func TestResultPeakFracs(t *testing.T) {
	isa := kernels.Implementations()[0] // any name will do: the samples are injected
	k := &Kernel{Name: "fake", Bound: ComputeBound, Shapes: []Shape{{Name: "n=1", N: 1}},
		work: func(Shape) Work { return Work{Flops: 1e6} }}
	r := &Result{Case: Case{k, k.Shapes[0]}, Impl: &Impl{Name: "x", ISA: isa}, Procs: 2,
		Ns: []float64{20e3, 10e3, 8e3}} // 50, 100 and 125 GFLOP/s
	var p Peaks
	if r.PeakFracs(&p) != nil {
		t.Error("fractions without peak samples")
	}
	if _, ok := r.PeakFrac(&p); ok {
		t.Error("median fraction without peak samples")
	}
	key := PeakKey{isa.Name(), 2}
	if got, ok := r.PeakKey(); !ok || got != key {
		t.Fatalf("PeakKey = %v, %v; want %v", got, ok, key)
	}
	p.Add(key, 60e9) // a low sample
	p.Add(key, 100e9)
	p.Add(PeakKey{isa.Name(), 1}, 1000e9) // another thread count
	got := r.PeakFracs(&p)
	want := []float64{0.5, 1, 1.25}
	for i := range want {
		if len(got) != len(want) || math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("PeakFracs = %v, want %v", got, want)
		}
	}
	if f, ok := r.PeakFrac(&p); !ok || math.Abs(f-1) > 1e-12 {
		t.Errorf("PeakFrac = %v, %v; want 1 (the median sample)", f, ok)
	}
	mem := *r
	mem.Case.Kernel = &Kernel{Name: "mem", Bound: MemoryBound, work: k.work}
	if _, ok := mem.PeakKey(); ok || mem.PeakFracs(&p) != nil {
		t.Error("a memory-bound result has a percent of peak")
	}
}

// TestRunSamplesPeaks runs a compute-bound fake case with Options.Peaks
// and checks that the peak of each distinct ISA is sampled, before and
// after at least, on GOMAXPROCS goroutines, and nothing else.
func TestRunSamplesPeaks(t *testing.T) {
	wide := Widest()
	if wide == nil {
		t.Skip("no implementation with an FMA peak loop in this build")
	}
	k := &Kernel{Name: "fake", Bound: ComputeBound, Shapes: []Shape{{Name: "n=1", N: 1}},
		work:  func(Shape) Work { return Work{Flops: 1e3} },
		has:   func(*Impl) bool { return true },
		setup: func(Shape, *Impl) func() { return func() { time.Sleep(10 * time.Microsecond) } }}
	impls := []*Impl{{Name: "a", ISA: wide}, {Name: "b", ISA: wide}, {Name: "c"}}
	var p Peaks
	res := Run(Case{k, k.Shapes[0]}, impls, Options{Count: 2, Time: time.Millisecond, Peaks: &p})
	procs := runtime.GOMAXPROCS(0)
	key := PeakKey{wide.Name(), procs}
	if keys := p.Keys(); len(keys) != 1 || keys[0] != key {
		t.Fatalf("peak keys %v, want only %v", keys, key)
	}
	if n := len(p.Samples(key)); n < 2 {
		t.Errorf("%d peak samples, want at least one before and one after", n)
	}
	for _, r := range res[:2] {
		if fr := r.PeakFracs(&p); len(fr) != 2 {
			t.Errorf("%s: fractions %v, want one per sample", r.Impl.Name, fr)
		}
	}
	if fr := res[2].PeakFracs(&p); fr != nil {
		t.Errorf("an Impl without ISA has fractions %v", fr)
	}
}
