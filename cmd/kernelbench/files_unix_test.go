//go:build unix

package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSpecialFiles: a -compare file that is a FIFO, a link to /dev/zero
// or above the size limit, and an -o or -plot file that is a FIFO, a
// device or a link to one, or a link into a directory that does not
// exist, are refused before the run, at once, with exit
// status 1 and one line naming the file, and are left as they were.
// /dev/null itself is given only to an unprivileged test (a wrong run
// could not replace it then); the link to it stands in for root.
func TestSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	if err := syscall.Mkfifo(p("fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, to := range map[string]string{"zero": "/dev/zero", "null": "/dev/null", "null.png": "/dev/null", "dangling": "/nonexistent/dir/run.txt"} {
		if err := os.Symlink(to, p(link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(p("huge"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p("huge"), maxBenchFileBytes+1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-kernels", "dot", "-compare", p("fifo")}, "kernelbench: -compare: " + p("fifo") + ": not a regular file (a named pipe (FIFO))"},
		{[]string{"-kernels", "dot", "-compare", p("zero")}, "kernelbench: -compare: " + p("zero") + ": not a regular file (a character device)"},
		{[]string{"-kernels", "dot", "-compare", p("huge")}, "kernelbench: -compare: " + p("huge") + ": 67108865 bytes, more than the limit of 67108864"},
		{[]string{"-kernels", "dot", "-o", p("fifo")}, "kernelbench: -o " + p("fifo") + ": not a regular file (a named pipe (FIFO))"},
		{[]string{"-kernels", "dot", "-o", p("null")}, "kernelbench: -o " + p("null") + ": not a regular file (/dev/null, which it links to, is a character device)"},
		{[]string{"-kernels", "dot", "-o", p("dangling")}, "kernelbench: -o " + p("dangling") + ": cannot create a file in /nonexistent/dir (for /nonexistent/dir/run.txt, which it links to): no such file or directory"},
		{[]string{"-kernels", "gemm", "-plot", p("null.png")}, "kernelbench: -plot " + p("null.png") + ": not a regular file (/dev/null, which it links to, is a character device)"},
	}
	if os.Geteuid() != 0 {
		cases = append(cases, struct {
			args []string
			want string
		}{[]string{"-kernels", "dot", "-o", "/dev/null"}, "kernelbench: -o /dev/null: not a regular file (a character device)"})
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			type result struct {
				code           int
				stdout, stderr string
			}
			done := make(chan result, 1)
			go func() {
				code, stdout, stderr := kernelbench(t, c.args...)
				done <- result{code, stdout, stderr}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(time.Minute):
				t.Fatal("kernelbench has not returned after a minute")
			}
			if r.code != 1 || r.stdout != "" || r.stderr != c.want+"\n" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and stderr %q", r.code, r.stdout, r.stderr, c.want)
			}
		})
	}
	for path, want := range map[string]fs.FileMode{p("fifo"): fs.ModeNamedPipe, p("null"): fs.ModeSymlink, p("null.png"): fs.ModeSymlink, p("zero"): fs.ModeSymlink, p("dangling"): fs.ModeSymlink, "/dev/null": fs.ModeDevice | fs.ModeCharDevice} {
		if st, err := os.Lstat(path); err != nil || st.Mode().Type() != want {
			t.Errorf("%s after the runs: %v, %v; want type %v", path, st, err, want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 6 {
		t.Errorf("%d entries in %s, want the 6 made", len(ents), dir)
	}
}
