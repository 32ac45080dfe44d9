// Package bench holds simdgpt's benchmark cases, kernel × shape ×
// implementation, in one place: the kernels' `go test -bench` benchmarks
// and the kernelbench command run the same cases. It counts the work of
// each case (floating-point operations and bytes moved), runs the
// implementations of one case interleaved (A B A B ...) so that their
// ratio shares the machine's conditions, and summarises the samples with
// golang.org/x/perf/benchmath, the statistics benchstat uses.
//
// bench depends on package kernels only; other libraries measured for
// comparison (peers) are in bench/peers, and code built on the kernels
// (such as package attention, which cmd/kernelbench measures) is defined
// as a kernel by its caller with NewKernel.
//
// # Percent of peak
//
// A compute-bound rate is also read as a fraction of the FMA peak: the
// rate of the generated FMA peak loop (kernels.Impl.FMAPeakLoop) of the
// same implementation (Impl.ISA) on the same number of goroutines. One
// sample of that loop can read low — the clock drops for a while, a
// neighbour takes the core, the sample is too short to leave its
// start-up — and a kernel's rate over a low sample comes out above 100%.
// So every command and benchmark of this module (Run, Benchmark,
// cmd/kernelbench, cmd/trainbench, gpt's benchmarks) takes the peak the
// same way:
//
//   - Peak samples are taken through the measurement by a PeakSampler:
//     one of PeakTime before the first timed call; one of a sixteenth of
//     the timed work (at least MinPeakTime) each time the timed work since
//     the last sample reaches 16·MinPeakTime; one of PeakTime after the
//     last timed call. Each sample (MeasurePeak) first runs the loop
//     untimed for a quarter of its duration, so that the clock has settled
//     when it is timed.
//   - Peaks keeps every sample by implementation and thread count
//     (PeakKey), and the peak of a key is the largest of its samples
//     (Peaks.Max): a low sample cannot lower it.
//   - A rate is divided by that maximum only once all samples are in: at
//     the end of a command's run, or at the end of a testing benchmark
//     (with the samples of the earlier benchmarks of the process).
//
// A rate no higher than some sample of the peak loop therefore never reads
// above 100%. A rate still above the largest sample means the peak loop does not
// reach the machine's peak (a defect of the loop, or of a kernel's count
// of its operations): it is shown as it is, followed by OverPeakMark
// (FormatPercent), with OverPeakNote under the table or in the benchmark's
// log. Nothing is clamped.
package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"unsafe"

	"github.com/simdgpt/simdgpt/kernels"
	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

// Bound says what limits a kernel: compute-bound kernels are reported in
// GFLOP/s and as a percentage of the FMA peak, memory-bound ones in GB/s.
type Bound int

const (
	// ComputeBound kernels do many floating-point operations per byte.
	ComputeBound Bound = iota
	// MemoryBound kernels move more bytes than they compute.
	MemoryBound
)

// Shape is one problem size of a kernel. Its fields mean, per kernel:
//
//	gemm:                      C (M×N) = op(A) (M×K) · op(B) (K×N), TransA, TransB
//	gemv:                      y = op(A)·x, A M×N, TransA
//	maskedscores:              T = M = N queries and keys, head size D = K
//	softmax, softmaxbackward:  M rows of N columns; InPlace writes y over x
//	dot, axpy, gelu, ...:      vectors of length N
//	biasgelu:                  M rows of N columns
//	gemmbiasgelu:              as gemm, then bias and GELU on the M×N result
//	gemmbias:                  as gemm, then bias added to every row
//	kernels from NewKernel:    what their KernelDef says
type Shape struct {
	// Name identifies the shape in flags, tables and benchmark names,
	// such as "sq512", "768x128x384", "T=256,d=64" or "n=4096".
	Name           string
	M, N, K        int
	TransA, TransB bool
	InPlace        bool
}

// Size is the shape's position on a size axis: the cube root of M·N·K for
// GEMM and the fused GEMMs (n for an n×n×n square), T for scores, N
// otherwise.
func (s Shape) Size(k *Kernel) float64 {
	switch k.Name {
	case "gemm", "gemmbiasgelu", "gemmbias", "gemmbf16compute":
		return math.Cbrt(float64(s.M) * float64(s.N) * float64(s.K))
	}
	return float64(s.N)
}

// Work is what one call of a case does.
type Work struct {
	Flops float64 // floating-point operations (an FMA counts as two)
	Bytes float64 // bytes read plus bytes written, each element once
}

// Kernel is one kernel with the shapes it is benchmarked on.
type Kernel struct {
	// Name identifies the kernel in flags, tables and benchmark names:
	// "gemm", "maskedscores", "softmax", ...
	Name string
	// Doc says in a line what a call computes.
	Doc    string
	Bound  Bound
	Shapes []Shape
	// Short is the name of the shape a short run (kernelbench -short)
	// measures.
	Short string
	// PeakBF16 marks a compute-bound kernel whose percent of peak is of
	// the bfloat16 peak loop (kernels.Impl.BF16PeakLoop), not the FMA
	// one: its PeakKey's ISA carries BF16PeakSuffix.
	PeakBF16 bool
	// ReadBound marks a memory-bound kernel whose Work counts only the
	// bytes of the operand it streams, so that its rate compares with
	// the streaming read bandwidth (ReadRate), as kernelbench's tables
	// show it.
	ReadBound bool

	work  func(s Shape) Work
	mem   func(s Shape) float64          // nil: 2·work(s).Bytes
	has   func(im *Impl) bool            // im provides the kernel
	setup func(s Shape, im *Impl) func() // called only when has(im)
}

