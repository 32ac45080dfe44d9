package kernels

import "github.com/simdgpt/simdgpt/kernels/internal/cpuinfo"

// CPUInfo describes the processor, as far as the kernels care.
type CPUInfo struct {
	Name     string   // brand string, such as "Intel(R) Xeon(R) ..."
	Arch     string   // GOARCH
	Features []string // the SIMD features the kernels can use
	Cores    int      // physical cores, 0 if unknown
	L1D      int      // per-core L1 data cache in bytes, 0 if unknown
	L2       int      // per-core L2 cache in bytes, 0 if unknown
	L3       int      // shared L3 cache in bytes, 0 if unknown
}

// CPU returns what is known of the processor this program runs on, read
// with github.com/klauspost/cpuid/v2. The GEMM drivers are blocked for the
// cache sizes it reports.
func CPU() CPUInfo { return CPUInfo(cpuinfo.Read()) }
