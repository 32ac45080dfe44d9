package kernelstest_test

import (
	"testing"

	"github.com/simdgpt/simdgpt/kernels"
	"github.com/simdgpt/simdgpt/kernels/kernelstest"
)

// rmsOf stands for a layer built on kernels: it is tested on every implementation this CPU
// runs by taking the implementation as an argument.
func rmsOf(p *kernels.Impl, x []float32) float32 { return p.Dot(x, x) / float32(len(x)) }

func TestRMSEveryImplementation(t *testing.T) {
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		if got := rmsOf(p, []float32{3, 4}); got != 12.5 {
			t.Errorf("rmsOf = %v, want 12.5", got)
		}
	})
}

func ExampleForEach() {
	// In a test function with t *testing.T:
	var t *testing.T
	_ = func() {
		kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
			if got := p.Sum([]float32{1, 2, 3}); got != 6 {
				t.Errorf("%s: Sum = %v, want 6", p.Name(), got)
			}
		})
	}
}