// Work returns the floating-point operations and bytes of one call on s.
func (k *Kernel) Work(s Shape) Work { return k.work(s) }

// Memory returns an estimate, on the high side, of the bytes Setup
// allocates for one implementation on s and keeps while the case runs:
// its inputs, outputs and scratch, and the float32 matrix a low-bit
// matrix is converted from. Where a kernel states nothing closer it is
// twice the bytes Work counts; setupOverhead is added to either for the
// small allocations (generators, closures).
func (k *Kernel) Memory(s Shape) float64 {
	if k.mem != nil {
		return k.mem(s) + setupOverhead
	}
	return 2*k.work(s).Bytes + setupOverhead
}

// setupOverhead bounds the bytes a Setup allocates besides its operands.
const setupOverhead = 64 << 10

// Shape returns the kernel's shape of the given name.
func (k *Kernel) Shape(name string) (Shape, bool) {
	for _, s := range k.Shapes {
		if s.Name == name {
			return s, true
		}
	}
	return Shape{}, false
}

// Supports reports whether im provides this kernel for shape s (and s is
// not beyond im.MaxFlops).
func (k *Kernel) Supports(s Shape, im *Impl) bool {
	if im.MaxFlops > 0 && k.Bound == ComputeBound && k.work(s).Flops > im.MaxFlops {
		return false
	}
	return k.has(im)
}

// Setup allocates and fills the inputs of one case and returns a function
// that performs one call of the kernel on them with im; it returns nil
// when !k.Supports(s, im). Every call does the same work; the function
// allocates nothing.
func (k *Kernel) Setup(s Shape, im *Impl) func() {
	if !k.Supports(s, im) {
		return nil
	}
	return k.setup(s, im)
}

// Case is one kernel on one shape.
type Case struct {
	Kernel *Kernel
	Shape  Shape
}

// String returns "kernel/shape".
func (c Case) String() string { return c.Kernel.Name + "/" + c.Shape.Name }

// Work returns the work of one call of the case.
func (c Case) Work() Work { return c.Kernel.work(c.Shape) }

// Memory returns an estimate, on the high side, of the bytes RunContext
// holds at once to run c with impls: Kernel.Memory for each of impls that
// supports c (every implementation's inputs are set up before the first
// sample).
func (c Case) Memory(impls []*Impl) float64 {
	var b float64
	for _, im := range impls {
		if c.Kernel.Supports(c.Shape, im) {
			b += c.Kernel.Memory(c.Shape)
		}
	}
	return b
}

// Kernels returns every kernel of this package with its shapes, in the
// order tables list them. Each call returns new values the caller may
// modify, for example append kernels defined with NewKernel to.
func Kernels() []*Kernel {
	return []*Kernel{
		gemmKernel(), gemvKernel(), gemvBF16Kernel(), gemvInt8Kernel(),
		scoresKernel(), softmaxKernel(), softmaxBackwardKernel(),
		layerNormKernel(), layerNormBackwardKernel(), dequantInt8Kernel(),
		vecKernel("dot", "r = Σ x[i]·y[i]", 2, 8, func(im *Impl) func(x, y, d []float32) float32 {
			if im.Dot == nil {
				return nil
			}
			return func(x, y, _ []float32) float32 { return im.Dot(x, y) }
		}),
		vecKernel("axpy", "y[i] += a·x[i]", 2, 12, func(im *Impl) func(x, y, d []float32) float32 {
			if im.Axpy == nil {
				return nil
			}
			// alpha is tiny so d stays bounded however many calls run.
			return func(x, _, d []float32) float32 { im.Axpy(1e-7, x, d); return 0 }
		}),
		vecKernel("scale", "x[i] *= a", 1, 8, func(im *Impl) func(x, y, d []float32) float32 {
			if im.Scale == nil {
				return nil
			}
			// Scaling by 1 keeps the data unchanged (and free of subnormals).
			return func(x, _, _ []float32) float32 { im.Scale(1, x); return 0 }
		}),
		vecKernel("add", "d[i] = x[i] + y[i]", 1, 12, func(im *Impl) func(x, y, d []float32) float32 {
			if im.Add == nil {
				return nil
			}
			return func(x, y, d []float32) float32 { im.Add(d, x, y); return 0 }
		}),
		vecKernel("sum", "r = Σ x[i]", 1, 4, func(im *Impl) func(x, y, d []float32) float32 {
			if im.Sum == nil {
				return nil
			}
			return func(x, _, _ []float32) float32 { return im.Sum(x) }
		}),
		vecKernel("max", "r = max x[i]", 1, 4, func(im *Impl) func(x, y, d []float32) float32 {
			if im.Max == nil {
				return nil
			}
			return func(x, _, _ []float32) float32 { return im.Max(x) }
		}),
		crossEntropyKernel(), adamwKernel(),
		vecKernel("sumsquares", "r = Σ x[i]² in float64", 2, 4, func(im *Impl) func(x, y, d []float32) float32 {
			if im.SumSquares == nil {
				return nil
			}
			return func(x, _, _ []float32) float32 { return float32(im.SumSquares(x)) }
		}),
		copyKernel(),
		vecKernel("gelu", "d[i] = gelu(x[i]) (tanh form)", 20, 8, func(im *Impl) func(x, y, d []float32) float32 {
			if im.GELU == nil {
				return nil
			}
			return func(x, _, d []float32) float32 { im.GELU(d, x); return 0 }
		}),
		vecKernel("gelubackward", "d[i] = y[i]·gelu'(x[i])", 25, 12, func(im *Impl) func(x, y, d []float32) float32 {
			if im.GELUBackward == nil {
				return nil
			}
			return func(x, y, d []float32) float32 { im.GELUBackward(d, y, x); return 0 }
		}),
		biasGeluKernel(), gemmBiasGeluKernel(), gemmBiasKernel(), gemmBF16Kernel(),
	}
}

