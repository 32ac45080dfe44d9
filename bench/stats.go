package bench

import (
	"math"
	"slices"

	"github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchmath"
)

// Confidence is the confidence level of every interval bench reports.
const Confidence = 0.95

// Summarize returns the median of values with its 95% confidence
// interval, as benchstat computes it (benchmath.AssumeNothing). With
// fewer than 6 values the interval is infinite and a warning says so.
// values is not modified (benchmath sorts a copy).
func Summarize(values []float64) benchmath.Summary {
	return benchmath.AssumeNothing.Summary(benchmath.NewSample(slices.Clone(values), &benchmath.DefaultThresholds), Confidence)
}

// Median returns the median of values (NaN if there are none).
func Median(values []float64) float64 {
	if len(values) == 0 {
		return math.NaN()
	}
	return Summarize(values).Center
}

// Ratio is how many times faster one set of timings is than a reference.
type Ratio struct {
	// X is median(ref) / median(x): above 1 when x is faster.
	X float64
	// Lo and Hi bound X's 95% confidence interval: the distribution-free
	// interval for a ratio of scales (Moses' interval on the logarithms,
	// from the Mann-Whitney U distribution). HasCI is false when there are
	// too few samples for one (fewer than 4 of each).
	Lo, Hi float64
	HasCI  bool
	// P is the p-value of the Mann-Whitney U test that the two timings
	// come from the same distribution, as benchstat computes it.
	P float64
}

// Speedup compares the timings x (ns per call) with the reference ref;
// neither is modified.
func Speedup(ref, x []float64) Ratio {
	r := Ratio{X: Median(ref) / Median(x), P: math.NaN()}
	if len(ref) == 0 || len(x) == 0 {
		return r
	}
	th := &benchmath.DefaultThresholds
	r.P = benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(ref), th), benchmath.NewSample(slices.Clone(x), th)).P
	r.Lo, r.Hi, r.HasCI = ratioCI(ref, x, Confidence)
	return r
}

// ratioCI returns the distribution-free confidence interval for the
// ratio of scales of a over b: with d the n1·n2 pairwise differences
// log(a[i]) - log(b[j]) in ascending order and k the largest integer with
// P(U ≤ k-1) ≤ (1-confidence)/2 under the Mann-Whitney U distribution,
// the interval is [exp d(k), exp d(n1·n2+1-k)] (1-based order
// statistics). ok is false when no such k exists.
func ratioCI(a, b []float64, confidence float64) (lo, hi float64, ok bool) {
	n1, n2 := len(a), len(b)
	k := uCritical(n1, n2, (1-confidence)/2)
	if k < 1 {
		return 0, math.Inf(1), false
	}
	d := make([]float64, 0, n1*n2)
	for _, x := range a {
		for _, y := range b {
			d = append(d, math.Log(x)-math.Log(y))
		}
	}
	slices.Sort(d)
	return math.Exp(d[k-1]), math.Exp(d[len(d)-k]), true
}

// uCritical returns the largest k such that P(U ≤ k-1) ≤ tail for the
// Mann-Whitney U statistic of samples of sizes n1 and n2 without ties,
// or 0 if even P(U ≤ 0) exceeds tail. Up to exactU samples a side it is
// exact; above, it uses the normal approximation of U with a continuity
// correction (mean n1·n2/2, variance n1·n2·(n1+n2+1)/12), whose k is
// within one of the exact one there (TestUCritical), since the exact
// distribution's cost grows as a high power of the sizes.
func uCritical(n1, n2 int, tail float64) int {
	if n1 == 0 || n2 == 0 {
		return 0
	}
	if n1 > exactU || n2 > exactU {
		return uCriticalNormal(n1, n2, tail)
	}
	dist := stats.UDist{N1: n1, N2: n2}
	k := 0
	for u := 0; u < n1*n2 && dist.CDF(float64(u)) <= tail; u++ {
		k = u + 1
	}
	return k
}

// exactU is the largest sample size for which uCritical computes the
// exact distribution of U.
const exactU = 40

// uCriticalNormal is uCritical from the normal approximation: the largest
// k with Φ((k-1+0.5-μ)/σ) ≤ tail.
func uCriticalNormal(n1, n2 int, tail float64) int {
	a, b := float64(n1), float64(n2)
	mu, sigma := a*b/2, math.Sqrt(a*b*(a+b+1)/12)
	z := stats.NormalDist{Mu: 0, Sigma: 1}.InvCDF(tail)
	k := math.Floor(mu + z*sigma + 0.5)
	return int(max(0, min(k, a*b)))
}

// GFLOPS returns the rate in GFLOP/s of flops operations taking ns
// nanoseconds.
func GFLOPS(flops, ns float64) float64 { return flops / ns }

// GBPS returns the bandwidth in GB/s (10⁹ bytes per second) of bytes
// moved in ns nanoseconds.
func GBPS(bytes, ns float64) float64 { return bytes / ns }

// Rate returns the result's median rate in the kernel's unit (GFLOP/s for
// compute-bound kernels, GB/s otherwise) and the unit's name.
func (r *Result) Rate() (float64, string) {
	w, ns := r.Case.Work(), Median(r.Ns)
	if r.Case.Kernel.Bound == ComputeBound {
		return GFLOPS(w.Flops, ns), "GFLOP/s"
	}
	return GBPS(w.Bytes, ns), "GB/s"
}
