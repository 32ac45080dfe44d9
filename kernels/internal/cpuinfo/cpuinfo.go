// Package cpuinfo reads what the kernels need to know of the processor
// (features, cores, cache sizes) with github.com/klauspost/cpuid/v2: the
// blocking of every GEMM driver and kernels.CPU come from here.
package cpuinfo

import (
	"runtime"

	"github.com/klauspost/cpuid/v2"
)

// Info describes the processor, as far as the kernels care.
type Info struct {
	Name     string   // brand string, such as "Intel(R) Xeon(R) ..."
	Arch     string   // GOARCH
	Features []string // the SIMD features the kernels can use
	Cores    int      // physical cores, 0 if unknown
	L1D      int      // per-core L1 data cache in bytes, 0 if unknown
	L2       int      // per-core L2 cache in bytes, 0 if unknown
	L3       int      // shared L3 cache in bytes, 0 if unknown
}

// Read returns what is known of the processor this program runs on.
func Read() Info {
	c := cpuid.CPU
	info := Info{
		Name:  c.BrandName,
		Arch:  runtime.GOARCH,
		Cores: c.PhysicalCores,
		L1D:   positive(c.Cache.L1D),
		L2:    positive(c.Cache.L2),
		L3:    positive(c.Cache.L3),
	}
	for _, f := range []struct {
		id   cpuid.FeatureID
		name string
	}{
		{cpuid.AVX2, "AVX2"}, {cpuid.FMA3, "FMA"}, {cpuid.AVX512F, "AVX512F"},
		{cpuid.AVX512BW, "AVX512BW"}, {cpuid.AVX512DQ, "AVX512DQ"}, {cpuid.AVX512VL, "AVX512VL"},
		{cpuid.ASIMD, "ASIMD"},
	} {
		if c.Supports(f.id) {
			info.Features = append(info.Features, f.name)
		}
	}
	return info
}

func positive(n int) int {
	if n < 0 {
		return 0
	}
	return n
}
