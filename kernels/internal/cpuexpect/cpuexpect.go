// Package cpuexpect says which kernel implementations a test binary must
// find on the machine it runs on, from the CPU's feature bits and the
// build tags alone (not from package kernels, whose registry is what the
// tests check). kernels' own tests and kernels/kernelstest share it, so a
// test fails, rather than skips, when an implementation the CPU supports
// is missing from the build.
package cpuexpect

import (
	"runtime"

	"golang.org/x/sys/cpu"
)

// Implementations returns the names of the implementations this build
// must offer on this CPU, generic first, in the registry's order.
func Implementations() []string {
	want := []string{"generic"}
	if runtime.GOARCH == "amd64" && !Purego {
		if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
			want = append(want, "avx2")
			if cpu.X86.HasAVX512 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512BW {
				want = append(want, "avx512")
			}
		}
	}
	if runtime.GOARCH == "arm64" && !Purego && cpu.ARM64.HasASIMD {
		want = append(want, "neon")
	}
	return want
}
