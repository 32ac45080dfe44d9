//go:build amd64 && !purego

package amd64

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"unsafe"

	"github.com/simdgpt/simdgpt/kernels/internal/bf16compute"
	"github.com/simdgpt/simdgpt/kernels/internal/cpuinfo"
	"github.com/simdgpt/simdgpt/kernels/internal/gemm"
	"github.com/simdgpt/simdgpt/kernels/internal/packtest"
	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

func TestBF16DotFor(t *testing.T) {
	for _, tc := range []struct {
		info cpuinfo.Info
		want bool
	}{
		{cpuinfo.Info{Vendor: "Intel", Family: 6, Model: 207}, false}, // Emerald Rapids: two 512-bit FMA units
		{cpuinfo.Info{Vendor: "AMD", Family: 0x19}, true},             // Zen 4
		{cpuinfo.Info{Vendor: "AMD", Family: 0x1A}, true},             // Zen 5
		{cpuinfo.Info{}, true},
	} {
		if got := bf16DotFor(tc.info); got != tc.want {
			t.Errorf("bf16DotFor(%+v) = %v, want %v", tc.info, got, tc.want)
		}
	}
	if bf16DotAVX512 && !hasAVX512BF16 {
		t.Error("bf16DotAVX512 without AVX512_BF16")
	}
}

// bf16Engines returns the avx512 set's two engines of the bfloat16
// products on its float32 GEMM family: VDPBF16PS (packed; nil without
// AVX512_BF16) and the operands rounded for the float32 GEMM.
func bf16Engines() (packed, rounded *bf16compute.Family) {
	g := familyAVX512(tileFor("avx512", thisCPU))
	if hasAVX512BF16 {
		packed = bf16compute.NewFamily(&bf16KernelsAVX512, g, caches)
	}
	return packed, bf16compute.NewFamily(nil, g, caches)
}

// TestBF16EnginesAgree runs the VDPBF16PS engine, whichever engine this
// CPU's class uses, against the rounded one on integer data (every
// product and sum exact, so both must give the same bits): shapes across
// the 14×32 tile's edges and the pairs' odd k, every transpose, the
// weights and the fused epilogues.
func TestBF16EnginesAgree(t *testing.T) {
	if !hasAVX512 || !hasAVX512BF16 {
		t.Skip("no AVX-512 with AVX512_BF16 on this CPU")
	}
	packed, rounded := bf16Engines()
	r := rand.New(rand.NewPCG(3, 4))
	ints := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(r.IntN(9) - 4)
		}
		return s
	}
	for _, m := range []int{1, 13, 14, 15, 29} {
		for _, n := range []int{1, 31, 33, 64, 65} {
			for _, k := range []int{1, 2, 31, 64, 97} {
				for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
					ta, tb := tr[0], tr[1]
					lda, ldb := k+1, n+2
					if ta {
						lda = m + 3
					}
					if tb {
						ldb = k + 1
					}
					a, b := ints(max(m, k)*lda), ints(max(n, k)*ldb)
					c0, bias := ints(m*n), ints(n)
					name := fmt.Sprintf("m%d n%d k%d ta%v tb%v", m, n, k, ta, tb)
					cp, cr := slices.Clone(c0), slices.Clone(c0)
					packed.GemmBF16Compute(ta, tb, m, n, k, 2, a, lda, b, ldb, -1, cp, n)
					rounded.GemmBF16Compute(ta, tb, m, n, k, 2, a, lda, b, ldb, -1, cr, n)
					if !slices.Equal(cp, cr) {
						t.Fatalf("%s: GemmBF16Compute differs:\n packed  %v\n rounded %v", name, cp, cr)
					}
					packed.GemmBiasBF16Compute(ta, tb, m, n, k, a, lda, b, ldb, bias, cp, n)
					rounded.GemmBiasBF16Compute(ta, tb, m, n, k, a, lda, b, ldb, bias, cr, n)
					if !slices.Equal(cp, cr) {
						t.Fatalf("%s: GemmBiasBF16Compute differs", name)
					}
				}
			}
			for _, k := range []int{32, 64, 96} {
				w := lowbit.BF16FromKN(ints(k*n), k, n)
				a := ints(m * k)
				cp, cr := make([]float32, m*n), make([]float32, m*n)
				packed.GemmBF16ComputeWeights(m, 1, a, k, w, 0, cp, n)
				rounded.GemmBF16ComputeWeights(m, 1, a, k, w, 0, cr, n)
				if !slices.Equal(cp, cr) {
					t.Fatalf("m%d n%d k%d: GemmBF16ComputeWeights differs", m, n, k)
				}
			}
		}
	}
}

