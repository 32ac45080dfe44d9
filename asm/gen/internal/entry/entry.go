// Package entry is the one list of simdgpt's assembly entry points: each
// kind of function the generators emit, with its Go signature, the
// architectures that have it and what uses it. The amd64 generators (avo)
// and the NEON emitter read their signatures from here, and every stub
// (kernels/amd64/*_stubs_amd64.go, kernels/arm64/*_stubs_arm64.go), every
// TEXT directive's argument size and go vet's check of the assembly's
// argument offsets derive from them. entry_test.go checks the generated
// stubs against the list: every function has a kind here, with its
// signature, on the architectures the kind names.
//
// A function's name is its kind, then what varies within the kind (a
// row count, a tile such as 8x12, Packed, 14Rows), then the ISA's suffix
// (AVX2, AVX512, NEON): skinnyDots3AVX512 is of kind skinnyDots.
//
// To add an assembly function: add its kind to List (name, signature,
// architectures, and in Use the kernelset.Set field or the driver's
// function type that takes it, which has the same signature); in its
// avo generator call x86.Func(name, entry.Sig(kind), doc...) (or
// s.Header(kind, doc...)), and in the NEON emitter f.fn(entry.Decl(name,
// kind), doc); then go generate ./... from the module root.
package entry

import (
	"fmt"
	"strings"
)

// Kind is one kind of assembly function.
type Kind struct {
	Name string // the functions' names start with it
	Sig  string // their Go signature, without the name: "func(x, y []float32) float32"
	// Arch lists the architectures with such functions: "amd64",
	// "arm64" or both.
	Arch []string
	// Use is what takes them: a field of kernelset.Set, a driver's
	// function type, or the Go wrapper that calls them.
	Use string
}

var (
	both  = []string{"amd64", "arm64"}
	amd64 = []string{"amd64"}
	arm64 = []string{"arm64"}
)

