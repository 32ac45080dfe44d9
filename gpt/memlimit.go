package gpt

import (
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// The memory limits of a process that the files of Linux's /proc and
// cgroup file systems state, parsed from an fs.FS rooted at "/" (the
// system's, or a test's): see AvailableMemory.

// cgroupMount is a cgroup file system mounted in the process's mount
// namespace: the cgroup at its root (root) is seen at point.
type cgroupMount struct {
	root, point string
}

// parseMountinfo returns the mounts of the cgroup v2 file system and of
// the v1 hierarchy of the memory controller in the contents of
// /proc/self/mountinfo (the first of each; ok false for one not mounted).
func parseMountinfo(s string) (v2, v1 cgroupMount, okV2, okV1 bool) {
	for line := range strings.Lines(s) {
		f := strings.Fields(line)
		sep := -1
		for i, x := range f {
			if x == "-" && i >= 6 {
				sep = i
				break
			}
		}
		if sep < 0 || sep+3 > len(f) {
			continue
		}
		m := cgroupMount{root: unescapeMount(f[3]), point: unescapeMount(f[4])}
		switch fstype, super := f[sep+1], f[sep+3]; {
		case fstype == "cgroup2" && !okV2:
			v2, okV2 = m, true
		case fstype == "cgroup" && !okV1 && hasOption(super, "memory"):
			v1, okV1 = m, true
		}
	}
	return
}

// hasOption reports whether the comma-separated options opts hold o.
func hasOption(opts, o string) bool {
	for x := range strings.SplitSeq(opts, ",") {
		if x == o {
			return true
		}
	}
	return false
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space, \011,
// \012, \134).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// parseProcCgroup returns the process's cgroups in the contents of
// /proc/self/cgroup: its cgroup v2 ("0::/path") and its cgroup in the v1
// hierarchy of the memory controller ("N:memory,...:/path").
func parseProcCgroup(s string) (v2, v1 string, okV2, okV1 bool) {
	for line := range strings.Lines(s) {
		id, rest, ok := strings.Cut(strings.TrimRight(line, "\n"), ":")
		if !ok {
			continue
		}
		ctrls, p, ok := strings.Cut(rest, ":")
		if !ok {
			continue
		}
		switch {
		case id == "0" && ctrls == "" && !okV2:
			v2, okV2 = p, true
		case !okV1 && hasOption(ctrls, "memory"):
			v1, okV1 = p, true
		}
	}
	return
}

// parseCgroupValue reads a cgroup memory file's number: none is false for
// "max" (v2) and for v1's page-rounded math.MaxInt64 or anything above
// 2^62, which mean no limit.
func parseCgroupValue(s string) (n int64, limited, ok bool) {
	s = strings.TrimSpace(s)
	if s == "max" {
		return 0, false, true
	}
	u, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, false, false
	}
	if u >= 1<<62 {
		return 0, false, true
	}
	return int64(u), true, true
}

// cgroupDirs returns the directories of the cgroup cg (as /proc/self/cgroup
// names it) and of its parents in mount m, in fsys's names (no leading
// slash), the cgroup's first. A cgroup outside the mount's root (the
// mount of another namespace) is taken as the mount's root.
func cgroupDirs(m cgroupMount, cg string) []string {
	r, c := path.Clean("/"+m.root), path.Clean("/"+cg)
	rel := "/"
	switch {
	case r == "/":
		rel = c
	case strings.HasPrefix(c, r+"/"):
		rel = c[len(r):]
	}
	point := strings.TrimPrefix(path.Clean("/"+m.point), "/")
	var dirs []string
	for {
		dirs = append(dirs, path.Join(point, rel))
		if rel == "/" {
			return dirs
		}
		rel = path.Dir(rel)
	}
}

// cgroupLimit returns the least, over the cgroup cg of mount m and its
// parents, of the limit in file limitName less the usage in usageName,
// naming the file of the one that binds; false when none of them sets a
// limit (missing files set none).
func cgroupLimit(fsys fs.FS, m cgroupMount, cg, limitName, usageName string) (memLimit, bool) {
	var best memLimit
	found := false
	for _, d := range cgroupDirs(m, cg) {
		lb, err := fs.ReadFile(fsys, path.Join(d, limitName))
		if err != nil {
			continue
		}
		lim, limited, ok := parseCgroupValue(string(lb))
		if !ok || !limited {
			continue
		}
		var used int64
		if ub, err := fs.ReadFile(fsys, path.Join(d, usageName)); err == nil {
			if u, _, ok := parseCgroupValue(string(ub)); ok {
				used = u
			}
		}
		l := memLimit{lim - used, "the cgroup's " + limitName + " (/" + path.Join(d, limitName) + ") less its " + usageName}
		if !found || l.avail < best.avail {
			best, found = l, true
		}
	}
	return best, found
}

// cgroupLimits returns the memory limits of the process's cgroups (v2,
// and v1's memory controller) as the files of fsys, rooted at "/", state
// them: /proc/self/mountinfo and /proc/self/cgroup to find them, then
// their limit and usage files.
func cgroupLimits(fsys fs.FS) []memLimit {
	mi, err := fs.ReadFile(fsys, "proc/self/mountinfo")
	if err != nil {
		return nil
	}
	pc, err := fs.ReadFile(fsys, "proc/self/cgroup")
	if err != nil {
		return nil
	}
	m2, m1, okM2, okM1 := parseMountinfo(string(mi))
	c2, c1, okC2, okC1 := parseProcCgroup(string(pc))
	var lims []memLimit
	if okM2 && okC2 {
		if l, ok := cgroupLimit(fsys, m2, c2, "memory.max", "memory.current"); ok {
			lims = append(lims, l)
		}
	}
	if okM1 && okC1 {
		if l, ok := cgroupLimit(fsys, m1, c1, "memory.limit_in_bytes", "memory.usage_in_bytes"); ok {
			lims = append(lims, l)
		}
	}
	return lims
}

// parseStatusKB returns the field key ("VmSize:") of /proc/self/status's
// contents s, given in kB, in bytes.
func parseStatusKB(s, key string) (int64, bool) {
	for line := range strings.Lines(s) {
		rest, ok := strings.CutPrefix(line, key)
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, false
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || n < 0 || n > 1<<53 {
			return 0, false
		}
		return n << 10, true
	}
	return 0, false
}

// rlimitAvail is the memory a soft resource limit cur (bytes; infinite:
// false) leaves: cur less what the process has of it already (the field
// used of /proc/self/status's contents status, 0 when it is not there)
// and margin.
func rlimitAvail(cur uint64, infinite bool, status, used string, margin int64, src string) (memLimit, bool) {
	if infinite || cur >= 1<<62 {
		return memLimit{}, false
	}
	have, _ := parseStatusKB(status, used)
	return memLimit{int64(cur) - have - margin, src}, true
}
