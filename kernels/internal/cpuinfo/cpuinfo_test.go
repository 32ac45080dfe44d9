package cpuinfo

import (
	"testing"
	"testing/fstest"
)

// sysfsDir builds a sysfs cache directory: one entry per index, each a
// list of level, type, size, ways, line, shared CPUs.
func sysfsDir(entries ...[6]string) fstest.MapFS {
	fs := fstest.MapFS{}
	for i, e := range entries {
		d := "index" + string(rune('0'+i)) + "/"
		for j, name := range []string{"level", "type", "size", "ways_of_associativity", "coherency_line_size", "shared_cpu_list"} {
			if e[j] != "" {
				fs[d+name] = &fstest.MapFile{Data: []byte(e[j] + "\n")}
			}
		}
	}
	return fs
}

func TestReadSysfs(t *testing.T) {
	for _, c := range []struct {
		name string
		dir  fstest.MapFS
		want [4]Cache
	}{
		{"zen4 VM (this session's machine)", sysfsDir(
			[6]string{"1", "Data", "32K", "8", "64", "0"},
			[6]string{"1", "Instruction", "32K", "8", "64", "0"},
			[6]string{"2", "Unified", "1024K", "8", "64", "0"},
			[6]string{"3", "Unified", "32768K", "16", "64", "0-1"},
		), [4]Cache{1: {32 << 10, 8, 64, 1}, 2: {1 << 20, 8, 64, 1}, 3: {32 << 20, 16, 64, 2}}},
		{"sapphire rapids, SMT", sysfsDir(
			[6]string{"1", "Data", "48K", "12", "64", "0,56"},
			[6]string{"2", "Unified", "2048K", "16", "64", "0,56"},
			[6]string{"3", "Unified", "107520K", "15", "64", "0-55,56-111"},
		), [4]Cache{1: {48 << 10, 12, 64, 2}, 2: {2 << 20, 16, 64, 2}, 3: {105 << 20, 15, 64, 112}}},
		{"arm64 without ways or L3", sysfsDir(
			[6]string{"1", "Data", "64K", "", "", "0"},
			[6]string{"2", "Unified", "1M", "8", "64", "bad"},
		), [4]Cache{1: {64 << 10, 0, 0, 1}, 2: {1 << 20, 8, 64, 0}}},
		{"empty", fstest.MapFS{}, [4]Cache{}},
		{"level out of range", sysfsDir([6]string{"4", "Unified", "64M", "16", "64", "0-7"}), [4]Cache{}},
	} {
		if got := ReadSysfs(c.dir); got != c.want {
			t.Errorf("%s: ReadSysfs = %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestCountCPUs(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{{"0", 1}, {"0-1", 2}, {"0-3,8-11", 8}, {"0,56", 2}, {"", 0}, {"3-1", 0}, {"a", 0}, {"1-x", 0}} {
		if got := countCPUs(c.in); got != c.want {
			t.Errorf("countCPUs(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{{"32K", 32 << 10}, {"2M", 2 << 20}, {"1G", 1 << 30}, {"4096", 4096}, {"", 0}, {"xK", 0}, {"-1K", 0}} {
		if got := parseSize(c.in); got != c.want {
			t.Errorf("parseSize(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestMerge(t *testing.T) {
	levels := [4]Cache{1: {48 << 10, 12, 64, 2}, 2: {2 << 20, 16, 64, 2}, 3: {105 << 20, 15, 64, 112}}
	// cpuid knew the sizes (and a different L3: kept), not the rest.
	info := Info{L1D: 48 << 10, L2: 2 << 20, L3: 100 << 20}
	info.merge(levels, 2)
	want := Info{L1D: 48 << 10, L2: 2 << 20, L3: 100 << 20, LineSize: 64, L1DWays: 12, L2Ways: 16, L3Ways: 15, L2Shared: 1, L3Shared: 56}
	if info.L1D != want.L1D || info.L2 != want.L2 || info.L3 != want.L3 || info.LineSize != want.LineSize ||
		info.L1DWays != want.L1DWays || info.L2Ways != want.L2Ways || info.L3Ways != want.L3Ways ||
		info.L2Shared != want.L2Shared || info.L3Shared != want.L3Shared {
		t.Errorf("merge = %+v, want %+v", info, want)
	}
	// Nothing from cpuid (arm64 Linux): sizes from sysfs.
	var arm Info
	arm.merge([4]Cache{1: {64 << 10, 4, 64, 1}, 2: {1 << 20, 8, 64, 1}}, 0)
	if arm.L1D != 64<<10 || arm.L2 != 1<<20 || arm.L3 != 0 || arm.L1DWays != 4 || arm.L2Shared != 1 || arm.L3Shared != 0 {
		t.Errorf("merge into nothing = %+v", arm)
	}
}

func TestWithDefaults(t *testing.T) {
	type caches struct{ l1d, l2, l3, line, w1, w2, w3, s2, s3 int }
	get := func(i Info) caches {
		return caches{i.L1D, i.L2, i.L3, i.LineSize, i.L1DWays, i.L2Ways, i.L3Ways, i.L2Shared, i.L3Shared}
	}
	for _, c := range []struct {
		name string
		in   Info
		want caches
	}{
		{"known stays", Info{Vendor: "AMD", Arch: "amd64", L1D: 32 << 10, L2: 1 << 20, L3: 32 << 20, LineSize: 64, L1DWays: 8, L2Ways: 8, L3Ways: 16, L2Shared: 1, L3Shared: 8},
			caches{32 << 10, 1 << 20, 32 << 20, 64, 8, 8, 16, 1, 8}},
		{"amd64 Intel, sizes only", Info{Vendor: "Intel", Arch: "amd64", Cores: 56, L1D: 48 << 10, L2: 2 << 20, L3: 105 << 20},
			caches{48 << 10, 2 << 20, 105 << 20, 64, 12, 16, 12, 1, 56}},
		{"amd64 AMD, sizes only", Info{Vendor: "AMD", Arch: "amd64", L1D: 32 << 10, L2: 512 << 10, L3: 32 << 20},
			caches{32 << 10, 512 << 10, 32 << 20, 64, 8, 8, 16, 1, 1}},
		{"amd64 nothing", Info{Arch: "amd64"}, caches{32 << 10, 1 << 20, 0, 64, 8, 8, 0, 1, 0}},
		{"arm64 nothing", Info{Arch: "arm64"}, caches{64 << 10, 1 << 20, 0, 64, 4, 8, 0, 1, 0}},
		{"Neoverse with L3", Info{Vendor: "ARM", Arch: "arm64", Cores: 64, L3: 32 << 20}, caches{64 << 10, 1 << 20, 32 << 20, 64, 4, 8, 16, 1, 64}},
		{"Apple", Info{Vendor: "Apple", Arch: "arm64", LineSize: 128}, caches{128 << 10, 12 << 20, 0, 128, 8, 12, 0, 4, 0}},
	} {
		if got := get(c.in.WithDefaults()); got != c.want {
			t.Errorf("%s: WithDefaults = %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestRead checks that Read returns a consistent description of this
// machine: no negative values, and ways and sharing only with a size.
func TestRead(t *testing.T) {
	i := Read()
	t.Logf("%+v", i)
	for name, v := range map[string]int{"Cores": i.Cores, "L1D": i.L1D, "L2": i.L2, "L3": i.L3, "LineSize": i.LineSize,
		"L1DWays": i.L1DWays, "L2Ways": i.L2Ways, "L3Ways": i.L3Ways, "L2Shared": i.L2Shared, "L3Shared": i.L3Shared} {
		if v < 0 {
			t.Errorf("%s = %d < 0", name, v)
		}
	}
	if i.L3 == 0 && (i.L3Ways != 0 || i.L3Shared != 0) {
		t.Errorf("no L3 but L3Ways %d, L3Shared %d", i.L3Ways, i.L3Shared)
	}
}