// KernelNames returns the names of ks, in order.
func KernelNames(ks []*Kernel) []string {
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = k.Name
	}
	return names
}

// gemmShape returns the shape M×K×N named as TinyGPT's shapes are:
// "MxKxN", with "_NT" (B transposed) or "_TN" (A transposed) appended.
func gemmShape(m, k, n int, transA, transB bool) Shape {
	name := fmt.Sprintf("%dx%dx%d", m, k, n)
	switch {
	case transA && transB:
		name += "_TT"
	case transA:
		name += "_TN"
	case transB:
		name += "_NT"
	}
	return Shape{Name: name, M: m, N: n, K: k, TransA: transA, TransB: transB}
}

func square(n int) Shape { return Shape{Name: fmt.Sprintf("sq%d", n), M: n, N: n, K: n} }

func gemmKernel() *Kernel {
	shapes := []Shape{square(64), square(128), square(256), square(512), square(1024), square(2048)}
	// TinyGPT's training shapes (M×K×N): a 768-token batch of width 128
	// through the QKV, projection, MLP and LM-head weights ...
	for _, kn := range [][2]int{{128, 384}, {128, 128}, {128, 512}, {512, 128}, {128, 65}} {
		shapes = append(shapes, gemmShape(768, kn[0], kn[1], false, false))
	}
	// ... and the transposed forms backward uses: dX = dY·Wᵀ (B
	// transposed) and dW = Xᵀ·dY (A transposed).
	shapes = append(shapes,
		gemmShape(768, 384, 128, false, true), gemmShape(128, 768, 384, true, false),
		gemmShape(768, 512, 128, false, true), gemmShape(512, 768, 128, true, false),
		gemmShape(768, 65, 128, false, true), gemmShape(128, 768, 65, true, false),
		// Around the size where Gemm starts using several goroutines.
		gemmShape(256, 64, 256, false, true), gemmShape(300, 100, 300, false, false),
	)
	return &Kernel{
		Name:   "gemm",
		Doc:    "C = op(A)·op(B), row-major float32, beta = 0",
		Bound:  ComputeBound,
		Shapes: shapes,
		Short:  "sq128",
		has:    func(im *Impl) bool { return im.Gemm != nil },
		work:   gemmWork,
		setup:  func(s Shape, im *Impl) func() { return gemmSetup(s, im.Gemm) },
	}
}

// gemmWork is the work of C = op(A)·op(B) on s: 2·M·N·K operations, and
// A, B and C each moved once.
func gemmWork(s Shape) Work {
	m, n, k := float64(s.M), float64(s.N), float64(s.K)
	return Work{Flops: 2 * m * n * k, Bytes: 4 * (m*k + k*n + m*n)}
}

// gemmSetup returns a call of gemm, a product with Gemm's arguments, on
// random operands of shape s (stored as s's transposes say, each leading
// dimension its row's length), alpha 1 and beta 0.
func gemmSetup(s Shape, gemm GemmFunc) func() {
	ar, ac := s.M, s.K
	if s.TransA {
		ar, ac = ac, ar
	}
	br, bc := s.K, s.N
	if s.TransB {
		br, bc = bc, br
	}
	r := newRand(1)
	a, b, c := randSlice(r, ar*ac, 1), randSlice(r, br*bc, 1), make([]float32, s.M*s.N)
	return func() { gemm(s.TransA, s.TransB, s.M, s.N, s.K, 1, a, ac, b, bc, 0, c, s.N) }
}

// gemvShape returns the Gemv shape of an m×n A named "MxN", with "_T"
// appended when A is transposed (y = Aᵀ·x).
func gemvShape(m, n int, trans bool) Shape {
	name := fmt.Sprintf("%dx%d", m, n)
	if trans {
		name += "_T"
	}
	return Shape{Name: name, M: m, N: n, TransA: trans}
}

