package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// Shared helpers of the kernel tests.

// forEachImpl runs f as a subtest for every implementation this CPU can
// run. It fails, rather than skips, when an implementation this build is
// expected to have on this machine is missing (see expectedImpls).
func forEachImpl(t *testing.T, f func(t *testing.T, p *Impl)) {
	t.Helper()
	for _, p := range Implementations() {
		t.Run(p.Name(), func(t *testing.T) { f(t, p) })
	}
}

// nonGeneric returns every available implementation except generic.
func nonGeneric() []*Impl { return withoutGeneric(Implementations()) }

// withoutGeneric returns impls without generic.
func withoutGeneric(impls []*Impl) []*Impl {
	var out []*Impl
	for _, p := range impls {
		if p != genericImpl {
			out = append(out, p)
		}
	}
	return out
}

// gemmImpls returns every available implementation and, after them, each
// one's GEMM tile variants other than its own tile (Impl.TileVariants):
// the implementations the GEMM family's tests hold to the contract.
func gemmImpls() []*Impl {
	out := Implementations()
	for _, p := range Implementations() {
		for _, v := range p.TileVariants() {
			if v.Tile() != p.Tile() {
				out = append(out, v)
			}
		}
	}
	return out
}

// gemmNonGeneric is gemmImpls without generic.
func gemmNonGeneric() []*Impl { return withoutGeneric(gemmImpls()) }

// forEachGemmImpl is forEachImpl over gemmImpls.
func forEachGemmImpl(t *testing.T, f func(t *testing.T, p *Impl)) {
	t.Helper()
	for _, p := range gemmImpls() {
		t.Run(p.Name(), func(t *testing.T) { f(t, p) })
	}
}

// randSlice returns n values uniform in [-1, 1) from r.
func randSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = r.Float32()*2 - 1
	}
	return s
}

// offsetCopy returns a copy of src that starts off elements into a larger
// backing array, so that its first element is not 32- or 64-byte aligned
// when off is not a multiple of 8 or 16.
func offsetCopy(src []float32, off int) []float32 {
	buf := make([]float32, len(src)+off)
	s := buf[off : off+len(src) : off+len(src)]
	copy(s, src)
	return s
}

// newRand returns a deterministic generator for a test.
func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

// closeTo reports whether got is within tol of want, where tol is an
// absolute bound; NaNs must match NaNs and infinities must match exactly.
func closeTo(got, want float32, tol float64) bool {
	g, w := float64(got), float64(want)
	if math.IsNaN(w) || math.IsNaN(g) {
		return math.IsNaN(w) && math.IsNaN(g)
	}
	if math.IsInf(w, 0) || math.IsInf(g, 0) {
		return g == w
	}
	return math.Abs(g-w) <= tol
}

// float32Eps is the float32 machine epsilon, 2^-23.
const float32Eps = 1.0 / (1 << 23)

// fmtShape formats a case name from key=value pairs.
func fmtShape(kv ...any) string {
	s := ""
	for i := 0; i+1 < len(kv); i += 2 {
		if s != "" {
			s += ","
		}
		s += fmt.Sprintf("%v=%v", kv[i], kv[i+1])
	}
	return s
}
