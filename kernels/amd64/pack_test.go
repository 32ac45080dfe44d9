//go:build amd64 && !purego

package amd64

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/simdgpt/simdgpt/kernels/internal/guard"
	"github.com/simdgpt/simdgpt/kernels/internal/lowbit"
	"github.com/simdgpt/simdgpt/kernels/internal/packtest"
	weights "github.com/simdgpt/simdgpt/kernels/lowbit"
)

// packPanelsRef is PackPanels' definition: kc rows of m floats of src
// (rows lda apart) into ceil(m/mr) panels of kc steps of ps floats, zero
// past each panel's rows.
func packPanelsRef(dst, src []float32, lda, m, kc, mr, ps int) {
	panels := (m + mr - 1) / mr
	for t := 0; t < panels; t++ {
		for q := 0; q < kc; q++ {
			for i := 0; i < ps; i++ {
				var v float32
				if i < mr && t*mr+i < m {
					v = src[q*lda+t*mr+i]
				}
				dst[t*kc*ps+q*ps+i] = v
			}
		}
	}
}

// TestPackPanels checks the generated PackPanels routines against their
// definition for every width m up past a few panels and the 4-row and
// 8-float steps, depths across the 4-row groups, and strides odd and
// exact. src ends flush against an unmapped page (a read past the last
// row's m floats faults), and dst is filled with a sentinel that must
// survive past the panels.
func TestPackPanels(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2")
	}
	for _, p := range []struct {
		mr, ps int
		fn     func(dst, src *float32, lda, m, kc int)
	}{{6, 8, packPanels6AVX2}, {14, 16, packPanels14AVX2}, {16, 16, packPanels16AVX2}, {32, 32, packPanels32AVX2}} {
		for m := 1; m <= 4*p.mr+3; m++ {
			for _, kc := range []int{1, 2, 3, 4, 5, 7, 8, 9, 13} {
				for _, extra := range []int{0, 1, 5, 16} {
					lda := m + extra
					name := fmt.Sprintf("mr=%d/m=%d/kc=%d/lda=%d", p.mr, m, kc, lda)
					n := (kc-1)*lda + m
					src, buf := guard.Alloc(n, guard.End)
					for i := range src {
						src[i] = float32(i + 1)
					}
					panels := (m + p.mr - 1) / p.mr
					size := panels * kc * p.ps
					dst := make([]float32, size+64)
					for i := range dst {
						dst[i] = -7
					}
					want := make([]float32, size)
					packPanelsRef(want, src, lda, m, kc, p.mr, p.ps)
					p.fn(&dst[0], unsafe.SliceData(src), lda, m, kc)
					buf.Free()
					for i, w := range want {
						if dst[i] != w {
							t.Fatalf("%s: dst[%d] = %v, want %v", name, i, dst[i], w)
						}
					}
					for i := size; i < len(dst); i++ {
						if dst[i] != -7 {
							t.Fatalf("%s: dst[%d] written past the panels", name, i)
						}
					}
				}
			}
		}
	}
}

// TestPackTrans checks the generated transposing packers (PackT) against
// their definition, dst[q*nr+j] = src[j*ldb+q] for j < w and 0 for
// w <= j < nr, for every w up to nr, depths across the 8- and 16-float
// steps, odd strides and starts off the cache lines. src ends flush
// against an unmapped page (a read past the last row's kc floats
// faults), and a sentinel past the panel must survive.
func TestPackTrans(t *testing.T) {
	for _, p := range []struct {
		name string
		ok   bool
		step int // nr must be a multiple of it
		fn   func(dst, src *float32, ldb, w, kc, nr int)
	}{{"avx2", hasAVX2, 8, packBTransAVX2}, {"avx512", hasAVX512, 16, packBTransAVX512}} {
		if !p.ok {
			t.Logf("%s: not supported by this CPU", p.name)
			continue
		}
		for _, nr := range []int{8, 16, 32, 48} {
			if nr%p.step != 0 {
				continue
			}
			for w := 0; w <= nr; w++ {
				for _, kc := range []int{1, 2, 7, 8, 9, 15, 16, 17, 33} {
					for _, extra := range []int{0, 3} {
						ldb := kc + extra
						name := fmt.Sprintf("%s/nr=%d/w=%d/kc=%d/ldb=%d", p.name, nr, w, kc, ldb)
						n := max(1, (w-1)*ldb+kc)
						src, buf := guard.Alloc(n, guard.End)
						for i := range src {
							src[i] = float32(i + 1)
						}
						dst := make([]float32, kc*nr+32)
						for i := range dst {
							dst[i] = -7
						}
						p.fn(&dst[0], unsafe.SliceData(src), ldb, w, kc, nr)
						for q := 0; q < kc; q++ {
							for j := 0; j < nr; j++ {
								var want float32
								if j < w {
									want = src[j*ldb+q]
								}
								if got := dst[q*nr+j]; got != want {
									t.Fatalf("%s: dst[%d*nr+%d] = %v, want %v", name, q, j, got, want)
								}
							}
						}
						buf.Free()
						for i := kc * nr; i < len(dst); i++ {
							if dst[i] != -7 {
								t.Fatalf("%s: dst[%d] written past the panel", name, i)
							}
						}
					}
				}
			}
		}
	}
}