// BenchmarkBF16Engines times the avx512 set's two engines of the
// bfloat16 products, VDPBF16PS (packed) and the operands rounded for the
// float32 GEMM (rounded), and the float32 GEMM itself (f32), on
// kernelbench's gemmbf16compute shapes: the measurement behind
// bf16RoundedRules. GFLOP/s counts 2mnk.
func BenchmarkBF16Engines(b *testing.B) {
	if !hasAVX512 {
		b.Skip("no AVX-512")
	}
	packed, rounded := bf16Engines()
	g := familyAVX512(tileFor("avx512", thisCPU))
	for _, s := range []struct {
		m, n, k int
		ta, tb  bool
		name    string
	}{
		{512, 512, 512, false, false, "sq512"},
		{1024, 1024, 1024, false, false, "sq1024"},
		{2048, 1152, 384, false, false, "2048x384x1152"},
		{2048, 384, 1536, false, false, "2048x1536x384"},
		{2048, 1152, 384, false, true, "2048x384x1152_NT"},
		{384, 1152, 2048, true, false, "384x2048x1152_TN"},
	} {
		a, bb, c := make([]float32, s.m*s.k), make([]float32, s.k*s.n), make([]float32, s.m*s.n)
		for i := range a {
			a[i] = float32(i%13) * 0.1
		}
		for i := range bb {
			bb[i] = float32(i%7) * 0.1
		}
		lda, ldb := s.k, s.n
		if s.ta {
			lda = s.m
		}
		if s.tb {
			ldb = s.k
		}
		for _, e := range []struct {
			name string
			f    *bf16compute.Family
		}{{"packed", packed}, {"rounded", rounded}, {"f32", nil}} {
			if e.name == "packed" && e.f == nil {
				continue
			}
			b.Run(s.name+"/"+e.name, func(b *testing.B) {
				for b.Loop() {
					if e.f == nil {
						g.Gemm(s.ta, s.tb, s.m, s.n, s.k, 1, a, lda, bb, ldb, 0, c, s.n)
					} else {
						e.f.GemmBF16Compute(s.ta, s.tb, s.m, s.n, s.k, 1, a, lda, bb, ldb, 0, c, s.n)
					}
				}
				b.ReportMetric(2*float64(s.m)*float64(s.n)*float64(s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// TestRoundBF16 checks both sets' roundBF16 (packtest.Round).
func TestRoundBF16(t *testing.T) {
	for _, k := range []struct {
		name string
		ok   bool
		fn   func(dst, x []float32)
	}{{"avx2", hasAVX2, roundBF16AVX2}, {"avx512", hasAVX512, roundBF16AVX512}} {
		t.Run(k.name, func(t *testing.T) {
			if !k.ok {
				t.Skip("not on this CPU")
			}
			packtest.Round(t, k.fn)
		})
	}
}

// TestWidenBF16 checks both sets' widenBF16 (packtest.Widen).
func TestWidenBF16(t *testing.T) {
	for _, k := range []struct {
		name string
		ok   bool
		fn   func(dst []float32, src []uint16)
	}{{"avx2", hasAVX2, widenBF16AVX2}, {"avx512", hasAVX512, widenBF16AVX512}} {
		t.Run(k.name, func(t *testing.T) {
			if !k.ok {
				t.Skip("not on this CPU")
			}
			packtest.Widen(t, k.fn)
		})
	}
}

// TestRoundedInPacking runs the rounded engine of the bfloat16 products
// (bf16compute.Rounded) with its rounding done as the float32 GEMM packs
// the operands (gemm.Driver.GemmRounded) against the same engine rounding
// copies of the operands first, for both sets on each of their tiles,
// under the tile's blocking and one of a few tiles a block: the results
// must be the same bits. The shapes cover the skinny kernels (few rows,
// which take the copies), the last panels of 1 to 3 columns (the dot
// kernel, which reads rows of A, and the cols kernel), every transpose
// (a transposed A packed by whole blocks), B laid out to be read in
// place, several blocks of k, and a split into strips; the data spans
// many binades, so that rounding changes most elements.
func TestRoundedInPacking(t *testing.T) {
	data := binadeData(rand.New(rand.NewPCG(7, 8)))
	for _, bf := range blockedFamilies(t) {
		f, ks, set, tile, bl := bf.f, bf.ks, bf.set, bf.tile, bf.bl
		fused := bf16compute.NewFamily(nil, f, caches).Rounded
		copied := *fused
		copied.GemmRounded, copied.EpilogueRounded = nil, nil
		if fused.GemmRounded == nil || fused.EpilogueRounded == nil {
			t.Fatal("NewFamily's Rounded does not round in packing")
		}
		mr := ks.Wide.MR
		for _, m := range []int{1, 8, mr, 2*mr + 1, 60} {
			for _, n := range []int{1, 3, ks.Wide.NR + 2, 2*ks.Wide.NR + 3, 100} {
				for _, k := range []int{1, 31, 70} {
					for tr := 0; tr < 4; tr++ {
						ta, tb := tr&1 != 0, tr&2 != 0
						lda, ldb := k+1, (n+15)/16*16
						if ta {
							lda = m + 3
						}
						if tb {
							ldb = k + 2
						}
						a, b := data(max(m, k)*lda), data(max(n, k)*ldb+16)
						b = b[(64-int(uintptr(unsafe.Pointer(&b[0]))%64))%64/4:] // rows on cache lines
						c0, bias := data(m*n), data(n)
						name := fmt.Sprintf("%s %s blocking %v: m%d n%d k%d ta%v tb%v", set, tile, bl, m, n, k, ta, tb)
						cf, cc := slices.Clone(c0), slices.Clone(c0)
						fused.GemmBF16Compute(ta, tb, m, n, k, 1.5, a, lda, b, ldb, 0.5, cf, n)
						copied.GemmBF16Compute(ta, tb, m, n, k, 1.5, a, lda, b, ldb, 0.5, cc, n)
						if !slices.Equal(cf, cc) {
							t.Fatalf("%s: GemmBF16Compute differs:\n in packing %v\n copies     %v", name, cf, cc)
						}
						fused.GemmEpilogue(ta, tb, m, n, k, a, lda, b, ldb, cf, n, f.Bias, bias, nil, 0)
						copied.GemmEpilogue(ta, tb, m, n, k, a, lda, b, ldb, cc, n, f.Bias, bias, nil, 0)
						if !slices.Equal(cf, cc) {
							t.Fatalf("%s: GemmEpilogue differs", name)
						}
					}
				}
			}
		}
		// A product split into strips (2mnk above the driver's
		// split threshold) on two procs.
		if runtime.GOMAXPROCS(0) < 2 {
			continue
		}
		m, n, k := 300, 420, 290
		a, b := data(m*k), data(k*n)
		cf, cc := make([]float32, m*n), make([]float32, m*n)
		fused.GemmBF16Compute(false, false, m, n, k, 1, a, k, b, n, 0, cf, n)
		copied.GemmBF16Compute(false, false, m, n, k, 1, a, k, b, n, 0, cc, n)
		if !slices.Equal(cf, cc) {
			t.Fatalf("%s %s blocking %v: %dx%dx%d on two procs differs", set, tile, bl, m, n, k)
		}
	}
}

// TestWeightsInPacking checks that the products over bfloat16 weights
// whose GEMM widens the weights as it packs them (gemm.Family.PackBF16,
// through bf16compute.FloatWeights, and the rounded bfloat16 products'
// GemmWeights) give the bits of the same GEMM on the weights widened
// whole first, for both sets on each of their tiles, under the tile's
// blocking and one of 24 k steps a block (blocks that start off the
// 16-step chunks, which the Go edges take), and split into strips on
// 2, 3, 8, 32 and 64 goroutines. The shapes cover the skinny kernels' rows (which
// widen whole either way), the last panels of 1 to 3 columns (the dot
// and cols kernels), columns past the 16-column blocks, and k past
// several groups and off them; the weights span many binades.
func TestWeightsInPacking(t *testing.T) {
	data := binadeData(rand.New(rand.NewPCG(9, 10)))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, bf := range blockedFamilies(t) {
		packed, ks, set, tile, bl := bf.f, bf.ks, bf.set, bf.tile, bf.bl
		whole := *packed
		whole.PackBF16 = nil
		if packed.PackBF16 == nil {
			t.Fatalf("%s's family has no PackBF16", set)
		}
		rounded := bf16compute.NewFamily(nil, packed, caches).Rounded
		roundedWhole := bf16compute.NewFamily(nil, &whole, caches).Rounded
		mr, nr := ks.Wide.MR, ks.Wide.NR
		for _, procs := range []int{1, 2, 3, 8, 32, 64} {
			runtime.GOMAXPROCS(procs)
			for _, m := range []int{1, 16, 17, 2*mr + 1, 150} {
				for _, n := range []int{1, nr + 2, 2*nr + 3, 100, 700} {
					for _, k := range []int{1, 31, 70, 330} {
						if procs > 1 && 2*m*n*k < 1<<26 {
							continue // too small to be split (gemm.parallelMinFlops)
						}
						w := lowbit.BF16FromNK(data(n*k), n, k)
						lda := k + 3
						a, c0 := data(m*lda), data(m*n)
						name := fmt.Sprintf("%s %s blocking %v procs %d: m%d n%d k%d", set, tile, bl, procs, m, n, k)
						for _, beta := range []float32{0, 0.5} {
							got, want := slices.Clone(c0), slices.Clone(c0)
							bf16compute.FloatWeights(packed, m, 1.5, a, lda, w, beta, got, n)
							bf16compute.FloatWeights(&whole, m, 1.5, a, lda, w, beta, want, n)
							if !slices.Equal(got, want) {
								t.Fatalf("%s beta %v: FloatWeights widening in packing differs from widening whole", name, beta)
							}
							got, want = slices.Clone(c0), slices.Clone(c0)
							rounded.GemmWeights(m, 1.5, a, lda, w, beta, got, n)
							roundedWhole.Weights = nil
							roundedWhole.GemmWeights(m, 1.5, a, lda, w, beta, want, n)
							if !slices.Equal(got, want) {
								t.Fatalf("%s beta %v: Rounded.GemmWeights widening in packing differs from widening whole", name, beta)
							}
						}
					}
				}
			}
		}
	}
}

// blockedFamily is a set's GEMM family on one of its tiles and
// blockings, for the tests of the products built on it.
type blockedFamily struct {
	set, tile string
	bl        *gemm.Blocking // nil: the tile's own
	f         *gemm.Family
	ks        *gemm.Kernels
}

// blockedFamilies returns, for each set this CPU runs, a family on each
// of its tiles under the tile's blocking and under one of 24 k steps and
// two tiles each way a block (so that blocks start off the 16-step chunks
// and several blocks of each dimension are exercised by small products).
func blockedFamilies(t *testing.T) []blockedFamily {
	var out []blockedFamily
	for _, set := range []struct {
		name string
		ok   bool
		fam  func(tile string) *gemm.Family
	}{{"avx2", hasAVX2, familyAVX2}, {"avx512", hasAVX512, familyAVX512}} {
		if !set.ok {
			t.Logf("%s: not on this CPU", set.name)
			continue
		}
		for _, tile := range gemmTiles[set.name] {
			ks := tile.ks
			small := gemm.Blocking{KC: 24, MC: 2 * ks.Wide.MR, NC: 2 * ks.Wide.NR}
			for _, bl := range []*gemm.Blocking{nil, &small} {
				d := newDriver(set.name, ks)
				if bl != nil {
					d.SetBlocking(*bl)
				}
				f := set.fam(tile.name)
				f.Driver = d
				out = append(out, blockedFamily{set: set.name, tile: tile.name, bl: bl, f: f, ks: ks})
			}
		}
	}
	return out
}

// binadeData returns a function of n returning n normal numbers scaled by
// powers of two from 2⁻¹⁰ to 2¹⁰ drawn from r: data spanning many
// binades, so that rounding to bfloat16 changes most elements.
func binadeData(r *rand.Rand) func(n int) []float32 {
	return func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(math.Ldexp(r.NormFloat64(), r.IntN(21)-10))
		}
		return s
	}
}
