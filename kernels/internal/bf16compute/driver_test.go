package bf16compute

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"

	"github.com/simdgpt/simdgpt/kernels/internal/gemm"
	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

// The driver's tests run it on Go kernels of a small tile (3×32), with
// the contract of the generated ones, so that its blocking, packing,
// edges, splitting and epilogues are tested on every platform.

const testMR, testNR = 3, 32

func words(p *uint32, n int) []uint32 { return unsafe.Slice(p, n) }

func halfF(w uint32, hi bool) float32 {
	if hi {
		w >>= 16
	}
	return lowbit.FromBF16(uint16(w))
}

func goMicro(kp int, a *uint32, rsa, csa int, b *uint32, c *float32, ldc int, alpha, beta float32) {
	as := words(a, (testMR-1)*rsa+(kp-1)*csa+1)
	bs := words(b, kp*testNR)
	cs := unsafe.Slice(c, (testMR-1)*ldc+testNR)
	for i := 0; i < testMR; i++ {
		for j := 0; j < testNR; j++ {
			var s float32
			for q := 0; q < kp; q++ {
				x, y := as[i*rsa+q*csa], bs[q*testNR+j]
				s += halfF(x, false) * halfF(y, false)
				s += halfF(x, true) * halfF(y, true)
			}
			v := float32(alpha * s)
			if beta != 0 {
				v += float32(beta * cs[i*ldc+j])
			}
			cs[i*ldc+j] = v
		}
	}
}

func goPackRows(halves bool) func(dst *uint32, src *float32, lds, rows, blocks, ldd int) {
	return func(dst *uint32, src *float32, lds, rows, blocks, ldd int) {
		d := words(dst, (rows-1)*ldd+16*blocks)
		s := unsafe.Slice(src, (rows-1)*lds+32*blocks)
		for r := 0; r < rows; r++ {
			x := s[r*lds : r*lds+32*blocks]
			for q := 0; q < 16*blocks; q++ {
				if halves {
					g, dd := q/16, q%16
					d[r*ldd+q] = pair(x, 32*g+dd, 32*g+16+dd)
				} else {
					d[r*ldd+q] = pair(x, 2*q, 2*q+1)
				}
			}
		}
	}
}

func goPackPairs(dst *uint32, src *float32, lds, kp, chunks, ldd int) {
	d := words(dst, (kp-1)*ldd+16*chunks)
	s := unsafe.Slice(src, (2*kp-1)*lds+16*chunks)
	for q := 0; q < kp; q++ {
		for j := 0; j < 16*chunks; j++ {
			d[q*ldd+j] = uint32(bf16(s[2*q*lds+j])) | uint32(bf16(s[(2*q+1)*lds+j]))<<16
		}
	}
}

func goTranspose(dst, src *uint32, lds, ldd, blocks int) {
	d := words(dst, (16*blocks-1)*ldd+16)
	s := words(src, 15*lds+16*blocks)
	for r := 0; r < 16; r++ {
		for q := 0; q < 16*blocks; q++ {
			d[q*ldd+r] = s[r*lds+q]
		}
	}
}

// goMicroPrefetch is goMicro; a prefetch has no effect on the results.
func goMicroPrefetch(kp int, a *uint32, rsa, csa int, b *uint32, c *float32, ldc int, alpha, beta float32, pf *float32, pfs int) {
	if pf == nil || pfs <= 0 {
		panic("goMicroPrefetch: no source to prefetch")
	}
	goMicro(kp, a, rsa, csa, b, c, ldc, alpha, beta)
}

// testDriver returns the driver on the Go kernels, with MicroPrefetch
// (B packed panel by panel in the loops) when fused.
func testDriver(fused bool) *Driver {
	ks := Kernels{MR: testMR, NR: testNR, Micro: goMicro, PackRows: goPackRows(false), PackRowsHalves: goPackRows(true), PackPairs: goPackPairs, Transpose: goTranspose}
	if fused {
		ks.MicroPrefetch = goMicroPrefetch
	}
	return New(ks, gemm.Caches{})
}

// ints returns n integers in [-4, 4] as float32: every sum exact.
func ints(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.IntN(9) - 4)
	}
	return s
}

