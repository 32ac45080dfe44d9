package kernels

import "github.com/simdgpt/simdgpt/kernels/internal/cpuinfo"

// CPUInfo describes the processor, as far as the kernels care.
type CPUInfo struct {
	Name     string   // brand string, such as "Intel(R) Xeon(R) ..."
	Vendor   string   // vendor, such as "Intel", "AMD", "ARM", "Apple"; "" if unknown
	Arch     string   // GOARCH
	Family   int      // x86 display family (AMD Zen 4 0x19, Zen 5 0x1A; Intel 6), 0 if unknown or not x86
	Model    int      // x86 display model, 0 if unknown or not x86
	Features []string // the SIMD features the kernels can use
	Cores    int      // physical cores, 0 if unknown
	L1D      int      // per-core L1 data cache in bytes, 0 if unknown
	L2       int      // L2 cache in bytes (per core, or per cluster: see L2Shared), 0 if unknown
	L3       int      // L3 cache in bytes (of all the cores that share it), 0 if unknown or none
	LineSize int      // cache line in bytes, 0 if unknown
	L1DWays  int      // associativity of the L1 data cache, 0 if unknown
	L2Ways   int      // associativity of the L2, 0 if unknown
	L3Ways   int      // associativity of the L3, 0 if unknown
	L2Shared int      // physical cores sharing one L2 (1: private), 0 if unknown
	L3Shared int      // physical cores sharing one L3, 0 if unknown
}

// CPU returns what is known of the processor this program runs on, read
// with github.com/klauspost/cpuid/v2 and, on Linux, from sysfs (which
// gives the associativity and sharing that cpuid does not, and the cache
// sizes on arm64). The GEMM drivers are blocked for the caches it reports,
// by an analytical model that fills what is unknown (0 here) with typical
// values of the vendor; the environment variable SIMDGPT_BLOCKING=kc,mc,nc
// overrides the model's block sizes, as a tuning aid.
func CPU() CPUInfo { return CPUInfo(cpuinfo.Read()) }
