package bench

import (
	"fmt"
	"math"
	"strconv"
)

// FormatNs formats a duration given in nanoseconds with three significant
// digits and a unit: "812ns", "1.25µs", "34.5ms", "2.00s".
func FormatNs(ns float64) string {
	switch {
	case math.IsNaN(ns) || math.IsInf(ns, 0):
		return "–"
	case ns < 1e3:
		return sig3(ns) + "ns"
	case ns < 1e6:
		return sig3(ns/1e3) + "µs"
	case ns < 1e9:
		return sig3(ns/1e6) + "ms"
	}
	return sig3(ns/1e9) + "s"
}

// sig3 formats v >= 0 rounded to three significant digits, with at most
// two decimals: "812", "34.5", "1.25", "0.34", and "10.0" for 9.996.
func sig3(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Sprintf("%.2f", v)
	}
	e := int(math.Floor(math.Log10(v)))
	p := math.Pow(10, float64(e-2))
	r := math.Round(v/p) * p
	e = int(math.Floor(math.Log10(r) + 1e-12))
	return strconv.FormatFloat(r, 'f', min(2, max(0, 2-e)), 64)
}

// FormatRate formats a rate (GFLOP/s or GB/s) with three significant
// digits.
func FormatRate(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return sig3(v)
}

// String formats the ratio as "2.51× [2.40, 2.63] p=0.002" (p<0.001
// below that), or "2.51× p=0.100" without an interval.
func (r Ratio) String() string {
	if math.IsNaN(r.X) || math.IsInf(r.X, 0) {
		return "–"
	}
	s := sig3(r.X) + "×"
	if r.HasCI {
		s += " [" + sig3(r.Lo) + ", " + sig3(r.Hi) + "]"
	}
	switch {
	case math.IsNaN(r.P):
	case r.P < 0.001:
		s += " p<0.001"
	default:
		s += fmt.Sprintf(" p=%.3f", r.P)
	}
	return s
}