// BenchmarkPackPanels measures packing a transposed A block as the
// driver does for a weight gradient (xᵀ·dout, x of BT×C rows): m = C
// rows of A, kc steps, lda = C.
func BenchmarkPackPanels(b *testing.B) {
	for _, p := range []struct {
		name   string
		mr, ps int
		kc     int
		fn     func(dst, src *float32, lda, m, kc int)
	}{{"6", 6, 8, 256, packPanels6AVX2}, {"14", 14, 16, 128, packPanels14AVX2}} {
		for _, m := range []int{128, 384, 1536} {
			b.Run(fmt.Sprintf("mr=%s/m=%d/kc=%d", p.name, m, p.kc), func(b *testing.B) {
				if !hasAVX2 {
					b.Skip("no AVX2")
				}
				src := make([]float32, p.kc*m)
				dst := make([]float32, (m+p.mr-1)/p.mr*p.kc*p.ps)
				for b.Loop() {
					p.fn(&dst[0], &src[0], m, m, p.kc)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(m*p.kc), "ns/float")
			})
		}
	}
}

// BenchmarkPackB measures packing a kc×n block of an untransposed B (the
// dout of a weight gradient, n = ldb) into panels of NR: panel by panel
// with PackN, as the driver did, against row by row with PackBPanels.
func BenchmarkPackB(b *testing.B) {
	for _, p := range []struct {
		name   string
		nr, kc int
		fn     func(dst, src *float32, ldb, n, kc int)
	}{{"16", 16, 256, packPanels16AVX2}, {"32", 32, 128, packPanels32AVX2}} {
		for _, n := range []int{384, 1536} {
			src := make([]float32, p.kc*n)
			dst := make([]float32, p.kc*n)
			b.Run(fmt.Sprintf("nr=%s/n=%d/kc=%d/panels", p.name, n, p.kc), func(b *testing.B) {
				if !hasAVX2 {
					b.Skip("no AVX2")
				}
				for b.Loop() {
					for j := 0; j < n; j += p.nr {
						packBAVX2(&dst[j*p.kc], &src[j], n, p.nr, p.kc, p.nr)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n*p.kc), "ns/float")
			})
			b.Run(fmt.Sprintf("nr=%s/n=%d/kc=%d/rows", p.name, n, p.kc), func(b *testing.B) {
				if !hasAVX2 {
					b.Skip("no AVX2")
				}
				for b.Loop() {
					p.fn(&dst[0], &src[0], n, n, p.kc)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n*p.kc), "ns/float")
			})
		}
	}
}

// BenchmarkPackTrans measures the transposing packers on an A sliver as
// the AVX-512 driver packs it (14 rows of kc floats into a 16-float
// panel) and on a B panel of 32 rows, at row strides of a square's
// (ld = n), in the caches and beyond them (a new block of rows each
// call, cycling through 64 MiB).
func BenchmarkPackTrans(b *testing.B) {
	const kc = 224
	for _, p := range []struct {
		name string
		ok   bool
		fn   func(dst, src *float32, ldb, w, kc, nr int)
	}{{"avx2", hasAVX2, packBTransAVX2}, {"avx512", hasAVX512, packBTransAVX512}} {
		for _, sh := range []struct{ w, nr int }{{14, 16}, {32, 32}} {
			for _, ld := range []int{512, 2048} {
				for _, cold := range []bool{false, true} {
					b.Run(fmt.Sprintf("%s/w=%d/nr=%d/ld=%d/cold=%v", p.name, sh.w, sh.nr, ld, cold), func(b *testing.B) {
						if !p.ok {
							b.Skip("not supported by this CPU")
						}
						blocks := 1
						if cold {
							blocks = (64 << 20) / (4 * sh.w * ld)
						}
						src := make([]float32, blocks*sh.w*ld)
						dst := make([]float32, kc*sh.nr)
						i := 0
						for b.Loop() {
							p.fn(&dst[0], &src[i*sh.w*ld], ld, sh.w, kc, sh.nr)
							i = (i + 1) % blocks
						}
						b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(sh.w*kc), "ns/float")
					})
				}
			}
		}
	}
}

