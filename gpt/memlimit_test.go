package gpt

import (
	"math"
	"runtime/debug"
	"strings"
	"testing"
	"testing/fstest"
)

// Mount tables of the layouts the cgroup tests use.
const (
	mountsV2 = `25 30 0:22 / /proc rw,nosuid - proc proc rw
30 1 0:26 / / rw - overlay overlay rw
35 30 0:30 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate
`
	// A container's namespace: its cgroup is the mount's root.
	mountsV2Container = `1400 1300 0:30 /kubepods/pod1/ctr /sys/fs/cgroup ro - cgroup2 cgroup ro
`
	mountsV1 = `30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`
	mountsSpace = `35 30 0:30 / /sys/fs/cgroup\040v2 rw - cgroup2 cgroup2 rw
`
)

// TestCgroupLimits reads the cgroup files of each layout: v2 with its
// memory.max in the process's cgroup or a parent, "max" for none, v1
// with the page-rounded MaxInt64 for none, a container's namespace, and
// files or mounts missing. The least limit less usage binds and is named
// by its file.
func TestCgroupLimits(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	cases := []struct {
		name  string
		files fstest.MapFS
		avail []int64  // the limits found
		src   []string // substrings of their sources
	}{
		{"v2 own limit", fstest.MapFS{
			"proc/self/mountinfo":                         file(mountsV2),
			"proc/self/cgroup":                            file("0::/user.slice/app\n"),
			"sys/fs/cgroup/user.slice/app/memory.max":     file("1073741824\n"),
			"sys/fs/cgroup/user.slice/app/memory.current": file("73741824\n"),
		}, []int64{1000000000}, []string{"the cgroup's memory.max (/sys/fs/cgroup/user.slice/app/memory.max) less its memory.current"}},
		{"v2 parent binds", fstest.MapFS{
			"proc/self/mountinfo":                         file(mountsV2),
			"proc/self/cgroup":                            file("0::/user.slice/app\n"),
			"sys/fs/cgroup/user.slice/app/memory.max":     file("max\n"),
			"sys/fs/cgroup/user.slice/app/memory.current": file("100\n"),
			"sys/fs/cgroup/user.slice/memory.max":         file("5000\n"),
			"sys/fs/cgroup/user.slice/memory.current":     file("1000\n"),
		}, []int64{4000}, []string{"/sys/fs/cgroup/user.slice/memory.max"}},
		{"v2 max everywhere", fstest.MapFS{
			"proc/self/mountinfo":            file(mountsV2),
			"proc/self/cgroup":               file("0::/a\n"),
			"sys/fs/cgroup/a/memory.max":     file("max\n"),
			"sys/fs/cgroup/a/memory.current": file("100\n"),
		}, nil, nil},
		{"v2 usage above the limit", fstest.MapFS{
			"proc/self/mountinfo":            file(mountsV2),
			"proc/self/cgroup":               file("0::/a\n"),
			"sys/fs/cgroup/a/memory.max":     file("1000\n"),
			"sys/fs/cgroup/a/memory.current": file("1500\n"),
		}, []int64{-500}, []string{"memory.max"}},
		{"v2 no usage file", fstest.MapFS{
			"proc/self/mountinfo":        file(mountsV2),
			"proc/self/cgroup":           file("0::/a\n"),
			"sys/fs/cgroup/a/memory.max": file("2048\n"),
		}, []int64{2048}, []string{"memory.max"}},
		{"v2 container namespace", fstest.MapFS{
			"proc/self/mountinfo":          file(mountsV2Container),
			"proc/self/cgroup":             file("0::/\n"),
			"sys/fs/cgroup/memory.max":     file("3000\n"),
			"sys/fs/cgroup/memory.current": file("1000\n"),
		}, []int64{2000}, []string{"(/sys/fs/cgroup/memory.max)"}},
		{"v2 mount point with a space", fstest.MapFS{
			"proc/self/mountinfo":           file(mountsSpace),
			"proc/self/cgroup":              file("0::/a\n"),
			"sys/fs/cgroup v2/a/memory.max": file("3000\n"),
		}, []int64{3000}, []string{"/sys/fs/cgroup v2/a/memory.max"}},
		{"v1 limit", fstest.MapFS{
			"proc/self/mountinfo": file(mountsV1),
			"proc/self/cgroup":    file("4:memory:/docker/abc\n1:cpu:/\n0::/\n"),
			"sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": file("536870912\n"),
			"sys/fs/cgroup/memory/docker/abc/memory.usage_in_bytes": file("36870912\n"),
			"sys/fs/cgroup/memory/memory.limit_in_bytes":            file("9223372036854771712\n"),
		}, []int64{500000000}, []string{"the cgroup's memory.limit_in_bytes (/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes) less its memory.usage_in_bytes"}},
		{"v1 none", fstest.MapFS{
			"proc/self/mountinfo": file(mountsV1),
			"proc/self/cgroup":    file("4:memory:/process_api/x\n0::/\n"),
			"sys/fs/cgroup/memory/process_api/x/memory.limit_in_bytes": file("9223372036854771712\n"),
			"sys/fs/cgroup/memory/process_api/x/memory.usage_in_bytes": file("168349696\n"),
		}, nil, nil},
		{"v1 and v2 both", fstest.MapFS{
			"proc/self/mountinfo":                          file(mountsV1),
			"proc/self/cgroup":                             file("4:memory:/a\n0::/b\n"),
			"sys/fs/cgroup/memory/a/memory.limit_in_bytes": file("7000\n"),
			"sys/fs/cgroup/unified/b/memory.max":           file("6000\n"),
		}, []int64{6000, 7000}, []string{"/sys/fs/cgroup/unified/b/memory.max", "memory.limit_in_bytes"}},
		{"no mountinfo", fstest.MapFS{"proc/self/cgroup": file("0::/\n")}, nil, nil},
		{"no cgroup file", fstest.MapFS{"proc/self/mountinfo": file(mountsV2)}, nil, nil},
		{"not a number", fstest.MapFS{
			"proc/self/mountinfo":        file(mountsV2),
			"proc/self/cgroup":           file("0::/a\n"),
			"sys/fs/cgroup/a/memory.max": file("lots\n"),
		}, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := cgroupLimits(c.files)
			if len(got) != len(c.avail) {
				t.Fatalf("limits %+v; want %d of them", got, len(c.avail))
			}
			for i, l := range got {
				if l.avail != c.avail[i] || !strings.Contains(l.src, c.src[i]) {
					t.Errorf("limit %d: %d, %q; want %d from %q", i, l.avail, l.src, c.avail[i], c.src[i])
				}
			}
		})
	}
}

