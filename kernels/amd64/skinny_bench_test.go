//go:build amd64 && !purego

package amd64

import (
	"fmt"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	weights "github.com/simdgpt/simdgpt/kernels/lowbit"

	"github.com/simdgpt/simdgpt/kernels/internal/gemm"
)

// BenchmarkSmallM compares the two paths of Gemm for m rows of op(A) at
// the shapes of GPT-2's linear layers and its tied output projection:
// the skinny kernels (path=skinny) and the blocked GEMM (path=blocked).
// Run with -count N: each round runs every case once, so the paths are
// interleaved. PERF.md ("Small-M products") has the figures behind
// SmallM's rule.
func BenchmarkSmallM(b *testing.B) {
	shapes := []struct {
		k, n   int
		transB bool
	}{{768, 2304, false}, {768, 768, false}, {768, 3072, false}, {3072, 768, false}, {768, 50257, true}}
	for _, set := range []struct {
		name string
		g    *gemm.Driver
		ok   bool
	}{{"avx512", gemmAVX512, hasAVX512}, {"avx2", gemmAVX2, hasAVX2}} {
		if !set.ok {
			continue
		}
		for _, sh := range shapes {
			bsz := sh.k * sh.n
			bm := make([]float32, bsz)
			ldb := sh.n
			if sh.transB {
				ldb = sh.k
			}
			for _, m := range []int{1, 2, 4, 8, 12, 16} {
				a := make([]float32, m*sh.k)
				c := make([]float32, m*sh.n)
				for _, path := range []string{"skinny", "blocked"} {
					b.Run(fmt.Sprintf("%s/%dx%d/t=%v/m=%d/%s", set.name, sh.k, sh.n, sh.transB, m, path), func(b *testing.B) {
						max := 0
						if path == "skinny" {
							max = 16
						}
						rule := [2]int{4, 16}
						if r, ok := smallM[set.name]; ok {
							rule = r
						}
						set.g.SetSmallM(max, max)
						set.g.SetSmallMGap(max > 0)
						defer set.g.SetSmallMGap(false)
						defer set.g.SetSmallM(rule[0], rule[1])
						b.SetBytes(int64(4 * bsz))
						for i := 0; i < b.N; i++ {
							set.g.Gemm(false, sh.transB, m, sh.n, sh.k, 1, a, sh.k, bm, ldb, 0, c, sh.n)
						}
					})
				}
			}
		}
	}
}

// BenchmarkGemvStream compares the two readings of b in a transposed Gemv
// (y = Aᵀx, A m×n): axpys (column blocks of C in registers) and stream
// (A row by row, sums in a scratch of cols columns), for SetStream's rule.
// The bytes are A's.
func BenchmarkGemvStream(b *testing.B) {
	for _, set := range []struct {
		name string
		g    *gemm.Driver
		ok   bool
	}{{"avx512", gemmAVX512, hasAVX512}, {"avx2", gemmAVX2, hasAVX2}} {
		if !set.ok {
			continue
		}
		for _, sh := range [][2]int{{256, 256}, {512, 512}, {1024, 1024}, {2048, 2048}, {8192, 8192}, {50257, 768}, {768, 50257}} {
			m, n := sh[0], sh[1]
			a := make([]float32, m*n)
			for i := range a {
				a[i] = float32(i%7) - 3 // touched, not the shared zero page
			}
			x := make([]float32, m)
			y := make([]float32, n)
			for _, cols := range []int{0, 1024, 2048, 4096, 8192, 16384} {
				name := "axpys"
				if cols > 0 {
					name = fmt.Sprintf("stream%d", cols)
				}
				b.Run(fmt.Sprintf("%s/%dx%d/%s", set.name, m, n, name), func(b *testing.B) {
					if cols == 0 {
						set.g.SetStream(1<<62, 1)
					} else {
						set.g.SetStream(0, cols)
					}
					defer set.g.SetStream(1<<18, 4096)
					b.SetBytes(int64(4 * m * n))
					for i := 0; i < b.N; i++ {
						set.g.Gemv(true, m, n, 1, a, n, x, 0, y)
					}
				})
			}
		}
	}
}

