package bench

import (
	"fmt"
	"math"
	"reflect"

	"github.com/simdgpt/simdgpt/kernels"
)

// GemmFunc is the signature of a row-major single-precision GEMM,
// C = alpha·op(A)·op(B) + beta·C, as kernels.Gemm.
type GemmFunc func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)

// ScoresFunc is the signature of kernels.MaskedScores.
type ScoresFunc func(tq, tk, d int, scale float32, q []float32, ldq int, k []float32, ldk int, offset int, s []float32, lds int)

// Impl is one way of running kernels that the benchmarks measure: one of
// simdgpt's implementations (see Ours), another library (a peer, such as
// gonum's Sgemm) or another way of computing a kernel's result (such as
// GemmThenMask). Each field below that is nil marks a kernel the Impl
// does not provide; such cases are left out.
type Impl struct {
	// Name identifies the implementation in flags, tables and benchmark
	// names: "generic", "avx2", "avx512", "gonum", "openblas", ...
	Name string

	// About describes the implementation in a line for report headers
	// (for peers: the library and its version).
	About string

	// Peer is true for anything that is not one of simdgpt's own
	// implementations; tables give every implementation's ratio to each
	// peer.
	Peer bool

	// Own is the simdgpt implementation this Impl runs (set by Ours); nil
	// for peers. A kernel defined outside this package (see NewKernel)
	// whose code calls kernels' package-level functions measures Own by
	// making it the default for the call (kernels.SetDefault(Own.Name())).
	Own *kernels.Impl

	// ISA is the simdgpt implementation whose FMA peak loop is the
	// yardstick for this Impl's percent of peak. For generic and for
	// peers it is the widest implementation this CPU runs.
	ISA *kernels.Impl

	// MaxFlops, if positive, leaves out cases of more floating-point
	// operations per call (generic GEMM takes seconds per call beyond
	// a few tens of MFLOP).
	MaxFlops float64

	// SetThreads, if not nil, sets the number of threads the library
	// runs on (the runner matches it to GOMAXPROCS).
	SetThreads func(n int)

	// KernelFuncs holds the kernels the Impl runs (nil: not provided).
	KernelFuncs
}

// genericMaxFlops is the largest GEMM or scores problem (in floating-point
// operations per call) that the generic implementation is run on.
const genericMaxFlops = 1 << 27

// Ours returns the Impl that runs every kernel of the simdgpt
// implementation p: each field of KernelFuncs is set to the method of p of
// its name (generated, kernels_gen.go). The assignments are plain method
// values, not reflection: a method value made by reflect costs a
// reflective call (hundreds of nanoseconds and allocations) on every use,
// which would swamp a 20 ns kernel.
func Ours(p *kernels.Impl) *Impl {
	im := &Impl{Name: p.Name(), Own: p, ISA: p, KernelFuncs: kernelsOf(p)}
	if p.FMAPeakLoop(1) == 0 {
		im.ISA = Widest()
		im.MaxFlops = genericMaxFlops
	}
	return im
}

// KernelFields returns the names of Impl's kernel fields: the func fields
// of KernelFuncs named after a method of *kernels.Impl with an assignable
// type.
func KernelFields() []string {
	typ := reflect.TypeFor[KernelFuncs]()
	methods := reflect.TypeFor[*kernels.Impl]()
	var out []string
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		if f.Type.Kind() != reflect.Func {
			continue
		}
		m, ok := methods.MethodByName(f.Name)
		if !ok {
			continue
		}
		// The method's type without its receiver.
		in := make([]reflect.Type, m.Type.NumIn()-1)
		for j := range in {
			in[j] = m.Type.In(j + 1)
		}
		outs := make([]reflect.Type, m.Type.NumOut())
		for j := range outs {
			outs[j] = m.Type.Out(j)
		}
		if reflect.FuncOf(in, outs, m.Type.IsVariadic()).AssignableTo(f.Type) {
			out = append(out, f.Name)
		}
	}
	return out
}

// GemmThenMask returns a peer of p's MaskedScores that computes the same
// scores the plain way: p's Gemm for the whole T×T product, then -Inf
// written over the masked upper triangle. It is what MaskedScores's
// skipping of masked tiles is measured against. Its name is "gemm+mask"
// for the fastest implementation this CPU runs and "IMPL/gemm+mask" for
// the others.
func GemmThenMask(p *kernels.Impl) *Impl {
	name := p.Name() + "/gemm+mask"
	if impls := kernels.Implementations(); p == impls[len(impls)-1] {
		name = "gemm+mask"
	}
	isa, maxFlops := p, 0.0
	if p.FMAPeakLoop(1) == 0 {
		isa, maxFlops = Widest(), genericMaxFlops
	}
	negInf := float32(math.Inf(-1))
	return &Impl{
		Name:     name,
		About:    "MaskedScores as " + p.Name() + " Gemm of all T×T scores, then -Inf over the masked triangle",
		Peer:     true,
		ISA:      isa,
		MaxFlops: maxFlops,
		KernelFuncs: KernelFuncs{
			MaskedScores: func(tq, tk, d int, scale float32, q []float32, ldq int, k []float32, ldk int, offset int, s []float32, lds int) {
				p.Gemm(false, true, tq, tk, d, scale, q, ldq, k, ldk, 0, s, lds)
				for i := range tq {
					for j := max(0, i+offset+1); j < tk; j++ {
						s[i*lds+j] = negInf
					}
				}
			},
		},
	}
}

// Widest returns the fastest simdgpt implementation this CPU runs that has
// an FMA peak loop, or nil if there is none (a purego build).
func Widest() *kernels.Impl {
	impls := kernels.Implementations()
	for i := len(impls) - 1; i >= 0; i-- {
		if impls[i].FMAPeakLoop(1) > 0 {
			return impls[i]
		}
	}
	return nil
}

// OursAll returns Ours of every implementation this CPU runs, generic
// first.
func OursAll() []*Impl {
	var out []*Impl
	for _, p := range kernels.Implementations() {
		out = append(out, Ours(p))
	}
	return out
}

// TileVariants returns, for every implementation this CPU runs that has
// more than one GEMM tile, Ours of each of its tile variants
// (kernels.Impl.TileVariants, named "avx512/8x48") with only the kernels
// that run on the micro-kernels set (Gemm, Gemv, MaskedScores,
// GemmBiasGELU, GemmBias): the tiles side by side, without repeating
// every other kernel.
func TileVariants() []*Impl {
	var out []*Impl
	for _, p := range kernels.Implementations() {
		vs := p.TileVariants()
		if len(vs) < 2 {
			continue
		}
		for _, v := range vs {
			im := Ours(v)
			f := im.KernelFuncs
			im.KernelFuncs = KernelFuncs{Gemm: f.Gemm, Gemv: f.Gemv, MaskedScores: f.MaskedScores, GemmBiasGELU: f.GemmBiasGELU, GemmBias: f.GemmBias}
			im.About = fmt.Sprintf("%s with its GEMM on the %s tile (chosen for this CPU: %s)", p.Name(), v.Tile(), p.Tile())
			out = append(out, im)
		}
	}
	return out
}
