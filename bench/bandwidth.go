package bench

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/simdgpt/simdgpt/internal/hugepage"
	"github.com/simdgpt/simdgpt/kernels"
)

// The copy kernel measures memory bandwidth: Go's built-in copy of one
// buffer into another, in cache and streaming from memory. Decoding a
// token reads every weight once, so its time is bounded below by the
// bytes of the weights over the streaming copy's rate (counting what it
// reads only: half the bytes copy moves).

// copyCacheBytes is the size of the in-cache copy: source and
// destination together take 2 MiB, within the L2 or L3 of the machines
// this runs on.
const copyCacheBytes = 1 << 20

// streamBytes returns the size of each buffer of the streaming copy for
// an L3 of l3 bytes (0: unknown): four times the L3, so that neither
// buffer stays in it between calls, at least 64 MiB and rounded up to a
// MiB; 256 MiB when the L3 is unknown.
func streamBytes(l3 int) int {
	if l3 <= 0 {
		return 256 << 20
	}
	const mib = 1 << 20
	return max(64<<20, (4*l3+mib-1)/mib*mib)
}

// memmove is the Impl of the copy kernel; copyKernel runs it only.
var memmove = &Impl{
	Name:  "memmove",
	About: "Go's built-in copy (runtime.memmove): the memory bandwidth any kernel streaming its operands is bound by",
	Peer:  true,
}

// Memmove returns the one Impl that runs the copy kernel, "memmove":
// Go's built-in copy, which the runtime implements with the widest
// loads and stores of the CPU (and non-temporal stores for large
// copies). It provides no other kernel. Callers must not modify it.
func Memmove() *Impl { return memmove }

// copyKernel returns the kernel "copy": dst = src with Go's copy on
// buffers of N bytes, the 1 MiB shape in cache and the "stream" one from
// memory (see streamBytes). It counts the bytes read and written, 2N a
// call, not the reads of the destination's lines that a CPU without
// non-temporal stores makes before writing them.
func copyKernel() *Kernel {
	l3 := kernels.CPU().L3
	stream, l3s := streamBytes(l3), "unknown"
	if l3 > 0 {
		l3s = fmt.Sprintf("%.3g MiB", float64(l3)/(1<<20))
	}
	return &Kernel{
		Name: "copy",
		Doc: fmt.Sprintf("dst = src (Go's copy) of N bytes: 1MiB in cache; stream: %d MiB a buffer from memory (≥ 4× the L3, %s)",
			stream>>20, l3s),
		Bound: MemoryBound,
		Shapes: []Shape{
			{Name: "1MiB", N: copyCacheBytes},
			{Name: "stream", N: stream},
		},
		Short: "1MiB",
		has:   func(im *Impl) bool { return im == memmove },
		work:  func(s Shape) Work { return Work{Bytes: 2 * float64(s.N)} },
		mem:   func(s Shape) float64 { return 2 * float64(s.N) },
		setup: func(s Shape, _ *Impl) func() {
			src, dst := make([]byte, s.N), make([]byte, s.N)
			for i := range src {
				src[i] = byte(i * 7) // touch every page, not only map it
			}
			return func() { copy(dst, src) }
		},
	}
}

// ReadBufferBytes is the size of the buffer ReadBuffer returns.
func ReadBufferBytes() int { return streamBytes(kernels.CPU().L3) }

// ReadBuffer returns a buffer for ReadRate: float32s filling streamBytes
// of the L3 (four L3s, at least 64 MiB), every page written.
func ReadBuffer() []float32 { return ReadBufferOf(ReadBufferBytes()) }

// ReadBufferOf returns a buffer of bytes/4 float32s for ReadRate, every
// page written, backed by huge pages where the system gives them, as
// package gpt's weights and the read-bound cases' operands are (see
// hugeSlice): the bound must be read from pages of the same size as the
// operands it bounds.
func ReadBufferOf(bytes int) []float32 {
	x := hugeSlice[float32](bytes / 4)
	for i := range x {
		x[i] = float32(i & 7)
	}
	return x
}

// hugeSlice returns n zero values whose memory is advised to be backed by
// huge pages (internal/hugepage) before any page is touched.
func hugeSlice[T any](n int) []T {
	x := make([]T, n)
	hugepage.Advise(x)
	return x
}

// readStreams are the numbers of streams ReadRate tries with
// ReadStreamsLoop: one, and as many as the one-row products read at once.
var readStreams = []int{1, 2, 4, 8}

// ReadRateHow says in a few words how ReadRate reads, for the lines that
// print its rates.
func ReadRateHow() string {
	ns := make([]string, len(readStreams))
	for i, s := range readStreams {
		ns[i] = strconv.Itoa(s)
	}
	return "the fastest of Sum, ReadPeakLoop and ReadStreamsLoop of " + strings.Join(ns, ", ") + " streams"
}

// ReadRate measures the streaming read bandwidth in bytes per second,
// the read-bound kernels' yardstick: x (beyond the L3: see ReadBuffer) is
// split into threads equal parts read at once by as many goroutines, with
// each of p's read patterns in turn (Sum; ReadPeakLoop, every line
// prefetched ahead; ReadStreamsLoop of each of readStreams), and the
// fastest rate is returned: which pattern a core reads fastest depends on
// the CPU. It panics if threads < 1 or x has fewer than threads elements.
func ReadRate(p *kernels.Impl, x []float32, threads int) float64 {
	if threads < 1 || len(x) < threads {
		panic(fmt.Sprintf("bench.ReadRate: threads = %d with %d elements", threads, len(x)))
	}
	part := len(x) / threads
	rate := func(read func([]float32) int) float64 {
		var wg sync.WaitGroup
		bytes := make([]int, threads)
		t0 := time.Now()
		for t := range threads {
			wg.Add(1)
			go func() {
				defer wg.Done()
				bytes[t] = read(x[t*part : (t+1)*part])
			}()
		}
		wg.Wait()
		el := time.Since(t0)
		total := 0
		for _, b := range bytes {
			total += b
		}
		return float64(total) / el.Seconds()
	}
	best := max(rate(func(x []float32) int { p.Sum(x); return 4 * len(x) }), rate(p.ReadPeakLoop))
	for _, s := range readStreams {
		best = max(best, rate(func(x []float32) int { return p.ReadStreamsLoop(x, s) }))
	}
	return best
}
