//go:build amd64 && !purego

package amd64

import (
	"github.com/simdgpt/simdgpt/kernels/internal/cpuinfo"
	"github.com/simdgpt/simdgpt/kernels/internal/gemm"
)

// The GEMM (and masked scores) of each set: the shared blocked driver over
// one of the set's generated kernel families (gemm_kernels_amd64.go, one a
// tile shape), blocked for this CPU's caches by gemm.Model for that
// tile, or as SIMDGPT_BLOCKING says. Which tile a set uses comes from
// tileRules; every tile stays reachable through the set's WithTile (and so
// kernels.Lookup("avx512/8x48") and SIMDGPT_ISA) for comparison.

// gemmTile is one kernel family of a set, named by its tile shape.
type gemmTile struct {
	name string
	ks   *gemm.Kernels
}

var (
	thisCPU = cpuinfo.Read()
	caches  = gemm.CachesOf(thisCPU)
)

// tileRule chooses a set's tile on one class of CPU.
type tileRule struct {
	set    string
	vendor string
	family int // x86 display family; 0 matches any
	tile   string
}

// tileRules are the tile choices that differ from a set's first tile
// (the generator's order, gemmTiles), first match wins. A rule is added
// only for a class on which the blocked GEMM was measured faster with it
// (PERF.md, "Micro-kernel tiles"); classes without a rule keep the first
// tile, which is the one tuned on Zen 4.
var tileRules = []tileRule{}

// bf16RoundedRules are the classes of CPU with AVX512_BF16 on which the
// avx512 set keeps off VDPBF16PS: its bfloat16 products round their
// operands for the float32 GEMM (bf16compute.Rounded), and its one-row
// products over BF16 weights convert them to float32 in registers (the
// AVX2 kernels) instead of pairing x on VDPBF16PS. These are the classes
// whose two 512-bit FMA units do more float32 work per cycle than their
// VDPBF16PS does bfloat16 work: measured with BenchmarkBF16Engines and
// kernelbench -kernels gemvbf16 (PERF.md, "bfloat16 products" and "GEMV
// with 16- and 8-bit weights"). family 0 matches any.
var bf16RoundedRules = []struct {
	vendor string
	family int
}{
	{vendor: "Intel", family: 6},
}

// bf16DotFor reports whether the avx512 set's bfloat16 products run on
// VDPBF16PS on the CPU info describes, given that it has the
// instruction.
func bf16DotFor(info cpuinfo.Info) bool {
	for _, r := range bf16RoundedRules {
		if r.vendor == info.Vendor && (r.family == 0 || r.family == info.Family) {
			return false
		}
	}
	return true
}

// bf16DotAVX512 reports whether the avx512 set's bfloat16 products and
// one-row BF16 products run on VDPBF16PS on this CPU.
var bf16DotAVX512 = hasAVX512BF16 && bf16DotFor(thisCPU)

// tileFor returns the name of the tile set uses on the CPU info describes.
func tileFor(set string, info cpuinfo.Info) string {
	for _, r := range tileRules {
		if r.set == set && r.vendor == info.Vendor && (r.family == 0 || r.family == info.Family) {
			return r.tile
		}
	}
	return gemmTiles[set][0].name
}

// tileNames returns the names of set's tiles, in the generator's order.
func tileNames(set string) []string {
	var out []string
	for _, t := range gemmTiles[set] {
		out = append(out, t.name)
	}
	return out
}

// gemmDriver returns the GEMM driver of set on the named tile, nil if set
// has no such tile. Every tile's driver is made at start-up (a driver is a
// few words; its buffers come with the first product).
func gemmDriver(set, tile string) *gemm.Driver {
	return drivers[set][tile]
}

var drivers = func() map[string]map[string]*gemm.Driver {
	out := map[string]map[string]*gemm.Driver{}
	for set, tiles := range gemmTiles {
		out[set] = map[string]*gemm.Driver{}
		for _, t := range tiles {
			out[set][t.name] = newDriver(set, t.ks)
		}
	}
	return out
}()

// newDriver returns a new GEMM driver of set on the micro-kernels ks, with
// the set's skinny kernels (skinny_amd64.s, from asm/gen/skinny; their
// tables in families_gen.go: Gemv and the products with few rows of
// op(A)) and its smallM rule. The avx512 set's 8-row axpys kernel holds
// 8×48 columns of C and prefetches b (gemm.Skinny.WideAxpys).
func newDriver(set string, ks *gemm.Kernels) *gemm.Driver {
	skinny := skinnyAVX2
	if set == "avx512" {
		skinny = skinnyAVX512
		skinny.WideAxpys = 8
	}
	d := gemm.New(set, *ks, caches).WithSkinny(skinny)
	if m, ok := smallM[set]; ok {
		d.SetSmallM(m[0], m[1])
	}
	return d
}

// smallM is, for the sets whose crossover differs from the driver's
// default (gemm.Driver.SmallM), the largest m of op(A) their products
// take on the skinny kernels with B k×n and with B n×k. The AVX2
// micro-kernel has 6 rows of 16 columns, and the skinny kernels beat it
// up to m = 8 on every GPT-2 shape measured (PERF.md, "Small-M
// products"). On AVX-512 the 8-row axpys kernel (8×48 columns of C in
// registers, b prefetched) streams GPT-2's block matrices from memory
// faster than the blocked GEMM packs and multiplies them
// (BenchmarkSmallMDecode: 14–18 against 24–27 ms for the 48 matrices of
// GPT-2 small's blocks at m = 8, Zen 5), so the avx512 set takes m up
// to 8 there too, but for m = 5 to 7, which the driver leaves to the
// blocked path (gemm.Driver.SmallM: the stream kernels would read such a
// B twice, 34 against 23 ms at m = 6).
var smallM = map[string][2]int{"avx2": {8, 16}, "avx512": {8, 16}}

// The drivers the sets use on this CPU.
var (
	gemmAVX512 = gemmDriver("avx512", tileFor("avx512", thisCPU))
	gemmAVX2   = gemmDriver("avx2", tileFor("avx2", thisCPU))
)

// familyAVX2 and familyAVX512 return the set's GEMM family on a tile:
// the driver, with the set's BiasGELU and Add (through gemm.Bias) as the
// epilogues of its fused GEMMs, and its rounding to bfloat16 and
// widening of bfloat16 weights (whole, or as B's panels are packed) for
// the bfloat16 products on this GEMM.
func familyAVX2(tile string) *gemm.Family {
	return &gemm.Family{Driver: gemmDriver("avx2", tile), BiasGELU: biasGeluAVX2, Bias: gemm.Bias(addAVX2), RoundBF16: roundBF16AVX2, WidenBF16: widenBF16AVX2, PackBF16: packBF16AVX2}
}

func familyAVX512(tile string) *gemm.Family {
	return &gemm.Family{Driver: gemmDriver("avx512", tile), BiasGELU: biasGeluAVX512, Bias: gemm.Bias(addAVX512), RoundBF16: roundBF16AVX512, WidenBF16: widenBF16AVX512, PackBF16: packBF16AVX512}
}