// gemvKernel is y = op(A)·x: A read once, so a memory-bound kernel, its
// rate the bytes of A over the time (ReadBound). The shapes: A in L2
// (512×512, 1 MiB), in L3 (2048×2048, 16 MiB), beyond it (8192×8192,
// 256 MiB) and GPT-2's tied embedding (50257×768, 147 MiB), whose
// products with a token's activations are the untransposed 50257×768
// (the logits) and the transposed 768×50257 layout of the same matrix.
func gemvKernel() *Kernel {
	var shapes []Shape
	for _, mn := range [][2]int{{512, 512}, {2048, 2048}, {8192, 8192}, {50257, 768}, {768, 50257}} {
		shapes = append(shapes, gemvShape(mn[0], mn[1], false), gemvShape(mn[0], mn[1], true))
	}
	return &Kernel{
		Name:      "gemv",
		Doc:       "y = op(A)·x, A M×N row-major float32, beta = 0; GB/s of A read",
		Bound:     MemoryBound,
		ReadBound: true,
		Shapes:    shapes,
		Short:     "512x512",
		has:       func(im *Impl) bool { return im.Gemv != nil },
		work: func(s Shape) Work {
			m, n := float64(s.M), float64(s.N)
			return Work{Flops: 2 * m * n, Bytes: 4 * m * n}
		},
		mem: func(s Shape) float64 { return 4 * (float64(s.M)*float64(s.N) + float64(s.M) + float64(s.N)) },
		setup: func(s Shape, im *Impl) func() {
			xl, yl := s.N, s.M
			if s.TransA {
				xl, yl = yl, xl
			}
			r := newRand(1)
			a, x, y := hugeRandSlice(r, s.M*s.N), randSlice(r, xl, 1), make([]float32, yl)
			gemv := im.Gemv
			return func() { gemv(s.TransA, s.M, s.N, 1, a, s.N, x, 0, y) }
		},
	}
}

// lowbitShapes are the shapes of the GEMV kernels over 16- and 8-bit
// weights: W N×K (one row per output) of GPT-2 124M's projections (in L2
// and L3 in bf16) and its tied LM head (beyond the L3 in both formats).
var lowbitShapes = []Shape{
	{Name: "768x768", M: 768, N: 768},
	{Name: "3072x768", M: 3072, N: 768},
	{Name: "50257x768", M: 50257, N: 768},
}

// lowbitMemory is Kernel.Memory of the low-bit GEMV kernels, whose
// weights take perWeight bytes (rows padded to whole groups): the float32
// matrix they are converted from, the weights twice (converted, then
// copied into huge pages: hugeCopy), x and y.
func lowbitMemory(perWeight float64) func(s Shape) float64 {
	return func(s Shape) float64 {
		m, n := float64(s.M), float64(s.N)
		k := float64(lowbit.Groups(s.N) * lowbit.GroupSize)
		return 4*m*n + 2*perWeight*m*k + 4*(m+n)
	}
}

// gemvBF16Kernel is y = W·x with W in bf16 (kernels/lowbit.BF16): W read
// once, GB/s of its bytes (2 a weight).
func gemvBF16Kernel() *Kernel {
	return &Kernel{
		Name:      "gemvbf16",
		Doc:       "y = W·x, W M×N bf16 (kernels/lowbit), x and y float32, beta = 0; GB/s of W read",
		Bound:     MemoryBound,
		ReadBound: true,
		Shapes:    lowbitShapes,
		Short:     "768x768",
		has:       func(im *Impl) bool { return im.GemmBF16 != nil },
		work: func(s Shape) Work {
			m, k := float64(s.M), float64(lowbit.Groups(s.N)*lowbit.GroupSize)
			return Work{Flops: 2 * m * float64(s.N), Bytes: 2 * m * k}
		},
		mem: lowbitMemory(2),
		setup: func(s Shape, im *Impl) func() {
			r := newRand(1)
			w := lowbit.BF16FromNK(randSlice(r, s.M*s.N, 1), s.M, s.N)
			w.Data = hugeCopy(w.Data)
			x, y := randSlice(r, s.N, 1), make([]float32, s.M)
			gemm := im.GemmBF16
			return func() { gemm(1, 1, x, s.N, w, 0, y, s.M) }
		},
	}
}

// gemvInt8Kernel is y = W·x with W in int8 with a float32 scale per
// group of 32 (kernels/lowbit.Int8): W read once, GB/s of its bytes
// (36 per 32 weights).
func gemvInt8Kernel() *Kernel {
	return &Kernel{
		Name:      "gemvint8",
		Doc:       "y = W·x, W M×N int8 with a scale per 32 (kernels/lowbit), x and y float32, beta = 0; GB/s of W read",
		Bound:     MemoryBound,
		ReadBound: true,
		Shapes:    lowbitShapes,
		Short:     "768x768",
		has:       func(im *Impl) bool { return im.GemmInt8 != nil },
		work: func(s Shape) Work {
			m, g := float64(s.M), float64(lowbit.Groups(s.N))
			return Work{Flops: 2 * m * float64(s.N), Bytes: m * g * float64(unsafe.Sizeof(lowbit.Int8Block{}))}
		},
		mem: lowbitMemory(float64(unsafe.Sizeof(lowbit.Int8Block{})) / lowbit.GroupSize),
		setup: func(s Shape, im *Impl) func() {
			r := newRand(1)
			w, err := lowbit.Int8FromNK(randSlice(r, s.M*s.N, 1), s.M, s.N)
			if err != nil {
				panic(err) // random finite weights always quantize
			}
			w.Blocks = hugeCopy(w.Blocks)
			x, y := randSlice(r, s.N, 1), make([]float32, s.M)
			gemm := im.GemmInt8
			return func() { gemm(1, 1, x, s.N, w, 0, y, s.M) }
		},
	}
}