// TestDriverExact runs the driver over shapes across its blocks (kc of
// 1, 2 and 5 pairs, nc of one to three panels), every transpose and the
// weights, on one goroutine and split by rows and by columns, against
// the exact product (integer data: every sum exact), with the bias
// epilogue; B packed before the loops and, with MicroPrefetch, panel by
// panel inside them.
func TestDriverExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	shapes := [][3]int{{1, 1, 1}, {3, 16, 2}, {4, 17, 3}, {7, 33, 64}, {10, 50, 65}, {2, 200, 70}, {300, 5, 40}, {260, 300, 257}}
	for _, fl := range []struct {
		fused  bool
		blocks [][2]int
	}{{false, [][2]int{{1, 32}, {2, 64}, {5, 96}, {256, 4096}}}, {true, [][2]int{{1, 32}, {2, 64}, {5, 96}, {7, 64}, {256, 4096}}}} {
		d := testDriver(fl.fused)
		for _, bl := range fl.blocks {
			d.SetBlocking(bl[0], bl[1])
			for _, s := range shapes {
				m, n, k := s[0], s[1], s[2]
				for _, procs := range []int{1, 2} {
					old := runtime.GOMAXPROCS(procs)
					for ti := 0; ti < 5; ti++ {
						ta, tb, weights := ti&1 != 0, ti&2 != 0, ti == 4
						name := fmt.Sprintf("fused=%v kc=%d nc=%d m=%d n=%d k=%d procs=%d transA=%v transB=%v weights=%v", fl.fused, bl[0], bl[1], m, n, k, procs, ta, tb, weights)
						a, b := ints(r, m*k), ints(r, k*n)
						lda, ldb := k+1, n+3
						if ta {
							lda = m + 2
						}
						if tb {
							ldb = k + 1
						}
						ap := make([]float32, max(m, k)*lda)
						bp := make([]float32, max(n, k)*ldb)
						at := func(i, p int) float32 { return a[i*k+p] }
						bt := func(p, j int) float32 { return b[p*n+j] }
						for i := 0; i < m; i++ {
							for p := 0; p < k; p++ {
								if ta {
									ap[p*lda+i] = at(i, p)
								} else {
									ap[i*lda+p] = at(i, p)
								}
							}
						}
						for p := 0; p < k; p++ {
							for j := 0; j < n; j++ {
								if tb {
									bp[j*ldb+p] = bt(p, j)
								} else {
									bp[p*ldb+j] = bt(p, j)
								}
							}
						}
						ldc := n + 1
						c := ints(r, m*ldc)
						c0 := append([]float32(nil), c...)
						bias := ints(r, n)
						switch {
						case weights:
							w := lowbit.BF16FromKN(b, k, n)
							d.GemmWeights(m, 2, ap, lda, w, -1, c, ldc)
						case ti == 3:
							d.GemmEpilogue(ta, tb, m, n, k, ap, lda, bp, ldb, c, ldc, Epilogue{Fn: addBias, Vec: bias})
						default:
							d.Gemm(ta, tb, m, n, k, 2, ap, lda, bp, ldb, -1, c, ldc)
						}
						for i := 0; i < m; i++ {
							for j := 0; j < ldc; j++ {
								want := c0[i*ldc+j]
								if j < n {
									var s float32
									for p := 0; p < k; p++ {
										s += at(i, p) * bt(p, j)
									}
									if ti == 3 {
										want = s + bias[j]
									} else {
										want = 2*s - want
									}
								}
								if got := c[i*ldc+j]; got != want {
									t.Fatalf("%s: C[%d][%d] = %v, want %v", name, i, j, got, want)
								}
							}
						}
					}
					runtime.GOMAXPROCS(old)
				}
			}
		}
	}
}

// addBias is GemmBias's epilogue: vec added to every row.
func addBias(m, n int, c []float32, ldc int, vec, _ []float32, _ int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			c[i*ldc+j] += vec[j]
		}
	}
}

// TestBF16Rounding checks the Go tails' rounding against lowbit.ToBF16,
// float32 subnormals counted as 0 as VCVTNE2PS2BF16 does.
func TestBF16Rounding(t *testing.T) {
	for _, v := range []float32{0, 1, -1.00390625, 1.0078125, math.MaxFloat32, 1e-40, -1e-40, 0x1p-126, float32(math.Inf(-1))} {
		want := lowbit.ToBF16(v)
		if math.Abs(float64(v)) < 0x1p-126 {
			want = lowbit.ToBF16(v) & 0x8000
		}
		if got := bf16(v); got != want {
			t.Errorf("bf16(%v) = %#x, want %#x", v, got, want)
		}
	}
	if got := bf16(float32(math.NaN())); got&0x7f80 != 0x7f80 || got&0x7f == 0 {
		t.Errorf("bf16(NaN) = %#x, want a NaN", got)
	}
}
