package attention

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/simdgpt/simdgpt/kernels"
)

// problem is one layer's inputs: qkv [B,T,3C] and targets for the
// cross-entropy test loss of y.
type problem struct {
	s       refShape
	qkv     []float32
	targets []int
}

// newProblem makes random inputs of shape s whose scores are of order 1
// (queries and keys uniform in ±√3 give scaled scores of standard
// deviation 1), so the softmax is neither uniform nor one-hot.
func newProblem(s refShape, seed uint64) *problem {
	rng := newRand(seed)
	pr := &problem{s: s}
	n := s.b * s.t
	pr.qkv = uniform(rng, n*3*s.c, float32(math.Sqrt(3)))
	pr.targets = make([]int, n)
	for i := range pr.targets {
		pr.targets[i] = rng.IntN(s.c)
	}
	return pr
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 7)) }

// uniform returns n values uniform in [-a, a).
func uniform(rng *rand.Rand, n int, a float32) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = a * (2*rng.Float32() - 1)
	}
	return s
}

// newLayer returns the single-head layer when h is 0, else the multi-head
// layer with h heads, computing with p.
func newLayer(t testing.TB, p *kernels.Impl, c, h int) *Layer {
	t.Helper()
	if h == 0 {
		return NewSingleHead(c, WithImpl(p))
	}
	l, err := NewMultiHead(c, h, WithImpl(p))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// fastResult is what the layer under test computes for a problem.
type fastResult struct {
	y, probs, dqkv []float32
}

// lossGradient returns dL/dy of the cross-entropy test loss of y, in
// float32.
func lossGradient(pr *problem, y []float32) []float32 {
	s := pr.s
	_, dy64 := crossEntropy(s.b*s.t, s.c, to64(y), pr.targets)
	dy := make([]float32, len(dy64))
	for i, v := range dy64 {
		dy[i] = float32(v)
	}
	return dy
}

// runFast runs Forward and, for the cross-entropy loss of its output,
// Backward.
func runFast(l *Layer, pr *problem) fastResult {
	s := pr.s
	n := s.b * s.t
	var r fastResult
	r.y = make([]float32, n*s.c)
	l.Forward(r.y, pr.qkv, s.b, s.t)
	r.probs = append([]float32(nil), l.Probs()...)
	r.dqkv = make([]float32, 3*n*s.c)
	l.Backward(r.dqkv, lossGradient(pr, r.y), pr.qkv)
	return r
}

// relErr is max|got-want| / max(max|want|, 1e-30).
func relErr(got []float32, want []float64) float64 {
	if len(got) != len(want) {
		return math.Inf(1)
	}
	num, den := 0.0, 1e-30
	for i := range got {
		num = math.Max(num, math.Abs(float64(got[i])-want[i]))
		den = math.Max(den, math.Abs(want[i]))
	}
	return num / den
}

// equal fails the test at the first element where got differs from want
// (bit for bit); what names the comparison.
func equal(t *testing.T, what string, got, want []namedF32) {
	t.Helper()
	for i := range want {
		if len(got[i].s) != len(want[i].s) {
			t.Fatalf("%s: len(%s) = %d, want %d", what, got[i].name, len(got[i].s), len(want[i].s))
		}
		for j := range want[i].s {
			if got[i].s[j] != want[i].s[j] {
				t.Fatalf("%s: %s[%d] = %v, want %v", what, got[i].name, j, got[i].s[j], want[i].s[j])
			}
		}
	}
}

// named lists the outputs and gradients for comparisons.
func (r fastResult) named() []namedF32 {
	return []namedF32{
		{"y", r.y}, {"probs", r.probs}, {"dqkv", r.dqkv},
	}
}

type namedF32 struct {
	name string
	s    []float32
}

// mustPanic calls f and returns its panic message; it fails the test if
// f does not panic or the message lacks one of want.
func mustPanic(t *testing.T, f func(), want ...string) {
	t.Helper()
	msg := func() (msg string) {
		defer func() {
			if r := recover(); r != nil {
				msg = fmt.Sprint(r)
			}
		}()
		f()
		return "<no panic>"
	}()
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("panic message %q does not contain %q", msg, w)
		}
	}
}
