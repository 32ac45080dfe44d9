//go:build amd64 && !purego

package kernels

import (
	"golang.org/x/sys/cpu"
)

// hasAVX2 reports AVX2 and FMA with OS support for the YMM state.
var hasAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// hasAVX512 reports AVX-512F with OS support for the ZMM and opmask state.
// cpu.X86.HasAVX512 is cleared by GODEBUG=cpu.avx512=off.
var hasAVX512 = hasAVX2 && cpu.X86.HasAVX512 && cpu.X86.HasAVX512F

func archImpls() []*Impl {
	avx2 := &Impl{name: "avx2", requires: "AVX2, FMA", available: hasAVX2, ops: genericImpl.ops}
	avx512 := &Impl{name: "avx512", requires: "AVX-512F", available: hasAVX512, ops: genericImpl.ops}
	return []*Impl{avx2, avx512}
}
