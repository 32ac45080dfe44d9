//go:build amd64 && !purego

package amd64

import (
	"golang.org/x/sys/cpu"

	"github.com/simdgpt/simdgpt/kernels/internal/kernelset"
)

// hasAVX2 reports AVX2 and FMA with OS support for the YMM state.
var hasAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// hasAVX512 reports AVX-512F, AVX-512DQ (the generated kernels zero ZMM
// registers with VXORPS, a DQ instruction) and AVX-512BW (the products
// over int8 weights widen and multiply 16-bit integers) with OS support
// for the ZMM and opmask state. Every CPU with DQ so far has BW too. TestRequires checks that the generated kernels need
// nothing more. cpu.X86.HasAVX512F is cleared by GODEBUG=cpu.avx512f=off
// (cpu.avx512=off also works; Go 1.26 warns that it does not know the
// name).
var hasAVX512 = hasAVX2 && cpu.X86.HasAVX512 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512BW

func init() {
	kernelset.Register(setAVX2(tileFor("avx2", thisCPU)))
	kernelset.Register(setAVX512(tileFor("avx512", thisCPU)))
}

// withTile returns set's WithTile: the set made by mk on another of its
// tiles, nil for a tile set does not have.
func withTile(set string, mk func(tile string) *kernelset.Set) func(string) *kernelset.Set {
	return func(tile string) *kernelset.Set {
		if gemmDriver(set, tile) == nil {
			return nil
		}
		return mk(tile)
	}
}

// instrumentsAVX2 and instrumentsAVX512 return the sets' Instruments with
// their GEMM family on the named tile (the sets' literals, setAVX2 and
// setAVX512, are generated in sets_gen.go).
func instrumentsAVX2(tile string) kernelset.Instruments {
	return kernelset.Instruments{
		FMALoop:  fmaPeakAVX2,
		FMAFlops: 12 * 8 * 2, // 12 independent FMAs of 8 lanes

		ReadLoop:  readAheadAVX2,
		ReadBlock: 256, // 1 KiB a step

		StreamsLoop:  readStreamsAVX2,
		StreamsBlock: 64, // 256 bytes of each stream in turn

		Tile:     tile,
		Tiles:    tileNames("avx2"),
		WithTile: withTile("avx2", setAVX2),
	}
}

func instrumentsAVX512(tile string) kernelset.Instruments {
	bf16Loop, bf16Flops := bf16Peak()
	return kernelset.Instruments{
		FMALoop:  fmaPeakAVX512,
		FMAFlops: 12 * 16 * 2, // 12 independent FMAs of 16 lanes

		ReadLoop:  readAheadAVX512,
		ReadBlock: 256, // 1 KiB a step

		StreamsLoop:  readStreamsAVX512,
		StreamsBlock: 64, // 256 bytes of each stream in turn

		BF16Loop:  bf16Loop,
		BF16Flops: bf16Flops,
		BF16Dot:   bf16DotAVX512,

		Tile:     tile,
		Tiles:    tileNames("avx512"),
		WithTile: withTile("avx512", setAVX512),
	}
}

// bf16Peak returns the avx512 set's BF16Loop and BF16Flops: 24
// independent VDPBF16PS of 16 lanes, each lane two products and their
// sum with the accumulator; none without AVX512_BF16.
func bf16Peak() (func(int), int) {
	if !hasAVX512BF16 {
		return nil, 0
	}
	return bf16PeakAVX512, 24 * 16 * 4
}