func TestParseCgroupValue(t *testing.T) {
	for _, c := range []struct {
		in          string
		n           int64
		limited, ok bool
	}{
		{"1024\n", 1024, true, true}, {"max\n", 0, false, true}, {"9223372036854771712", 0, false, true},
		{"4611686018427387904", 0, false, true}, {"0", 0, true, true}, {"-1", 0, false, false}, {"", 0, false, false}, {"12kB", 0, false, false},
	} {
		n, limited, ok := parseCgroupValue(c.in)
		if n != c.n || limited != c.limited || ok != c.ok {
			t.Errorf("parseCgroupValue(%q) = %d, %v, %v; want %d, %v, %v", c.in, n, limited, ok, c.n, c.limited, c.ok)
		}
	}
}

// TestRlimitAvail: a soft limit less what the process has mapped of it
// (VmSize, VmData of /proc/self/status) and the margin; none for an
// infinite limit; the whole limit when the status lacks the field.
func TestRlimitAvail(t *testing.T) {
	status := "Name:\ttinygpt\nVmPeak:\t 1300000 kB\nVmSize:\t 1226924 kB\nVmData:\t   40416 kB\n"
	for _, c := range []struct {
		name     string
		cur      uint64
		infinite bool
		status   string
		used     string
		want     int64
		ok       bool
	}{
		{"ulimit -v", 3000000 << 10, false, status, "VmSize:", (3000000-1226924)<<10 - 100, true},
		{"ulimit -d", 1 << 30, false, status, "VmData:", 1<<30 - 40416<<10 - 100, true},
		{"unlimited", ^uint64(0), true, status, "VmSize:", 0, false},
		{"no status", 1 << 30, false, "", "VmSize:", 1<<30 - 100, true},
		{"mapped beyond the limit", 1 << 20, false, status, "VmSize:", 1<<20 - 1226924<<10 - 100, true},
	} {
		l, ok := rlimitAvail(c.cur, c.infinite, c.status, c.used, 100, "src")
		if ok != c.ok || (ok && l.avail != c.want) {
			t.Errorf("%s: %d, %v; want %d, %v", c.name, l.avail, ok, c.want, c.ok)
		}
	}
}

func TestParseStatusKB(t *testing.T) {
	for _, c := range []struct {
		s, key string
		want   int64
		ok     bool
	}{
		{"VmSize:\t  100 kB\n", "VmSize:", 102400, true}, {"VmSize:\t  100\n", "VmSize:", 0, false},
		{"VmData:\t 5 kB\n", "VmSize:", 0, false}, {"VmSize: x kB\n", "VmSize:", 0, false},
	} {
		if got, ok := parseStatusKB(c.s, c.key); got != c.want || ok != c.ok {
			t.Errorf("parseStatusKB(%q, %q) = %d, %v; want %d, %v", c.s, c.key, got, ok, c.want, c.ok)
		}
	}
}

// TestAvailableMemoryLimits: the least limit binds and is named; a
// negative figure is 0; GOMEMLIMIT, when set, is one of the limits.
func TestAvailableMemoryLimits(t *testing.T) {
	n, src := leastLimit([]memLimit{{5000, "MemAvailable"}, {3000, "cgroup"}, {4000, "ulimit -v"}})
	if n != 3000 || src != "cgroup" {
		t.Errorf("leastLimit: %d, %q; want 3000 from the cgroup", n, src)
	}
	if n, src := leastLimit([]memLimit{{5000, "a"}, {-7, "b"}}); n != 0 || src != "b" {
		t.Errorf("leastLimit of a negative figure: %d, %q; want 0 from b", n, src)
	}
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	if old == math.MaxInt64 {
		if _, ok := goMemLimit(); ok {
			t.Error("goMemLimit found a limit where none is set")
		}
	}
	debug.SetMemoryLimit(1 << 40)
	l, ok := goMemLimit()
	if !ok || l.avail <= 0 || l.avail >= 1<<40 || !strings.Contains(l.src, "GOMEMLIMIT") {
		t.Errorf("goMemLimit under a limit of 1 TiB: %d, %q, %v", l.avail, l.src, ok)
	}
	debug.SetMemoryLimit(64 << 20)
	t.Setenv(MemoryEnv, "") // not a number: ignored
	if n, src := AvailableMemory(); n >= 64<<20 || !strings.Contains(src, "GOMEMLIMIT") {
		t.Errorf("AvailableMemory under GOMEMLIMIT=64MiB: %d, %q", n, src)
	}
}