// dequantInt8Kernel writes int8 weights (kernels/lowbit.Int8) out as
// float32, as prompt processing does before its products: GB/s of the
// weights read and the floats written (36 + 128 bytes per 32 weights).
func dequantInt8Kernel() *Kernel {
	return &Kernel{
		Name:   "dequantizeint8",
		Doc:    "D = W dequantized, W M×N int8 with a scale per 32 (kernels/lowbit), D float32; GB/s of W read and D written",
		Bound:  MemoryBound,
		Shapes: lowbitShapes,
		Short:  "768x768",
		has:    func(im *Impl) bool { return im.DequantizeInt8 != nil },
		work: func(s Shape) Work {
			m, g := float64(s.M), float64(lowbit.Groups(s.N))
			return Work{Bytes: m*g*float64(unsafe.Sizeof(lowbit.Int8Block{})) + 4*m*float64(s.N)}
		},
		mem: lowbitMemory(float64(unsafe.Sizeof(lowbit.Int8Block{}))/lowbit.GroupSize + 4),
		setup: func(s Shape, im *Impl) func() {
			r := newRand(1)
			w, err := lowbit.Int8FromNK(randSlice(r, s.M*s.N, 1), s.M, s.N)
			if err != nil {
				panic(err) // random finite weights always quantize
			}
			d := make([]float32, s.M*s.N)
			f := im.DequantizeInt8
			return func() { f(w, 0, s.M, d, s.N) }
		},
	}
}

func scoresKernel() *Kernel {
	var shapes []Shape
	for _, td := range [][2]int{{64, 32}, {64, 64}, {64, 128}, {128, 64}, {256, 32}, {256, 64}, {256, 128}, {512, 64}, {1024, 32}, {1024, 64}, {1024, 128}} {
		t, d := td[0], td[1]
		shapes = append(shapes, Shape{Name: fmt.Sprintf("T=%d,d=%d", t, d), M: t, N: t, K: d})
	}
	return &Kernel{
		Name:   "maskedscores",
		Doc:    "S = Q·Kᵀ/√d with the causal mask, one head of T queries and keys",
		Bound:  ComputeBound,
		Shapes: shapes,
		Short:  "T=256,d=64",
		has:    func(im *Impl) bool { return im.MaskedScores != nil },
		work: func(s Shape) Work {
			t, d := float64(s.M), float64(s.K)
			// T(T+1)/2 unmasked scores, each a dot product of d terms.
			return Work{Flops: t * (t + 1) * d, Bytes: 4 * (2*t*d + t*t)}
		},
		setup: func(s Shape, im *Impl) func() {
			t, d := s.M, s.K
			r := newRand(1)
			q, k, sc := randSlice(r, t*d, 1), randSlice(r, t*d, 1), make([]float32, t*t)
			scale := float32(1 / math.Sqrt(float64(d)))
			f := im.MaskedScores
			return func() { f(t, t, d, scale, q, d, k, d, 0, sc, t) }
		},
	}
}

// softmaxElems is the number of elements of a softmax benchmark matrix:
// 256 KiB of input and as much output, which stay in L2 across calls, as
// an attention head's scores do between the kernels that write and read
// them. The ",stream" shape is 64 times larger, so every call streams it
// from memory: it measures bandwidth.
const softmaxElems = 1 << 16

func softmaxShapes(inplace, stream bool) []Shape {
	var shapes []Shape
	for n := 64; n <= 65536; n *= 4 {
		shapes = append(shapes, Shape{Name: fmt.Sprintf("n=%d", n), M: max(1, softmaxElems/n), N: n})
	}
	if inplace {
		for _, n := range []int{256, 1024, 4096} {
			shapes = append(shapes, Shape{Name: fmt.Sprintf("n=%d,inplace", n), M: softmaxElems / n, N: n, InPlace: true})
		}
	}
	if stream {
		shapes = append(shapes, Shape{Name: "n=4096,stream", M: 64 * softmaxElems / 4096, N: 4096})
	}
	return shapes
}

// softmaxInput returns m×n scores uniform in [-10, 10).
func softmaxInput(m, n int) []float32 { return randSlice(newRand(8), m*n, 10) }

