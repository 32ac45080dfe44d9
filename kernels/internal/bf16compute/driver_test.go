package bf16compute

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/simdgpt/simdgpt/kernels/internal/gemm"
	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

// The driver's tests run it on Go kernels of small tiles, with the
// contract of the generated ones, so that its blocking, packing, edges,
// splitting and epilogues are tested on every platform: 3×32 with every
// packer given (Go stand-ins for the assembly ones, panels made 16
// columns at a time), and 5×8 with none (New's Go packers, panels made
// column by column).

func words(p *uint32, n int) []uint32 { return unsafe.Slice(p, n) }

func halfF(w uint32, hi bool) float32 {
	if hi {
		w >>= 16
	}
	return lowbit.FromBF16(uint16(w))
}

// goMicro returns a Go micro-kernel of the tile mr×nr that reads no word
// of A past q = kp-1 (csa = 1).
func goMicro(mr, nr int) func(kp int, a *uint32, rsa, csa int, b *uint32, c *float32, ldc int, alpha, beta float32) {
	return func(kp int, a *uint32, rsa, csa int, b *uint32, c *float32, ldc int, alpha, beta float32) {
		as := words(a, (mr-1)*rsa+(kp-1)*csa+1)
		bs := words(b, kp*nr)
		cs := unsafe.Slice(c, (mr-1)*ldc+nr)
		for i := 0; i < mr; i++ {
			for j := 0; j < nr; j++ {
				var s float32
				for q := 0; q < kp; q++ {
					x, y := as[i*rsa+q*csa], bs[q*nr+j]
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
}

// goMicroPrefetch returns goMicro(mr, nr) as a MicroPrefetch: a prefetch
// has no effect on the results, but the driver must give it a source.
func goMicroPrefetch(mr, nr int) func(kp int, a *uint32, rsa, csa int, b *uint32, c *float32, ldc int, alpha, beta float32, pf *float32, pfs int) {
	micro := goMicro(mr, nr)
	return func(kp int, a *uint32, rsa, csa int, b *uint32, c *float32, ldc int, alpha, beta float32, pf *float32, pfs int) {
		if pf == nil || pfs <= 0 {
			panic("goMicroPrefetch: no source to prefetch")
		}
		micro(kp, a, rsa, csa, b, c, ldc, alpha, beta)
	}
}

// testDrivers are the drivers the tests run, by name: "3x32 fused" packs
// B panel by panel and A sliver by sliver inside the blocked loops
// (MicroPrefetch).
func testDrivers() map[string]*Driver {
	return map[string]*Driver{
		"3x32":       New(Kernels{MR: 3, NR: 32, Micro: goMicro(3, 32), PackRows: goPackRows, PackRowsHalves: goPackRowsHalves, PackPairs: goPackPairs, Transpose: goTranspose}, gemm.Caches{}),
		"3x32 fused": New(Kernels{MR: 3, NR: 32, Micro: goMicro(3, 32), MicroPrefetch: goMicroPrefetch(3, 32), PackRows: goPackRows, PackRowsHalves: goPackRowsHalves, PackPairs: goPackPairs, Transpose: goTranspose}, gemm.Caches{}),
		"5x8":        New(Kernels{MR: 5, NR: 8, Micro: goMicro(5, 8)}, gemm.Caches{}),
	}
}

// ints returns n integers in [-4, 4] as float32: every sum exact.
func ints(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.IntN(9) - 4)
	}
	return s
}

// TestDriverExact runs each test driver over shapes across its blocks
// (kc of 1, 2 and 5 pairs, nc of one to several panels), every transpose and the
// weights, on one goroutine and split by rows and by columns (every
// product split on two procs, however small), against the exact product
// (integer data: every sum exact), with the bias epilogue.
func TestDriverExact(t *testing.T) {
	defer func(v float64) { parallelMinFlops = v }(parallelMinFlops)
	parallelMinFlops = 0
	for dname, d := range testDrivers() {
		t.Run(dname, func(t *testing.T) { testDriverExact(t, d) })
	}
}

func testDriverExact(t *testing.T, d *Driver) {
	r := rand.New(rand.NewPCG(1, 2))
	shapes := [][3]int{{1, 1, 1}, {3, 16, 2}, {4, 17, 3}, {7, 33, 64}, {10, 50, 65}, {2, 200, 70}, {300, 5, 40}, {260, 300, 257}}
	for _, bl := range [][2]int{{1, 32}, {2, 64}, {5, 96}, {7, 64}, {256, 4096}} {
		d.SetBlocking(bl[0], bl[1])
		for _, s := range shapes {
			m, n, k := s[0], s[1], s[2]
			if testing.Short() && m*n*k > 1<<20 && bl[0] < 256 {
				// -short (the race detector, emulators): the largest
				// shape on the default blocking only; the small ones
				// cross every block edge of the small blockings.
				continue
			}
			for _, procs := range []int{1, 2} {
				old := runtime.GOMAXPROCS(procs)
				for ti := 0; ti < 5; ti++ {
					ta, tb, weights := ti&1 != 0, ti&2 != 0, ti == 4
					name := fmt.Sprintf("kc=%d nc=%d m=%d n=%d k=%d procs=%d transA=%v transB=%v weights=%v", bl[0], bl[1], m, n, k, procs, ta, tb, weights)
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

// TestNewRejects checks that New panics, naming itself and the tile, on
// kernels it cannot drive.
func TestNewRejects(t *testing.T) {
	micro := goMicro(4, 8)
	for _, c := range []struct {
		name string
		ks   Kernels
	}{
		{"no micro-kernel", Kernels{MR: 4, NR: 8}},
		{"MR 0", Kernels{MR: 0, NR: 8, Micro: micro}},
		{"NR 0", Kernels{MR: 4, NR: 0, Micro: micro}},
		{"NR 6", Kernels{MR: 4, NR: 6, Micro: micro}},
	} {
		msg := func() (msg string) {
			defer func() { msg = fmt.Sprint(recover()) }()
			New(c.ks, gemm.Caches{})
			return ""
		}()
		want := fmt.Sprintf("bf16compute.New: no micro-kernel, or a tile of %d×%d", c.ks.MR, c.ks.NR)
		if !strings.HasPrefix(msg, want) {
			t.Errorf("%s: panic %q, want it to start %q", c.name, msg, want)
		}
	}
}

// TestDriversShareWork runs drivers of different tiles one after another
// on one goroutine, so that each reuses the pooled work the other left:
// every scratch buffer must be sized for the driver that takes it.
func TestDriversShareWork(t *testing.T) {
	ds := testDrivers()
	r := rand.New(rand.NewPCG(3, 4))
	const m, n, k = 7, 40, 9
	for _, name := range []string{"5x8", "3x32", "5x8", "3x32 fused", "5x8", "3x32"} {
		a, b := ints(r, m*k), ints(r, k*n)
		c := make([]float32, m*n)
		ds[name].Gemm(false, false, m, n, k, 1, a, k, b, n, 0, c, n)
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				var want float32
				for p := 0; p < k; p++ {
					want += a[i*k+p] * b[p*n+j]
				}
				if c[i*n+j] != want {
					t.Fatalf("%s: C[%d][%d] = %v, want %v", name, i, j, c[i*n+j], want)
				}
			}
		}
	}
}

// TestRoundRow checks Rounded's rounding against lowbit.ToBF16 and
// FromBF16 (subnormals kept, NaNs quiet) on special values and random
// bit patterns, at every length across an unrolled loop's tail.
func TestRoundRow(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	special := []float32{0, float32(math.Copysign(0, -1)), 1, -1.00390625, 1.0078125, 1.01171875, math.MaxFloat32, -math.MaxFloat32,
		1e-40, -1e-40, 0x1p-126, 0x1p-149, float32(math.Inf(1)), float32(math.Inf(-1)),
		math.Float32frombits(0x7f800001), math.Float32frombits(0xffc00000), math.Float32frombits(0x7fffffff), math.Float32frombits(0x7f7fffff)}
	for n := 0; n <= 40; n++ {
		in := make([]float32, n+3)
		for i := range in {
			if i < len(special) && n == len(special) {
				in[i] = special[i]
			} else {
				in[i] = math.Float32frombits(r.Uint32())
			}
		}
		out := make([]float32, n)
		roundRow(out, in)
		for j := range out {
			want := lowbit.FromBF16(lowbit.ToBF16(in[j]))
			if math.Float32bits(out[j]) != math.Float32bits(want) {
				t.Errorf("n=%d: roundRow of %#x = %#x, want %#x", n, math.Float32bits(in[j]), math.Float32bits(out[j]), math.Float32bits(want))
			}
		}
	}
}

// TestWeightsFloat32 checks the weights converted to float32, with the Go
// widening and with a stand-in kernel that writes only whole groups,
// against lowbit.BF16.At, for K with and without a last partial group.
func TestWeightsFloat32(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, k := range []int{1, 31, 32, 33, 64, 95} {
		w := lowbit.NewBF16(3, k)
		for i := range w.Data {
			w.Data[i] = uint16(r.Uint32())
		}
		for name, widen := range map[string]func([]float32, []uint16){"go": nil, "groups": widenGroups} {
			var buf []float32
			got := weightsFloat32(&buf, w, widen)
			for j := 0; j < w.N; j++ {
				for p := 0; p < k; p++ {
					if want := w.At(j, p); math.Float32bits(got[j*k+p]) != math.Float32bits(want) {
						t.Fatalf("%s k=%d: (%d, %d) = %v, want %v", name, k, j, p, got[j*k+p], want)
					}
				}
			}
		}
	}
}