// List is every kind of assembly function, by family.
var List = []Kind{
	// vecops: the vector operations, the set's kernels themselves
	// (generic.Dot ... generic.Max are their executable references).
	{"dot", "func(x, y []float32) float32", both, "kernelset.Set.Dot"},
	{"axpy", "func(alpha float32, x, y []float32)", both, "kernelset.Set.Axpy"},
	{"scale", "func(alpha float32, x []float32)", both, "kernelset.Set.Scale"},
	{"add", "func(dst, x, y []float32)", both, "kernelset.Set.Add, gemm.AddRow"},
	{"sum", "func(x []float32) float32", both, "kernelset.Set.Sum"},
	{"max", "func(x []float32) float32", both, "kernelset.Set.Max (NEON: maxFirstNaNNEON)"},

	// gemm: the micro-kernels of the GEMM driver, and amd64's packing
	// and edge kernels.
	{"gemmKernel", "func(k int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, rows, cols int, alpha, beta float32)", both, "gemm.KernelFunc"},
	{"gemmColsKernel", "func(k int, a *float32, b *float32, cols int, dst *float32)", amd64, "gemm.Kernels.Cols"},
	{"gemmDotKernel", "func(k int, a *float32, lda int, b *float32, c *float32, ldc int, alpha, beta float32)", amd64, "gemm.Kernels.Dot"},
	{"packB", "func(dst *float32, src *float32, ldb int, w int, kc int, nr int)", amd64, "gemm.Kernels.PackN"},
	{"packBTrans", "func(dst *float32, src *float32, ldb int, w int, kc int, nr int)", amd64, "gemm.Kernels.PackT"},
	{"packPanels", "func(dst *float32, src *float32, lda int, m int, kc int)", amd64, "gemm.Kernels.PackPanels and PackBPanels"},

	// skinny: the GEMM driver's kernels for few rows of op(A).
	{"skinnyDots", "func(rows, k int, w *float32, ldw int, x *float32, ldx int, c *float32, ldc int, alpha, beta float32)", both, "gemm.DotsFunc"},
	{"skinnyAxpys", "func(k, n int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)", both, "gemm.AxpysFunc"},
	{"skinnyStream", "func(k, n int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, acc *float32)", amd64, "gemm.StreamFunc"},

	// lowbit: the products over low-bit weights.
	{"lowbitBF16", "func(rows, groups int, w *byte, ldw int, x *float32, ldx int, xt *float32, c *float32, ldc int, alpha, beta float32)", both, "lowbit.Kernel"},
	{"lowbitInt8", "func(rows, groups int, w *byte, ldw int, x *int16, ldx int, xs *float32, c *float32, ldc int, beta float32)", both, "lowbit.Int8Kernel"},
	{"lowbitBF16Pair", "func(rows, groups int, w *byte, ldw int, x *uint16, ldx int, c *float32, alpha float64, beta float32) (done int)", amd64, "lowbit.PairKernel"},
	{"lowbitSplitBF16", "func(groups int, x *float32, out *uint16, ldo int, tail uint32) (scale float32, ok bool)", amd64, "lowbit.SplitFunc"},

	// softmax: the row kernels of Softmax, SoftmaxBackward and the
	// cross-entropy's exponentials.
	{"softmaxRow", "func(dst, src []float32)", amd64, "softmaxAVX2, softmaxAVX512"},
	{"softmaxRows2", "func(dst0, src0, dst1, src1 []float32)", amd64, "softmaxAVX512"},
	{"softmaxExpRow", "func(dst, src []float32) (c, sum float32)", amd64, "xent.ExpRow (through expRowAVX2, expRowAVX512)"},
	{"softmaxBackwardRow", "func(dx, y, dy []float32)", both, "softmaxBackwardAVX2, softmaxBackwardAVX512, softmaxBackwardNEON"},
	{"expRow", "func(dst, src []float32, c, b, thr float32) float64", arm64, "expShiftedNEON"},
	{"expRowFar", "func(dst, src []float32, c, b, thr float32) float64", arm64, "expShiftedNEON"},

	// layernorm: the one-row kernels of the LayerNorm driver.
	{"layerNormRow", "func(y, x, gamma, beta []float32, eps float32) (mean, rstd float32)", both, "layernorm.LayerNormRow"},
	{"layerNormBackwardRow", "func(dx, dy, x, gamma, dgamma, dbeta []float32, mean, rstd float32)", both, "layernorm.LayerNormBackwardRow"},

	// optim.
	{"adamw", "func(p, g, m, v []float32, scale, b1, c1, b2, c2, ic1, ic2, eps, wd, lr float32)", both, "kernelset.Set.AdamW (through adamwSetAVX2 ...)"},
	{"sumSquares", "func(x []float32) float64", both, "kernelset.Set.SumSquares"},

	// gelu: the row kernels of GELU, GELUBackward and BiasGELU.
	{"geluRow", "func(dst, x []float32)", both, "kernelset.Set.GELU (NEON: geluNEON)"},
	{"geluBackwardRow", "func(dx, dy, x []float32)", both, "kernelset.Set.GELUBackward (NEON: geluBackwardNEON)"},
	{"biasGeluRow", "func(y, x, bias []float32)", both, "kernelset.Set.BiasGELU (through biasGeluAVX2 ...)"},

	// peak: the measuring loops of kernelset.Instruments.
	{"fmaPeak", "func(n int)", both, "kernelset.Instruments.FMALoop"},
	{"readAhead", "func(p *float32, n, dist int) float32", amd64, "kernelset.Instruments.ReadLoop"},
}

// Lookup returns the kind named kind; it panics if there is none.
func Lookup(kind string) Kind {
	for _, k := range List {
		if k.Name == kind {
			return k
		}
	}
	panic(fmt.Sprintf("entry: no kind %q in the list of assembly functions", kind))
}

// Sig returns the Go signature of the functions of kind, without a name.
func Sig(kind string) string { return Lookup(kind).Sig }

// Decl returns the Go declaration of the function name of kind: "func
// name(params) results".
func Decl(name, kind string) string {
	if !strings.HasPrefix(name, kind) {
		panic(fmt.Sprintf("entry: %s is not of kind %s", name, kind))
	}
	return "func " + name + strings.TrimPrefix(Sig(kind), "func")
}

// KindOf returns the kind of the function name (its ISA suffix removed):
// the longest kind name that starts it. ok is false when none does.
func KindOf(name string) (k Kind, ok bool) {
	for _, c := range List {
		if strings.HasPrefix(name, c.Name) && len(c.Name) > len(k.Name) {
			k, ok = c, true
		}
	}
	return k, ok
}