func softmaxKernel() *Kernel {
	return &Kernel{
		Name:   "softmax",
		Doc:    "row-wise softmax of an M×N matrix (inputs uniform in [-10, 10))",
		Bound:  MemoryBound,
		Shapes: softmaxShapes(true, true),
		Short:  "n=1024",
		has:    func(im *Impl) bool { return im.Softmax != nil },
		work: func(s Shape) Work {
			e := float64(s.M) * float64(s.N)
			// max, exp and sum, scale: about 4 operations and one exp per
			// element; exp is counted as one.
			return Work{Flops: 5 * e, Bytes: 8 * e}
		},
		setup: func(s Shape, im *Impl) func() {
			x := softmaxInput(s.M, s.N)
			y := x
			if !s.InPlace {
				y = make([]float32, len(x))
			}
			// In place, the softmax of a softmax output is still a typical row.
			f := im.Softmax
			return func() { f(s.M, s.N, x, s.N, y, s.N) }
		},
	}
}

func softmaxBackwardKernel() *Kernel {
	return &Kernel{
		Name:   "softmaxbackward",
		Doc:    "dx = y·(dy − Σ y·dy) row-wise, M×N",
		Bound:  MemoryBound,
		Shapes: softmaxShapes(false, false),
		Short:  "n=1024",
		has:    func(im *Impl) bool { return im.SoftmaxBackward != nil },
		work: func(s Shape) Work {
			e := float64(s.M) * float64(s.N)
			return Work{Flops: 4 * e, Bytes: 12 * e}
		},
		setup: func(s Shape, im *Impl) func() {
			x := softmaxInput(s.M, s.N)
			y := make([]float32, len(x))
			softmaxRef(s.M, s.N, x, y)
			dy := randSlice(newRand(9), len(x), 1)
			dx := make([]float32, len(x))
			f := im.SoftmaxBackward
			return func() { f(s.M, s.N, y, s.N, dy, s.N, dx, s.N) }
		},
	}
}

// biasGeluKernel is the fused bias + GELU of a transformer's MLP: rows of
// width N = 4·768 (GPT-2 small) and 4·64 (the small GPT of cmd/tinygpt).
func biasGeluKernel() *Kernel {
	var shapes []Shape
	for _, n := range []int{256, 3072} {
		shapes = append(shapes, Shape{Name: fmt.Sprintf("n=%d", n), M: softmaxElems / n, N: n})
	}
	return &Kernel{
		Name:   "biasgelu",
		Doc:    "x[i,j] += bias[j]; y[i,j] = gelu(x[i,j]), M×N (bias 0, so x stays the same)",
		Bound:  MemoryBound,
		Shapes: shapes,
		Short:  "n=3072",
		has:    func(im *Impl) bool { return im.BiasGELU != nil },
		work: func(s Shape) Work {
			e := float64(s.M) * float64(s.N)
			return Work{Flops: 21 * e, Bytes: 12 * e}
		},
		setup: func(s Shape, im *Impl) func() {
			x := randSlice(newRand(10), s.M*s.N, 3)
			y := make([]float32, len(x))
			bias := make([]float32, s.N)
			f := im.BiasGELU
			return func() { f(s.M, s.N, x, s.N, bias, y, s.N) }
		},
	}
}

// gemmBiasGeluKernel is the first layer of a transformer's MLP, a GEMM
// with its bias and GELU fused in as an epilogue, on the training shapes
// (M×K×N: tokens × width × 4·width) of the small GPT of cmd/tinygpt (768
// tokens of width 128) and of a width-384 model over 2048 tokens.
func gemmBiasGeluKernel() *Kernel {
	return &Kernel{
		Name:   "gemmbiasgelu",
		Doc:    "pre = A·B + bias (every row); out = gelu(pre), row-major float32",
		Bound:  ComputeBound,
		Shapes: []Shape{gemmShape(768, 128, 512, false, false), gemmShape(2048, 384, 1536, false, false)},
		Short:  "768x128x512",
		has:    func(im *Impl) bool { return im.GemmBiasGELU != nil },
		work: func(s Shape) Work {
			m, n, k := float64(s.M), float64(s.N), float64(s.K)
			// The GEMM, then the bias and GELU as counted by biasgelu;
			// A, B and bias read, pre and out written.
			return Work{Flops: 2*m*n*k + 21*m*n, Bytes: 4 * (m*k + k*n + n + 2*m*n)}
		},
		setup: func(s Shape, im *Impl) func() {
			r := newRand(11)
			a, b := randSlice(r, s.M*s.K, 1), randSlice(r, s.K*s.N, 1)
			bias := randSlice(r, s.N, 1)
			pre, out := make([]float32, s.M*s.N), make([]float32, s.M*s.N)
			f := im.GemmBiasGELU
			return func() { f(false, false, s.M, s.N, s.K, a, s.K, b, s.N, bias, pre, s.N, out, s.N) }
		},
	}
}

