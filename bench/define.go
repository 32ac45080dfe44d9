package bench

import (
	"fmt"
	"strings"
	"unicode"
)

// KernelDef defines a kernel outside this package, for NewKernel: code
// that bench cannot import (bench depends on package kernels only), such
// as an attention layer built on the kernels. The fields mean what the
// Kernel's fields and methods of the same names mean.
type KernelDef struct {
	// Name identifies the kernel in flags, tables and benchmark names; it
	// should differ from the names of Kernels (Select takes the first of a
	// name). Like shape names, it must be non-empty, without spaces or
	// '/' (they would break the benchmark names).
	Name string
	// Doc says in a line what a call computes.
	Doc   string
	Bound Bound
	// Shapes are the problem sizes, each with a distinct non-empty Name.
	// Their other fields mean whatever Work and Setup make of them
	// (Shape.Size, the position on a chart's size axis, is N).
	Shapes []Shape
	// Short is the name of the shape a short run measures: one of Shapes.
	Short string
	// Work returns the floating-point operations and bytes of one call
	// on a shape. Rates and percent of peak are computed from it.
	Work func(s Shape) Work
	// Memory, if not nil, estimates on the high side the bytes Setup
	// allocates for one implementation on a shape and keeps while the
	// case runs (see Kernel.Memory); nil means twice Work's bytes.
	Memory func(s Shape) float64
	// Has reports whether im can run the kernel; nil means every Impl
	// can. Kernels that run simdgpt's own code typically accept the Impls
	// whose Own is not nil.
	Has func(im *Impl) bool
	// Setup allocates and fills the inputs of one case and returns a
	// function performing one call of the kernel on them with im (only
	// called when Has(im)). Every call should do the same work and
	// allocate nothing; the first call is the warm-up and is not timed.
	Setup func(s Shape, im *Impl) func()
}

// NewKernel returns the kernel d defines. Append it to the kernels that
// Kernels returns to have Select, Run and the kernelbench tables treat it
// as any other kernel. It panics, naming the field, if d.Name or a shape
// name is empty or holds a space or '/', if d has no shapes, if a shape
// name is repeated, if d.Short names none of d.Shapes, or if Work or Setup is nil:
// these are mistakes in the caller's program, not in its input.
func NewKernel(d KernelDef) *Kernel {
	if !validName(d.Name) {
		panic(fmt.Sprintf("bench.NewKernel: Name = %q, want a non-empty name without spaces or '/'", d.Name))
	}
	if len(d.Shapes) == 0 {
		panic(fmt.Sprintf("bench.NewKernel: kernel %s has no Shapes", d.Name))
	}
	seen := map[string]bool{}
	for i, s := range d.Shapes {
		if !validName(s.Name) {
			panic(fmt.Sprintf("bench.NewKernel: kernel %s: Shapes[%d].Name = %q, want a non-empty name without spaces or '/'", d.Name, i, s.Name))
		}
		if seen[s.Name] {
			panic(fmt.Sprintf("bench.NewKernel: kernel %s: Shapes[%d].Name = %q repeats an earlier shape", d.Name, i, s.Name))
		}
		seen[s.Name] = true
	}
	if !seen[d.Short] {
		panic(fmt.Sprintf("bench.NewKernel: kernel %s: Short = %q is not the name of one of its %d Shapes", d.Name, d.Short, len(d.Shapes)))
	}
	if d.Work == nil || d.Setup == nil {
		panic(fmt.Sprintf("bench.NewKernel: kernel %s: Work and Setup must not be nil", d.Name))
	}
	has := d.Has
	if has == nil {
		has = func(*Impl) bool { return true }
	}
	return &Kernel{
		Name:   d.Name,
		Doc:    d.Doc,
		Bound:  d.Bound,
		Shapes: append([]Shape(nil), d.Shapes...),
		Short:  d.Short,
		work:   d.Work,
		mem:    d.Memory,
		has:    has,
		setup:  d.Setup,
	}
}

// validName reports whether name can be a kernel or shape name: not
// empty, no white space, no '/'.
func validName(name string) bool {
	return name != "" && !strings.ContainsFunc(name, func(r rune) bool { return r == '/' || unicode.IsSpace(r) })
}
