//go:build unix

package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/simdgpt/simdgpt/internal/readfile"
)

// TestNotRegular: a FIFO, a device, a directory, or a link to one of
// them, is refused by Check and by Write with one line naming the path
// and what it is, and is left as it was, with no temporary file beside
// it. /dev/null itself is written to only by an unprivileged test (a
// wrong Write could not replace it then); as root the link to it stands
// in.
func TestNotRegular(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	if err := syscall.Mkfifo(p("fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(p("dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	for link, to := range map[string]string{"tonull": "/dev/null", "tofifo": "fifo", "todir": p("dir"), "loop": "loop"} {
		if err := os.Symlink(to, p(link)); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name, path, want string
		mode             fs.FileMode // Lstat's type afterwards
	}{
		{"FIFO", p("fifo"), "not a regular file (a named pipe (FIFO))", fs.ModeNamedPipe},
		{"directory", p("dir"), "not a regular file (a directory)", fs.ModeDir},
		{"link to /dev/null", p("tonull"), "not a regular file (/dev/null, which it links to, is a character device)", fs.ModeSymlink},
		{"link to a FIFO", p("tofifo"), "not a regular file (" + p("fifo") + ", which it links to, is a named pipe (FIFO))", fs.ModeSymlink},
		{"link to a directory", p("todir"), "not a regular file (" + p("dir") + ", which it links to, is a directory)", fs.ModeSymlink},
		{"link loop", p("loop"), "too many levels of symbolic links", fs.ModeSymlink},
	}
	if r, w, err := os.Pipe(); err == nil && runtime.GOOS == "linux" {
		// What /dev/stdout leads to when the output is piped.
		defer r.Close()
		defer w.Close()
		cases = append(cases, struct {
			name, path, want string
			mode             fs.FileMode
		}{"/proc link to a pipe", fmt.Sprintf("/proc/self/fd/%d", w.Fd()), "not a regular file (a link to a named pipe (FIFO))", fs.ModeSymlink})
	}
	if os.Geteuid() != 0 {
		cases = append(cases, struct {
			name, path, want string
			mode             fs.FileMode
		}{"/dev/null", "/dev/null", "not a regular file (a character device)", fs.ModeDevice | fs.ModeCharDevice})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := "write " + c.path + ": " + c.want
			for _, err := range []error{Check(c.path), Write(c.path, []byte("x"))} {
				if err == nil || err.Error() != want || strings.Count(err.Error(), "\n") != 0 {
					t.Errorf("error %v, want %q", err, want)
				}
				if c.name != "link loop" && !errors.Is(err, readfile.ErrNotRegular) {
					t.Errorf("error %v is not readfile.ErrNotRegular", err)
				}
			}
			if st, err := os.Lstat(c.path); err != nil || st.Mode().Type() != c.mode {
				t.Errorf("after the write: %v, %v; want type %v", st, err, c.mode)
			}
		})
	}
	if st, err := os.Stat("/dev/null"); err != nil || st.Mode().Type() != fs.ModeDevice|fs.ModeCharDevice {
		t.Errorf("/dev/null after the writes: %v, %v", st, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 6 {
		t.Errorf("%d entries in the directory, want the 6 made (temporary files left?)", len(ents))
	}
}

// TestWriteThroughLink: a link to a regular file (directly, relatively,
// through another link, into another directory) replaces that file and
// stays a link; a link to nothing creates its file.
func TestWriteThroughLink(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	file := filepath.Join(other, "file")
	if err := os.WriteFile(file, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	links := []struct{ link, to string }{
		{filepath.Join(dir, "abs"), file},
		{filepath.Join(other, "rel"), "file"},
		{filepath.Join(dir, "chain"), filepath.Join(other, "rel")},
		{filepath.Join(dir, "dangling"), "../" + filepath.Base(dir) + "/created"},
	}
	for _, l := range links {
		if err := os.Symlink(l.to, l.link); err != nil {
			t.Fatal(err)
		}
	}
	for i, l := range links {
		want := "contents " + strings.Repeat("x", i)
		if err := Check(l.link); err != nil {
			t.Errorf("Check(%s): %v", l.link, err)
		}
		if err := Write(l.link, []byte(want)); err != nil {
			t.Fatalf("Write(%s): %v", l.link, err)
		}
		if st, err := os.Lstat(l.link); err != nil || st.Mode().Type() != fs.ModeSymlink {
			t.Errorf("%s after the write: %v, %v; want still a link", l.link, st, err)
		}
		target := file
		if i == 3 {
			target = filepath.Join(dir, "created")
		}
		if got, err := os.ReadFile(target); string(got) != want {
			t.Errorf("%s holds %q, %v after writing %s; want %q", target, got, err, l.link, want)
		}
		if st, err := os.Stat(target); err != nil || st.Mode().Perm() != Perm {
			t.Errorf("%s: %v, %v; want mode %v", target, st, err, os.FileMode(Perm))
		}
	}
	for d, n := range map[string]int{dir: 4, other: 2} {
		if ents, _ := os.ReadDir(d); len(ents) != n {
			t.Errorf("%d entries in %s, want %d (temporary files left?)", len(ents), d, n)
		}
	}
	// A temporary file left beside the link's file is found from the link.
	stale := filepath.Join(other, ".file.tmp123")
	if err := os.WriteFile(stale, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if removed, err := RemoveStale(links[0].link); err != nil || len(removed) != 1 || removed[0] != stale {
		t.Errorf("RemoveStale through the link: %q, %v; want [%s]", removed, err, stale)
	}
}

// TestCheckFollowsLinks: whatever a write would fail on where path's
// links lead (a dangling link into a missing directory, directly,
// relatively or through a chain of links, a read-only directory, a file
// where a directory should be), Check fails on before anything is
// written, with the very error Write gives, naming the path, the
// directory and the file the link leads to; nothing is created and the
// links stay.
func TestCheckFollowsLinks(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	if err := os.Mkdir(p("ro"), 0o555); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p("file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := p("nonexistent/dir/ck.safetensors")
	for link, to := range map[string]string{
		"dangling": missing, "relative": "nonexistent/dir/ck.safetensors", "chain": "chain2", "chain2": "dangling",
		"tro": p("ro/ck.safetensors"), "underfile": p("file/ck.safetensors"),
	} {
		if err := os.Symlink(to, p(link)); err != nil {
			t.Fatal(err)
		}
	}
	root := os.Geteuid() == 0
	cases := []struct {
		name, path, want string
		skip             bool
	}{
		{"dangling link into a missing directory", p("dangling"), "cannot create a file in " + p("nonexistent/dir") + " (for " + missing + ", which it links to): no such file or directory", false},
		{"relative link into a missing directory", p("relative"), "cannot create a file in " + p("nonexistent/dir") + " (for " + missing + ", which it links to): no such file or directory", false},
		{"chain of links into a missing directory", p("chain"), "cannot create a file in " + p("nonexistent/dir") + " (for " + missing + ", which it links to): no such file or directory", false},
		{"path in a missing directory", p("nonexistent/f"), "cannot create a file in " + p("nonexistent") + ": no such file or directory", false},
		{"link under a regular file", p("underfile"), "not a directory", false},
		// root ignores directory permissions.
		{"link into a read-only directory", p("tro"), "cannot create a file in " + p("ro") + " (for " + p("ro/ck.safetensors") + ", which it links to): permission denied", root},
		{"path in a read-only directory", p("ro/f"), "cannot create a file in " + p("ro") + ": permission denied", root},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.skip {
				t.Skip("running as root, which directory permissions do not stop")
			}
			cerr, werr := Check(c.path), Write(c.path, []byte("x"))
			if cerr == nil || !strings.HasPrefix(cerr.Error(), "write "+c.path+": ") || !strings.Contains(cerr.Error(), c.want) || strings.Contains(cerr.Error(), "\n") {
				t.Errorf("Check: %v; want one line %q containing %q", cerr, "write "+c.path+": ", c.want)
			}
			if werr == nil || cerr == nil || werr.Error() != cerr.Error() {
				t.Errorf("Write: %v; want Check's error %v", werr, cerr)
			}
			if c.path != p("nonexistent/f") && c.path != p("ro/f") {
				if st, err := os.Lstat(c.path); err != nil || st.Mode().Type() != fs.ModeSymlink {
					t.Errorf("%s afterwards: %v, %v; want still a link", c.path, st, err)
				}
			}
		})
	}
	if _, err := os.Lstat(p("nonexistent")); err == nil {
		t.Error("Check or Write created the missing directory")
	}
	for _, d := range []string{dir, p("ro")} {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			if strings.Contains(e.Name(), ".tmp") {
				t.Errorf("temporary file %s left in %s", e.Name(), d)
			}
		}
	}
}

// TestCheckDir: a directory that exists, or could be made under the
// nearest existing parent, passes (and is not made); a file, a dangling
// link or a read-only parent in the way is refused with one line naming
// the directory.
func TestCheckDir(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	for _, d := range []string{"ro", "rodir", "exists"} {
		if err := os.Mkdir(p(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(p("file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(p("gone"), p("dangling")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(p("exists"), p("todir")); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"ro", "rodir"} {
		if err := os.Chmod(p(d), 0o555); err != nil {
			t.Fatal(err)
		}
	}
	root := os.Geteuid() == 0
	cases := []struct {
		name, dir, want string // want "": no error
		skip            bool
	}{
		{"existing", p("exists"), "", false},
		{"link to a directory", p("todir"), "", false},
		{"missing, two levels", p("new/sub"), "", false},
		{"a regular file", p("file"), "create " + p("file") + ": it is a regular file, not a directory", false},
		{"under a regular file", p("file/sub/deeper"), "create " + p("file/sub/deeper") + ": " + p("file") + " is a regular file, not a directory", false},
		{"dangling link", p("dangling/sub"), "create " + p("dangling/sub") + ": " + p("dangling") + " is a link to " + p("gone") + ", which does not exist", false},
		{"under a read-only directory", p("ro/new"), "create " + p("ro/new") + ": cannot create a directory in " + p("ro") + ": permission denied", root},
		{"a read-only directory", p("rodir"), "create files in " + p("rodir") + ": permission denied", root},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.skip {
				t.Skip("running as root, which directory permissions do not stop")
			}
			err := CheckDir(c.dir)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("CheckDir(%s): %v", c.dir, err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("CheckDir(%s): %v; want %q", c.dir, err, c.want)
			}
		})
	}
	if _, err := os.Lstat(p("new")); err == nil {
		t.Error("CheckDir made the directory it checked")
	}
	for _, d := range []string{dir, p("exists"), p("ro")} {
		if ents, _ := os.ReadDir(d); slicesContainTmp(ents) {
			t.Errorf("a temporary directory left in %s", d)
		}
	}
}

func slicesContainTmp(ents []os.DirEntry) bool {
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp") {
			return true
		}
	}
	return false
}