// gemmBiasKernel is a transformer's projections with their biases added
// as the GEMM's epilogue, on the training shapes of a width-384 model
// over 2048 tokens: the attention's QKV projection (tokens × width ×
// 3·width) and its output projection (tokens × width × width).
func gemmBiasKernel() *Kernel {
	return &Kernel{
		Name:   "gemmbias",
		Doc:    "c = A·B + bias (every row), row-major float32",
		Bound:  ComputeBound,
		Shapes: []Shape{gemmShape(768, 128, 512, false, false), gemmShape(2048, 384, 1152, false, false), gemmShape(2048, 384, 384, false, false)},
		Short:  "768x128x512", // small enough for generic (genericMaxFlops)
		has:    func(im *Impl) bool { return im.GemmBias != nil },
		work: func(s Shape) Work {
			m, n, k := float64(s.M), float64(s.N), float64(s.K)
			// A, B and bias read, C written.
			return Work{Flops: 2*m*n*k + m*n, Bytes: 4 * (m*k + k*n + n + m*n)}
		},
		setup: func(s Shape, im *Impl) func() {
			r := newRand(12)
			a, b := randSlice(r, s.M*s.K, 1), randSlice(r, s.K*s.N, 1)
			bias := randSlice(r, s.N, 1)
			c := make([]float32, s.M*s.N)
			f := im.GemmBias
			return func() { f(false, false, s.M, s.N, s.K, a, s.K, b, s.N, bias, c, s.N) }
		},
	}
}

// softmaxRef writes the row-wise softmax of x into y in float64.
func softmaxRef(m, n int, x, y []float32) {
	for i := range m {
		row := x[i*n : i*n+n]
		mx := math.Inf(-1)
		for _, v := range row {
			mx = math.Max(mx, float64(v))
		}
		sum := 0.0
		for _, v := range row {
			sum += math.Exp(float64(v) - mx)
		}
		for j, v := range row {
			y[i*n+j] = float32(math.Exp(float64(v)-mx) / sum)
		}
	}
}

func crossEntropyKernel() *Kernel {
	return &Kernel{
		Name:   "crossentropy",
		Doc:    "SoftmaxCrossEntropy: M rows of N logits (uniform in [-10, 10)) to losses and gradients",
		Bound:  MemoryBound,
		Shapes: softmaxShapes(true, true),
		Short:  "n=1024",
		has:    func(im *Impl) bool { return im.SoftmaxCrossEntropy != nil },
		work: func(s Shape) Work {
			e := float64(s.M) * float64(s.N)
			// As softmax: max, exp and sum, scale.
			return Work{Flops: 5 * e, Bytes: 8 * e}
		},
		setup: func(s Shape, im *Impl) func() {
			x := softmaxInput(s.M, s.N)
			targets := make([]int32, s.M)
			r := newRand(10)
			for i := range targets {
				targets[i] = int32(r.IntN(s.N))
			}
			losses := make([]float32, s.M)
			dl := make([]float32, len(x))
			if s.InPlace {
				// In place, the logits become gradients: every call then
				// takes the gradient of a typical (small) row.
				dl = x
			}
			f, scale := im.SoftmaxCrossEntropy, 1/float32(s.M)
			return func() { f(s.M, s.N, x, s.N, targets, scale, dl, s.N, losses) }
		},
	}
}

func adamwKernel() *Kernel {
	var shapes []Shape
	for _, n := range vecSizes {
		shapes = append(shapes, Shape{Name: fmt.Sprintf("n=%d", n), N: n})
	}
	return &Kernel{
		Name:   "adamw",
		Doc:    "one AdamW step over N parameters, gradients and moments",
		Bound:  MemoryBound,
		Shapes: shapes,
		Short:  "n=4096",
		has:    func(im *Impl) bool { return im.AdamW != nil },
		work: func(s Shape) Work {
			// 15 multiplications and additions, a square root and a
			// division; reads p, g, m, v, writes p, m, v.
			return Work{Flops: 17 * float64(s.N), Bytes: 28 * float64(s.N)}
		},
		mem: func(s Shape) float64 { return 16 * float64(s.N) }, // p, g, m and v
		setup: func(s Shape, im *Impl) func() {
			r := newRand(3)
			p, g := randSlice(r, s.N, 1), randSlice(r, s.N, 1)
			m, v := make([]float32, s.N), make([]float32, s.N)
			// A tiny learning rate keeps p bounded however many calls run.
			h := kernels.AdamWParams{LR: 1e-9, Beta1: 0.9, Beta2: 0.95, Eps: 1e-8, WeightDecay: 0.1,
				GradScale: 1, InvBiasCorr1: 1, InvBiasCorr2: 1}
			f := im.AdamW
			return func() { f(p, g, m, v, h) }
		},
	}
}

// vecSizes are the vector lengths: L1-resident (256 and 4096 floats),
// L2 (65536 floats = 256 KiB a vector) and memory (1<<24 floats = 64 MiB
// a vector, twice the largest L3 of the machines this runs on).
var vecSizes = []int{256, 4096, 65536, 1 << 24}

// vecSink keeps the reductions' results alive.
var vecSink float32

// vecKernel returns a vector kernel doing flopsPerElem operations and
// moving bytesPerElem bytes (read plus written) per element; op(im)
// returns the call on vectors x, y and d, or nil when im lacks it.
func vecKernel(name, doc string, flopsPerElem, bytesPerElem float64, op func(im *Impl) func(x, y, d []float32) float32) *Kernel {
	var shapes []Shape
	for _, n := range vecSizes {
		shapes = append(shapes, Shape{Name: fmt.Sprintf("n=%d", n), N: n})
	}
	return &Kernel{
		Name:   name,
		Doc:    doc + ", vectors of length N",
		Bound:  MemoryBound,
		Shapes: shapes,
		Short:  "n=4096",
		has:    func(im *Impl) bool { return op(im) != nil },
		work: func(s Shape) Work {
			return Work{Flops: flopsPerElem * float64(s.N), Bytes: bytesPerElem * float64(s.N)}
		},
		mem: func(s Shape) float64 { return 12 * float64(s.N) }, // x, y and d
		setup: func(s Shape, im *Impl) func() {
			f := op(im)
			r := newRand(2)
			x, y, d := randSlice(r, s.N, 1), randSlice(r, s.N, 1), make([]float32, s.N)
			return func() { vecSink += f(x, y, d) }
		},
	}
}

