package kernels

import (
	"fmt"
	"math"
	"strings"
	"sync/atomic"

	"github.com/simdgpt/simdgpt/kernels/internal/kernelset"
)

// Impl is one implementation of every kernel, such as "generic" or
// "avx512". Its methods check their arguments exactly as the package-level
// functions do; the package-level functions call the methods of Default.
// An *Impl is safe for concurrent use.
//
// The methods are defined one kernel family per file (gemm.go, softmax.go,
// scores.go, vecops.go); each checks its arguments (check.go) and calls
// the implementation's kernel set (kernels/internal/kernelset), the one
// list of what an implementation provides.
type Impl struct {
	// set is a copy of the registered set, held by value so that a
	// kernel call loads its function straight from the Impl (one
	// dependent load less per call than through a pointer: measurable
	// on 20 ns vector operations).
	set kernelset.Set
}

// Name returns the implementation's name: "generic", "avx2", "avx512" or
// "neon". It is the value SIMDGPT_ISA accepts.
func (p *Impl) Name() string { return p.set.Name }

// Tile returns the shape of the tile of the implementation's GEMM
// micro-kernels, rows×columns of C such as "14x32": the one chosen for
// this CPU's microarchitecture, or the one a variant's name gives. It is
// empty for generic, which has none.
func (p *Impl) Tile() string { return p.set.Instruments.Tile }

// TileVariants returns the implementation on each GEMM tile shape it has,
// named "IMPL/TILE" ("avx512/14x32", "avx512/8x48"): the same kernels but
// for the GEMM family (Gemm, Gemv, MaskedScores, GemmBiasGELU, GemmBias),
// which runs on that tile's micro-kernels, blocked for it. It is nil for
// an implementation without micro-kernels. Lookup and SIMDGPT_ISA accept
// the variants' names, so that the tiles can be compared side by side
// (kernelbench does), and a program can be run on another tile than the
// one chosen for its CPU.
func (p *Impl) TileVariants() []*Impl {
	base, _, _ := strings.Cut(p.set.Name, "/")
	var out []*Impl
	for _, t := range p.set.Instruments.Tiles {
		out = append(out, variants[base+"/"+t])
	}
	return out
}

// Requires names the CPU features the implementation needs, such as
// "AVX2, FMA"; it is empty for generic.
func (p *Impl) Requires() string { return p.set.Requires }

// FMAPeakLoop runs iters iterations of a generated loop of independent
// FMAs in this implementation's widest registers and returns the number of
// floating-point operations it performed (0 for generic, which has none).
// Timing it gives the CPU's peak float32 FMA rate for this instruction set,
// the yardstick for every GEMM figure. It panics if that number of
// operations does not fit in an int.
func (p *Impl) FMAPeakLoop(iters int) (flops int) {
	in := &p.set.Instruments
	if in.FMALoop == nil || iters <= 0 {
		return 0
	}
	if iters > math.MaxInt/in.FMAFlops {
		panic(fmt.Sprintf("kernels.Impl.FMAPeakLoop: iters = %d times %d operations per iteration overflows int (%s: at most %d iterations)", iters, in.FMAFlops, p.set.Name, math.MaxInt/in.FMAFlops))
	}
	in.FMALoop(iters)
	return iters * in.FMAFlops
}

// ReadPeakLoop reads x and returns the number of bytes it read, for
// measuring the CPU's read bandwidth from memory when x is beyond the
// caches: on sets with a read loop (avx2, avx512), in order with every
// cache line prefetched readAhead bytes before it is read (the elements
// after the last whole block of 1 KiB are not read); elsewhere with Sum.
// Time it beside Sum and take the faster: which read pattern a core runs
// fastest depends on the CPU.
func (p *Impl) ReadPeakLoop(x []float32) (bytes int) {
	if s := &p.set.Instruments; s.ReadLoop != nil {
		// The prefetches of the last blocks run past the end of x, which
		// PREFETCHT0 allows (it never faults).
		if n := len(x) / s.ReadBlock * s.ReadBlock; n > 0 {
			readSink = s.ReadLoop(&x[0], n, readAhead)
			return 4 * n
		}
	}
	readSink = p.Sum(x)
	return 4 * len(x)
}

// ReadStreamsLoop reads x as streams equal runs, front to back, and
// returns the number of bytes it read, for measuring the read bandwidth
// of a core that reads several streams at once (as the one-row products
// read rows of a matrix) when x is beyond the caches: on sets with a
// streams loop (avx2, avx512), a block of each run in turn with no
// software prefetch (the elements after the runs' last whole blocks are
// not read); elsewhere, and when x holds less than one block a stream,
// the whole of x with Sum. It panics if streams < 1.
func (p *Impl) ReadStreamsLoop(x []float32, streams int) (bytes int) {
	if streams < 1 {
		panic(fmt.Sprintf("kernels.Impl.ReadStreamsLoop: streams = %d, want at least 1 (%s)", streams, p.set.Name))
	}
	if s := &p.set.Instruments; s.StreamsLoop != nil {
		if run := len(x) / streams / s.StreamsBlock * s.StreamsBlock; run > 0 {
			readSink = s.StreamsLoop(&x[0], run, streams, run)
			return 4 * run * streams
		}
	}
	readSink = p.Sum(x)
	return 4 * len(x)
}

// readAhead is ReadPeakLoop's prefetch distance in bytes.
const readAhead = 8192

// readSink keeps ReadPeakLoop's sums.
var readSink float32

// String returns the name.
func (p *Impl) String() string { return p.set.Name }

// current is the implementation behind the package-level functions.
var current atomic.Pointer[Impl]

// Default returns the implementation the package-level functions use.
func Default() *Impl { return current.Load() }
