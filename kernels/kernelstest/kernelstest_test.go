package kernelstest

import (
	"testing"

	"github.com/simdgpt/simdgpt/kernels"
)

func TestForEachVisitsEveryImplementation(t *testing.T) {
	var seen []string
	ForEach(t, func(t *testing.T, p *kernels.Impl) {
		seen = append(seen, p.Name())
		if got := p.Dot([]float32{1, 2, 3}, []float32{4, 5, 6}); got != 32 {
			t.Errorf("%s: Dot = %v, want 32", p.Name(), got)
		}
	})
	if want := Expected(); len(seen) != len(want) {
		t.Fatalf("visited %v, want %v", seen, want)
	}
}
