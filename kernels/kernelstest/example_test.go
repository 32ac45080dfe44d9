package kernelstest_test

import (
	"fmt"
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

// A layer's test takes the implementation as an argument and runs on each
// (TestRMSEveryImplementation above is this example as a test):
//
//	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
//		if got := rmsOf(p, []float32{3, 4}); got != 12.5 { ... }
//	})
//
// The subtests are named after Expected(), generic first, and a build that
// offers another list fails.
func ExampleForEach() {
	names := kernelstest.Expected()
	first := kernels.Implementations()[0]
	fmt.Println(names[0], first.Name(), rmsOf(first, []float32{3, 4}))
	// Output: generic generic 12.5
}
