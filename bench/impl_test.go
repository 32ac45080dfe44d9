package bench_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/simdgpt/simdgpt/bench"
	"github.com/simdgpt/simdgpt/kernels"
)

// TestOursSetsEveryKernel checks that Ours wires every field of
// KernelFuncs (each is a kernel of package kernels) for every
// implementation, to that implementation's own method.
func TestOursSetsEveryKernel(t *testing.T) {
	fields := bench.KernelFields()
	typ := reflect.TypeFor[bench.KernelFuncs]()
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		if !slices.Contains(fields, f.Name) {
			t.Errorf("Impl.%s is not a method of *kernels.Impl of the same type", f.Name)
		}
	}
	x := []float32{1, 2, 3}
	for _, p := range kernels.Implementations() {
		im := bench.Ours(p)
		v := reflect.ValueOf(im).Elem()
		for _, name := range fields {
			if v.FieldByName(name).IsNil() {
				t.Errorf("Ours(%s).%s is nil", p.Name(), name)
			}
		}
		if got := im.Dot(x, x); got != 14 {
			t.Errorf("Ours(%s).Dot = %v, want 14", p.Name(), got)
		}
		// A reflective method value would allocate on every call.
		if a := testing.AllocsPerRun(100, func() { im.Dot(x, x) }); a != 0 {
			t.Errorf("Ours(%s).Dot allocates %v times per call", p.Name(), a)
		}
	}
}