// newRand returns a deterministic generator.
func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

// hugeRandSlice is randSlice(r, n, 1) in memory advised to be backed by
// huge pages, as the read-bound kernels' large operand is (their bound,
// ReadRate, reads such a buffer; package gpt's weights are in them too).
func hugeRandSlice(r *rand.Rand, n int) []float32 {
	s := hugeSlice[float32](n)
	fillRand(r, s, 1)
	return s
}

// hugeCopy returns a copy of s in memory advised to be backed by huge
// pages.
func hugeCopy[T any](s []T) []T {
	c := hugeSlice[T](len(s))
	copy(c, s)
	return c
}

// randSlice returns n values uniform in [-scale, scale).
func randSlice(r *rand.Rand, n int, scale float32) []float32 {
	s := make([]float32, n)
	fillRand(r, s, scale)
	return s
}

// fillRand sets every element of s uniform in [-scale, scale).
func fillRand(r *rand.Rand, s []float32, scale float32) {
	for i := range s {
		s[i] = (r.Float32()*2 - 1) * scale
	}
}

// Select returns the cases of kernels named in kernelNames (all when
// empty) and shapes named in shapeNames (all when empty; each kernel's
// Short shape when short is true). It returns an error naming the valid
// names when a name matches nothing.
func Select(all []*Kernel, kernelNames, shapeNames []string, short bool) ([]Case, error) {
	ks := all
	if len(kernelNames) > 0 {
		ks = nil
		for _, name := range kernelNames {
			k := findKernel(all, name)
			if k == nil {
				return nil, fmt.Errorf("unknown kernel %q; valid kernels: %s", name, strings.Join(KernelNames(all), ", "))
			}
			ks = append(ks, k)
		}
	}
	var cases []Case
	used := map[string]bool{}
	for _, k := range ks {
		for _, s := range k.Shapes {
			switch {
			case len(shapeNames) > 0:
				if !contains(shapeNames, s.Name) {
					continue
				}
				used[s.Name] = true
			case short && s.Name != k.Short:
				continue
			}
			cases = append(cases, Case{k, s})
		}
	}
	for _, name := range shapeNames {
		if !used[name] {
			var valid []string
			seen := map[string]bool{}
			for _, k := range ks {
				for _, s := range k.Shapes {
					if !seen[s.Name] {
						seen[s.Name] = true
						valid = append(valid, s.Name)
					}
				}
			}
			return nil, fmt.Errorf("unknown shape %q for kernels %s; valid shapes: %s", name, strings.Join(KernelNames(ks), ","), strings.Join(valid, ", "))
		}
	}
	return cases, nil
}

// SelectImpls returns the impls named in names (all when empty), or an
// error naming the valid names.
func SelectImpls(all []*Impl, names []string) ([]*Impl, error) {
	if len(names) == 0 {
		return all, nil
	}
	var out []*Impl
	for _, name := range names {
		var found *Impl
		for _, im := range all {
			if im.Name == name {
				found = im
			}
		}
		if found == nil {
			valid := make([]string, len(all))
			for i, im := range all {
				valid[i] = im.Name
			}
			return nil, fmt.Errorf("unknown implementation %q; valid implementations: %s", name, strings.Join(valid, ", "))
		}
		out = append(out, found)
	}
	return out, nil
}

func findKernel(ks []*Kernel, name string) *Kernel {
	for _, k := range ks {
		if k.Name == name {
			return k
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// gemmBF16Kernel is GemmBF16Compute on the squares and TinyGPT's
// training shapes at batch 8 × 256 tokens, width 384 (QKV and MLP
// projections), its percent of peak that of the bfloat16 peak loop; the
// short shape, 128³, is one every implementation runs (generic included).
func gemmBF16Kernel() *Kernel {
	shapes := []Shape{square(128), square(512), square(1024), square(2048),
		gemmShape(2048, 384, 1152, false, false), gemmShape(2048, 384, 1536, false, false), gemmShape(2048, 1536, 384, false, false),
		gemmShape(2048, 384, 1152, false, true), gemmShape(384, 2048, 1152, true, false)}
	return &Kernel{
		Name:     "gemmbf16compute",
		Doc:      "C = op(A)·op(B), A and B rounded to bfloat16, float32 sums, beta = 0",
		Bound:    ComputeBound,
		PeakBF16: true,
		Shapes:   shapes,
		Short:    "sq128",
		has:      func(im *Impl) bool { return im.GemmBF16Compute != nil },
		work:     gemmWork,
		setup:    func(s Shape, im *Impl) func() { return gemmSetup(s, im.GemmBF16Compute) },
	}
}