// TestPackInt8 checks the dequantizing packers of int8 weights
// (lowbitPackInt8AVX2 and AVX512, through lowbit.Int8Source) against their
// definition, dst[q*nr+j] = W.At(j0+j, pc+q) for j < w and 0 for
// w <= j < nr: first k steps on either half of a group and off it (which
// the Go path takes), depths across the 16-step chunks and past several
// groups, column counts across the 16-column blocks, the panel widths of
// the GEMM and the last rows of W. W's blocks end, and then start, flush
// against an unmapped page, and a sentinel past the panel must survive.
func TestPackInt8(t *testing.T) {
	for _, p := range []struct {
		name string
		ok   bool
		fn   lowbit.PackInt8Func
	}{{"avx2", hasAVX2, lowbitPackInt8AVX2}, {"avx512", hasAVX512, lowbitPackInt8AVX512}} {
		t.Run(p.name, func(t *testing.T) {
			if !p.ok {
				t.Skip("not supported by this CPU")
			}
			packtest.Int8(t, p.fn)
		})
	}
}

// BenchmarkPackInt8 measures packing B panels of 32 columns from int8
// weights W (N×K, GPT-2's shapes; each call one kc×N block, cycling
// through K) with each dequantizing packer and in Go (go).
func BenchmarkPackInt8(b *testing.B) {
	const kc, nr = 160, 32
	for _, sh := range []struct{ n, k int }{{2304, 768}, {768, 3072}} {
		w := weights.NewInt8(sh.n, sh.k)
		for i := range w.Blocks {
			w.Blocks[i].Scale = 0.01
			for p := range w.Blocks[i].Q {
				w.Blocks[i].Q[p] = int8(i + p)
			}
		}
		dst := make([]float32, kc*sh.n)
		for _, how := range []string{"avx2", "avx512", "go"} {
			b.Run(fmt.Sprintf("n=%d/k=%d/%s", sh.n, sh.k, how), func(b *testing.B) {
				var src *lowbit.Int8Source
				switch {
				case how == "avx2" && hasAVX2:
					src = lowbit.NewInt8Source(w, lowbitPackInt8AVX2)
				case how == "avx512" && hasAVX512:
					src = lowbit.NewInt8Source(w, lowbitPackInt8AVX512)
				case how == "go":
					src = lowbit.NewInt8Source(w, nil)
				default:
					b.Skip("not supported by this CPU")
				}
				pc := 0
				for b.Loop() {
					for j := 0; j < sh.n; j += nr {
						src.PackB(dst[j*kc:(j+nr)*kc], pc, kc, j, nr, nr)
					}
					pc = (pc + kc) % (sh.k / kc * kc)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(sh.n*kc), "ns/weight")
			})
		}
	}
}

// TestPackBF16 checks the widening packers of bfloat16 weights
// (packBF16AVX2 and AVX512, through bf16compute's source of FloatWeights,
// and its Go path) against W.At bit for bit (packtest.CheckPackB's panels), on
// weights of every bit pattern: NaNs, infinities and subnormals widen
// exactly too. W's data ends, and then starts, flush against an unmapped
// page.
func TestPackBF16(t *testing.T) {
	for _, p := range []struct {
		name string
		ok   bool
		fn   func(chunks int, w *byte, stride int, odd int, dst *float32, nr int)
	}{{"avx2", hasAVX2, packBF16AVX2}, {"avx512", hasAVX512, packBF16AVX512}, {"go", true, nil}} {
		t.Run(p.name, func(t *testing.T) {
			if !p.ok {
				t.Skip("not supported by this CPU")
			}
			packtest.BF16(t, p.fn)
		})
	}
}
