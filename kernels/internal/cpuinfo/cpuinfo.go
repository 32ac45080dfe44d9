// Package cpuinfo reads what the kernels need to know of the processor
// (features, cores, the data caches' sizes, associativity, line size and
// sharing): the blocking of every GEMM driver and kernels.CPU come from
// here.
//
// Sizes, the line size and the features come from
// github.com/klauspost/cpuid/v2. That version (v2.4.2) reports neither
// associativity nor how many cores share a cache, and its raw CPUID
// function is not exported, so on Linux the rest comes from sysfs
// (/sys/devices/system/cpu/cpu0/cache/index*/: level, type, size,
// ways_of_associativity, coherency_line_size, shared_cpu_list), which the
// kernel fills from CPUID leaf 4 (Intel) or 0x8000001D (AMD) on x86 and
// from the firmware's tables (ACPI PPTT, device tree) on arm64, where
// cpuid reports no cache sizes at all. Read reports 0 for what neither
// source knows; WithDefaults then fills it with typical values of the
// vendor (see there), which is what the blocking uses.
package cpuinfo

import (
	"io/fs"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/klauspost/cpuid/v2"
)

// Info describes the processor, as far as the kernels care.
type Info struct {
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

// Read returns what is known of the processor this program runs on.
func Read() Info {
	c := cpuid.CPU
	info := Info{
		Name:     c.BrandName,
		Vendor:   vendorName(c.VendorID),
		Arch:     runtime.GOARCH,
		Family:   max(0, c.Family),
		Model:    max(0, c.Model),
		Cores:    c.PhysicalCores,
		L1D:      positive(c.Cache.L1D),
		L2:       positive(c.Cache.L2),
		L3:       positive(c.Cache.L3),
		LineSize: positive(c.CacheLine),
	}
	for _, f := range []struct {
		id   cpuid.FeatureID
		name string
	}{
		{cpuid.AVX2, "AVX2"}, {cpuid.FMA3, "FMA"}, {cpuid.AVX512F, "AVX512F"},
		{cpuid.AVX512BW, "AVX512BW"}, {cpuid.AVX512DQ, "AVX512DQ"}, {cpuid.AVX512VL, "AVX512VL"},
		{cpuid.ASIMD, "ASIMD"}, {cpuid.BF16, "BF16"},
	} {
		if c.Supports(f.id) {
			info.Features = append(info.Features, f.name)
		}
	}
	if runtime.GOOS == "linux" {
		info.merge(ReadSysfs(os.DirFS("/sys/devices/system/cpu/cpu0/cache")), c.ThreadsPerCore)
	}
	return info
}

// vendorName names the vendors WithDefaults distinguishes.
func vendorName(v cpuid.Vendor) string {
	switch v {
	case cpuid.Intel:
		return "Intel"
	case cpuid.AMD, cpuid.Hygon:
		return "AMD"
	case cpuid.ARM:
		return "ARM"
	case cpuid.Apple:
		return "Apple"
	case cpuid.VendorUnknown:
		return ""
	}
	return v.String()
}

// Cache is one cache level as sysfs describes it; 0 for what it does not
// say.
type Cache struct {
	Size     int // bytes
	Ways     int // associativity
	Line     int // line size in bytes
	SharedBy int // logical CPUs sharing it
}

// ReadSysfs reads the data and unified caches of one CPU from fsys, a
// Linux sysfs cache directory (/sys/devices/system/cpu/cpuN/cache), by
// level: the result's [1], [2] and [3] are L1d, L2 and L3 (zero when
// absent or unreadable).
func ReadSysfs(fsys fs.FS) (levels [4]Cache) {
	dirs, err := fs.Glob(fsys, "index*")
	if err != nil {
		return levels
	}
	for _, d := range dirs {
		read := func(name string) string {
			b, err := fs.ReadFile(fsys, d+"/"+name)
			if err != nil {
				return ""
			}
			return strings.TrimSpace(string(b))
		}
		level, err := strconv.Atoi(read("level"))
		if err != nil || level < 1 || level > 3 {
			continue
		}
		if t := read("type"); t != "Data" && t != "Unified" {
			continue
		}
		levels[level] = Cache{
			Size:     parseSize(read("size")),
			Ways:     atoiPositive(read("ways_of_associativity")),
			Line:     atoiPositive(read("coherency_line_size")),
			SharedBy: countCPUs(read("shared_cpu_list")),
		}
	}
	return levels
}

// merge fills what cpuid left unknown, and the associativity, line size
// and sharing, from the sysfs levels; threadsPerCore converts sysfs's
// logical CPUs to cores.
func (info *Info) merge(levels [4]Cache, threadsPerCore int) {
	fill := func(dst *int, v int) {
		if *dst <= 0 && v > 0 {
			*dst = v
		}
	}
	cores := func(logical int) int {
		if logical <= 0 {
			return 0
		}
		if threadsPerCore > 1 {
			return max(1, logical/threadsPerCore)
		}
		return logical
	}
	fill(&info.L1D, levels[1].Size)
	fill(&info.L2, levels[2].Size)
	fill(&info.L3, levels[3].Size)
	fill(&info.L1DWays, levels[1].Ways)
	fill(&info.L2Ways, levels[2].Ways)
	fill(&info.L3Ways, levels[3].Ways)
	fill(&info.LineSize, levels[1].Line)
	fill(&info.L2Shared, cores(levels[2].SharedBy))
	fill(&info.L3Shared, cores(levels[3].SharedBy))
}

// parseSize parses sysfs's "32K", "1024K", "32768K" or "2M" (or plain
// bytes); 0 if it cannot.
func parseSize(s string) int {
	mul := 1
	switch {
	case strings.HasSuffix(s, "K"):
		mul, s = 1<<10, s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		mul, s = 1<<20, s[:len(s)-1]
	case strings.HasSuffix(s, "G"):
		mul, s = 1<<30, s[:len(s)-1]
	}
	return atoiPositive(s) * mul
}

// countCPUs counts the CPUs of a list such as "0-3,8-11" or "5"; 0 if it
// cannot parse it.
func countCPUs(list string) int {
	if list == "" {
		return 0
	}
	n := 0
	for _, r := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return 0
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return 0
			}
		}
		n += b - a + 1
	}
	return n
}