// BenchmarkSmallMDecode compares the paths of Gemm for m rows of op(A)
// as decoding several sequences at once meets them: the four matrices of
// each of 12 GPT-2 small blocks (768×2304, 768×768, 768×3072, 3072×768,
// B k×n, 340 MB, far beyond the caches) in turn, each read from memory,
// and the tied output projection (768×50257, B n×k). Paths: the skinny
// kernels with the stream kernels for large B (skinny), the skinny axpys
// kernels only (axpys), and the blocked GEMM (blocked). The bytes are
// B's; cpu-ms/op is the thread's CPU time (steadier than the wall clock
// on a loaded machine; run with -cpu 1). Run with -count N for
// interleaved rounds.
func BenchmarkSmallMDecode(b *testing.B) {
	type shape struct {
		k, n   int
		transB bool
	}
	blocks := []shape{{768, 2304, false}, {768, 768, false}, {768, 3072, false}, {3072, 768, false}}
	var mats [][]float32
	bytes := 0
	for range 12 {
		for _, sh := range blocks {
			m := make([]float32, sh.k*sh.n)
			for i := range m {
				m[i] = float32(i%7) - 3 // touched, not the shared zero page
			}
			mats = append(mats, m)
			bytes += 4 * len(m)
		}
	}
	head := make([]float32, 768*50257)
	for i := range head {
		head[i] = float32(i%5) - 2
	}
	for _, set := range []struct {
		name string
		g    *gemm.Driver
		ok   bool
	}{{"avx512", gemmAVX512, hasAVX512}, {"avx2", gemmAVX2, hasAVX2}} {
		if !set.ok {
			continue
		}
		for _, m := range []int{1, 4, 6, 8} {
			a := make([]float32, m*3072)
			c := make([]float32, m*50257)
			for _, path := range []string{"skinny", "axpys", "blocked"} {
				rule := [2]int{4, 16}
				if r, ok := smallM[set.name]; ok {
					rule = r
				}
				setPath := func() {
					switch path {
					case "blocked":
						set.g.SetSmallM(0, 0)
					case "axpys":
						set.g.SetSmallM(16, 16)
						set.g.SetSmallMGap(true)
						set.g.SetStream(1<<62, 1)
					default:
						set.g.SetSmallM(16, 16)
						set.g.SetSmallMGap(true)
					}
				}
				reset := func() {
					set.g.SetSmallM(rule[0], rule[1])
					set.g.SetSmallMGap(false)
					set.g.SetStream(1<<18, 4096)
				}
				b.Run(fmt.Sprintf("%s/blocks/m=%d/%s", set.name, m, path), func(b *testing.B) {
					setPath()
					defer reset()
					b.SetBytes(int64(bytes))
					defer reportThreadCPU(b)()
					for i := 0; i < b.N; i++ {
						q := 0
						for range 12 {
							for _, sh := range blocks {
								set.g.Gemm(false, false, m, sh.n, sh.k, 1, a, sh.k, mats[q], sh.n, 0, c, sh.n)
								q++
							}
						}
					}
				})
				if path == "axpys" {
					continue
				}
				b.Run(fmt.Sprintf("%s/head/m=%d/%s", set.name, m, path), func(b *testing.B) {
					setPath()
					defer reset()
					b.SetBytes(int64(4 * len(head)))
					defer reportThreadCPU(b)()
					for i := 0; i < b.N; i++ {
						set.g.Gemm(false, true, m, 50257, 768, 1, a, 768, head, 768, 0, c, 50257)
					}
				})
			}
		}
	}
}

// reportThreadCPU starts measuring the calling thread's CPU time and
// returns the function that reports it per op as cpu-ms/op, when the
// clock can be read.
func reportThreadCPU(b *testing.B) func() {
	runtime.LockOSThread()
	c0, ok := threadCPU()
	return func() {
		c1, _ := threadCPU()
		runtime.UnlockOSThread()
		if ok {
			b.ReportMetric(float64(c1-c0)/1e6/float64(b.N), "cpu-ms/op")
		}
	}
}

// threadCPU returns the CPU time in nanoseconds the calling OS thread
// has used (CLOCK_THREAD_CPUTIME_ID), false if the clock cannot be read.
func threadCPU() (int64, bool) {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0, false
	}
	return ts.Nano(), true
}

// BenchmarkInt8Decode measures the products over Int8 weights (the
// avx512 set's lowbit kernels) as decoding several sequences at once
// meets them: the four matrices of each of 12 GPT-2 small blocks (N×K
// 2304×768, 768×768, 3072×768, 768×3072; 96 MB) and the output
// projection (50257×768, 43 MB), in turn, from memory, for m = 1 and 8
// rows of A. The bytes are the weights'; cpu-ms/op is the thread's CPU
// time (run with -cpu 1).
func BenchmarkInt8Decode(b *testing.B) {
	if !hasAVX512 {
		b.Skip("no AVX-512")
	}
	shapes := [][2]int{{2304, 768}, {768, 768}, {3072, 768}, {768, 3072}}
	var mats []*weights.Int8
	bytes := 0
	for range 12 {
		for _, sh := range shapes {
			w := weights.NewInt8(sh[0], sh[1])
			for i := range w.Blocks {
				w.Blocks[i].Scale = 0.01
				for q := range w.Blocks[i].Q {
					w.Blocks[i].Q[q] = int8(i + q)
				}
			}
			mats = append(mats, w)
			bytes += 36 * len(w.Blocks)
		}
	}
	head := weights.NewInt8(50257, 768)
	for i := range head.Blocks {
		head.Blocks[i].Scale = 0.01
	}
	for _, m := range []int{1, 8} {
		a := make([]float32, m*3072)
		for i := range a {
			a[i] = float32(i%9) - 4
		}
		c := make([]float32, m*50257)
		b.Run(fmt.Sprintf("blocks/m=%d", m), func(b *testing.B) {
			b.SetBytes(int64(bytes))
			defer reportThreadCPU(b)()
			for i := 0; i < b.N; i++ {
				for _, w := range mats {
					lowbitAVX512.GemmInt8(m, 1, a, w.K, w, 0, c, w.N)
				}
			}
		})
		b.Run(fmt.Sprintf("head/m=%d", m), func(b *testing.B) {
			b.SetBytes(int64(36 * len(head.Blocks)))
			defer reportThreadCPU(b)()
			for i := 0; i < b.N; i++ {
				lowbitAVX512.GemmInt8(m, 1, a, 768, head, 0, c, 50257)
			}
		})
	}
}