func atoiPositive(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

func positive(n int) int {
	if n < 0 {
		return 0
	}
	return n
}

// WithDefaults returns info with every unknown cache property (0) replaced
// by a typical value for its vendor and architecture, so that the
// blocking model always has a complete description:
//
//   - sizes: L1d 32 KiB (64 KiB on arm64, 128 KiB for Apple), L2 1 MiB
//     (Apple: 12 MiB per cluster); an unknown L3 stays 0 (none);
//   - line size: 64 bytes (Apple: 128);
//   - L1d ways: on amd64 size/4 KiB, as every current x86 L1d is virtually
//     indexed with 4 KiB pages, so a way spans at most a page (32 KiB
//     8-way, 48 KiB 12-way); on arm64 4 (Neoverse N1/V1/N2/V2, Cortex-A7x:
//     64 KiB 4-way), Apple 8;
//   - L2 ways: 16 for Intel (Skylake-SP onwards), 8 otherwise (Zen 1-4,
//     Neoverse), 12 for Apple;
//   - L3 ways: 16 for AMD and Arm (Zen, CMN-600/700), 12 otherwise;
//   - sharing: the L2 is private (Apple: shared by a cluster of 4), the L3
//     shared by all Cores (by 1 if Cores is unknown).
func (info Info) WithDefaults() Info {
	apple := info.Vendor == "Apple"
	arm := info.Arch == "arm64"
	or := func(dst *int, v int) {
		if *dst <= 0 {
			*dst = v
		}
	}
	switch {
	case apple:
		or(&info.L1D, 128<<10)
		or(&info.L2, 12<<20)
		or(&info.LineSize, 128)
		or(&info.L1DWays, 8)
		or(&info.L2Ways, 12)
		or(&info.L2Shared, 4)
	case arm:
		or(&info.L1D, 64<<10)
		or(&info.L1DWays, 4)
	default:
		or(&info.L1D, 32<<10)
		or(&info.L1DWays, max(1, info.L1D/(4<<10)))
	}
	or(&info.L2, 1<<20)
	or(&info.LineSize, 64)
	if info.Vendor == "Intel" {
		or(&info.L2Ways, 16)
	}
	or(&info.L2Ways, 8)
	or(&info.L2Shared, 1)
	if info.L3 > 0 {
		if info.Vendor == "AMD" || info.Vendor == "ARM" {
			or(&info.L3Ways, 16)
		}
		or(&info.L3Ways, 12)
		or(&info.L3Shared, max(1, info.Cores))
	}
	return info
}
