package main

// The README describes the kernels and the module's folders in two tables,
// which these tests hold to the code:
//
//   - the kernel table (the Markdown table whose header's first cell is
//     "kernel") is the one apigen generates between its markers from the
//     list in kernels.go (readme.go), as the list is now: go generate has
//     been run since the list last changed; it has one row per kernel of
//     the list, each row naming exactly one kernel in its first cell as
//     `Name`, and no other;
//   - the layout table (header "path") names, in its first cells as
//     `dir/`, every package folder of the module: every directory below
//     the module root holding a .go file, except testdata directories,
//     directories the go tool ignores (names starting with "." or "_") and
//     directories with a go.mod of their own, which are other modules
//     (asm/gen, perf) and are listed, if at all, as one row with all they
//     hold. The module root is not a package folder. Every path the table
//     names exists.
//
// Besides, every path of the repository the README quotes (a code span
// whose first element is a top-level entry of the repository, FAMILY
// standing for any name, or a relative link target) exists, so a file
// that moved is not described at its old place; and every Go code block
// that calls package kernels is made of the lines of the package's
// examples (kernels/example_*_test.go), which go test compiles and
// checks, so the README's calls match the API.
//
// The tests live here, beside the kernel list, and read the repository's
// files, so they run on every architecture and build tag.

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// moduleRoot returns the directory of the go.mod of modulePath, the
// nearest one above the test's working directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
			if goModPath(string(b)) == modulePath {
				return dir
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no go.mod of %s above the working directory", modulePath)
		}
		dir = parent
	}
}

// goModPath returns the module path of a go.mod's text.
func goModPath(gomod string) string {
	for _, line := range strings.Split(gomod, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

// readREADME returns the module root and the text of its README.md.
func readREADME(t *testing.T) (root, text string) {
	t.Helper()
	root = moduleRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return root, string(b)
}

// withoutFences returns the lines of a Markdown text outside its fenced
// code blocks (``` lines), so that a table or code span inside an example
// is not read as the README's own.
func withoutFences(text string) []string {
	var out []string
	in := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			in = !in
			continue
		}
		if !in {
			out = append(out, line)
		}
	}
	return out
}

// tableCells splits a Markdown table row into its trimmed cells, or
// returns nil when line is not a row.
func tableCells(line string) []string {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "|") || !strings.HasSuffix(line, "|") || len(line) < 2 {
		return nil
	}
	cells := strings.Split(line[1:len(line)-1], "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

// firstCells returns the first cell of every body row of each table of
// text whose header's first cell is header, and how many such tables
// there are.
func firstCells(text, header string) (cells []string, tables int) {
	lines := withoutFences(text)
	for i := 0; i < len(lines); i++ {
		h := tableCells(lines[i])
		if len(h) == 0 || h[0] != header {
			continue
		}
		if i+1 >= len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[i+1]), "|---") {
			continue
		}
		if i > 0 && tableCells(lines[i-1]) != nil {
			continue // a body row that happens to start with header
		}
		tables++
		for i += 2; i < len(lines); i++ {
			row := tableCells(lines[i])
			if row == nil {
				break
			}
			cells = append(cells, row[0])
		}
	}
	return cells, tables
}

var codeSpan = regexp.MustCompile("`([^`]+)`")

// codeSpans returns the contents of the code spans of s.
func codeSpans(s string) []string {
	var out []string
	for _, m := range codeSpan.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// kernelTableProblems returns what is wrong with the kernel table of
// text against the kernels names: each problem a line.
func kernelTableProblems(text string, names []string) []string {
	cells, tables := firstCells(text, "kernel")
	if tables != 1 {
		return []string{"want one table whose header starts with \"kernel\", found " + strconv.Itoa(tables)}
	}
	var problems []string
	rows := map[string]int{}
	for _, c := range cells {
		spans := codeSpans(c)
		if len(spans) != 1 {
			problems = append(problems, "row "+strconv.Quote(c)+" names "+strconv.Itoa(len(spans))+" kernels, want one")
		}
		for _, s := range spans {
			rows[s]++
		}
	}
	for _, n := range names {
		switch rows[n] {
		case 0:
			problems = append(problems, "kernel "+n+" has no row")
		case 1:
		default:
			problems = append(problems, "kernel "+n+" has "+strconv.Itoa(rows[n])+" rows")
		}
	}
	for _, s := range sortedKeys(rows) {
		if !slices.Contains(names, s) {
			problems = append(problems, "row `"+s+"` is not a kernel of the list")
		}
	}
	return problems
}

// layoutTableProblems returns what is wrong with the layout table of
// text, for a module whose package folders (slash-separated, relative to
// the root) are folders and in which exists reports whether a path
// (slash-separated, relative) exists.
func layoutTableProblems(text string, folders []string, exists func(string) bool) []string {
	cells, tables := firstCells(text, "path")
	if tables != 1 {
		return []string{"want one table whose header starts with \"path\", found " + strconv.Itoa(tables)}
	}
	var problems []string
	listed := map[string]bool{}
	for _, c := range cells {
		spans := codeSpans(c)
		if len(spans) == 0 {
			problems = append(problems, "row "+strconv.Quote(c)+" names no folder")
		}
		for _, s := range spans {
			if !strings.HasSuffix(s, "/") {
				problems = append(problems, "`"+s+"` is not a folder (dir/)")
				continue
			}
			listed[s] = true
			if !exists(strings.TrimSuffix(s, "/")) {
				problems = append(problems, "`"+s+"` does not exist")
			}
		}
	}
	for _, f := range folders {
		if !listed[f+"/"] {
			problems = append(problems, "package folder "+f+"/ has no row")
		}
	}
	return problems
}

// packageFolders returns the package folders of the module at root, by
// the rule of the file comment, slash-separated and relative to root.
func packageFolders(root string) ([]string, error) {
	var folders []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if path != root {
			name := d.Name()
			if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		entries, err := os.ReadDir(path)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".go") {
				if path != root {
					rel, err := filepath.Rel(root, path)
					if err != nil {
						return err
					}
					folders = append(folders, filepath.ToSlash(rel))
				}
				break
			}
		}
		return nil
	})
	return folders, err
}

var (
	repoPathSpan = regexp.MustCompile(`^[A-Za-z0-9_.*/-]+$`)
	linkTarget   = regexp.MustCompile(`\]\(([^)\s]+)\)`)
)

// pathProblems returns the paths of the repository that text quotes and
// that do not exist: code spans that look like a path whose first element
// is one of top (the repository's top-level entries), and relative link
// targets (without their #anchor). FAMILY in a span stands for any name;
// glob finds the matches of a slash-separated pattern relative to the
// root.
func pathProblems(text string, top []string, glob func(string) []string) []string {
	var problems []string
	seen := map[string]bool{}
	check := func(p, what string) {
		if seen[p] {
			return
		}
		seen[p] = true
		pattern := strings.TrimSuffix(strings.ReplaceAll(p, "FAMILY", "*"), "/")
		if len(glob(pattern)) == 0 {
			problems = append(problems, what+" "+p+" does not exist")
		}
	}
	// A code span may run over a line break within a paragraph: the text
	// outside the fences is read as a whole.
	prose := strings.Join(withoutFences(text), "\n")
	for _, s := range codeSpans(prose) {
		first, _, ok := strings.Cut(s, "/")
		if ok && repoPathSpan.MatchString(s) && slices.Contains(top, first) {
			check(s, "path")
		}
	}
	for _, m := range linkTarget.FindAllStringSubmatch(prose, -1) {
		target, _, _ := strings.Cut(m[1], "#")
		if target == "" || strings.Contains(target, "://") {
			continue
		}
		check(target, "link target")
	}
	return problems
}

// exampleProblems returns the lines of the Go code blocks of text that
// call package kernels and are not lines of examples, each compared with
// its // comment removed and its spaces trimmed; import lines are not
// compared.
func exampleProblems(text string, examples []string) []string {
	known := map[string]bool{}
	for _, e := range examples {
		for _, line := range strings.Split(e, "\n") {
			known[codeLine(line)] = true
		}
	}
	var problems []string
	var block []string
	in, goBlock := false, false
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			if in && goBlock && strings.Contains(strings.Join(block, "\n"), "kernels.") {
				for _, b := range block {
					c := codeLine(b)
					if c == "" || strings.HasPrefix(c, "import ") || known[c] {
						continue
					}
					problems = append(problems, "line "+strconv.Quote(c)+" of a Go block is not in an example")
				}
			}
			in = !in
			goBlock = in && trimmed == "```go"
			block = block[:0]
			continue
		}
		if in {
			block = append(block, line)
		}
	}
	return problems
}

// codeLine is a line of Go without its // comment and surrounding space.
func codeLine(line string) string {
	if i := strings.Index(line, "//"); i >= 0 {
		line = line[:i]
	}
	return strings.TrimSpace(line)
}

func TestREADMEKernelTable(t *testing.T) {
	_, text := readREADME(t)
	table, err := kernelTable(kernels, readmeOrder)
	if err != nil {
		t.Fatal(err)
	}
	want, err := withKernelTable(text, table)
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	if text != want {
		t.Errorf("README.md's kernel table is not the one of the list in kernels.go: run go generate ./... from the module's root")
	}
	var names []string
	for _, k := range kernels {
		names = append(names, k.name)
	}
	for _, p := range kernelTableProblems(text, names) {
		t.Errorf("README.md kernel table: %s", p)
	}
}

// TestKernelTable runs the generation of the kernel table on small lists
// and READMEs, each case with the table or the error it must give.
func TestKernelTable(t *testing.T) {
	ks := []kernel{
		{name: "Gemm", readme: "C = A·B"},
		{name: "Dot", readme: "x·y"},
	}
	withRow := func(name, row string) []kernel {
		out := slices.Clone(ks)
		for i := range out {
			if out[i].name == name {
				out[i].readme = row
			}
		}
		return out
	}
	const table = "| kernel | what it does |\n|---|---|\n| `Dot` | x·y |\n| `Gemm` | C = A·B |\n"
	tables := []struct {
		name    string
		ks      []kernel
		order   []string
		want    string
		wantErr string
	}{
		{"in the order given", ks, []string{"Dot", "Gemm"}, table, ""},
		{"a kernel left out of the order", ks, []string{"Dot"}, "", "kernel Gemm is not in readmeOrder"},
		{"an unknown name", ks, []string{"Dot", "Gemm", "Gemx"}, "", "readmeOrder names Gemx, which is not a kernel of the list"},
		{"a name twice", ks, []string{"Dot", "Gemm", "Dot"}, "", "readmeOrder names Dot twice"},
		{"no text", withRow("Dot", " "), []string{"Dot", "Gemm"}, "", "kernel Dot has no readme text"},
		{"a pipe", withRow("Dot", "x|y"), []string{"Dot", "Gemm"}, "", "kernel Dot: its readme text holds '|' or a line break"},
		{"a line break", withRow("Dot", "x\ny"), []string{"Dot", "Gemm"}, "", "kernel Dot: its readme text holds '|' or a line break"},
	}
	for _, c := range tables {
		t.Run(c.name, func(t *testing.T) {
			got, err := kernelTable(c.ks, c.order)
			if errText(err) != c.wantErr || got != c.want {
				t.Errorf("got %q, error %q; want %q, error %q", got, errText(err), c.want, c.wantErr)
			}
		})
	}

	begin, end := tableBegin+"\n", tableEnd+"\n"
	markersErr := "want the lines " + strconv.Quote(tableBegin) + " and " + strconv.Quote(tableEnd) + ", once each and in this order"
	readmes := []struct {
		name, text, want, wantErr string
	}{
		{"a stale table replaced", "# x\n\n" + begin + "\n| kernel | old |\n\n" + end + "\nafter\n",
			"# x\n\n" + begin + "\n" + table + "\n" + end + "\nafter\n", ""},
		{"a current table kept", "a\n" + begin + "\n" + table + "\n" + end,
			"a\n" + begin + "\n" + table + "\n" + end, ""},
		{"no markers", "# x\n| kernel | old |\n", "", markersErr},
		{"no end marker", begin + "| kernel | old |\n", "", markersErr},
		{"markers swapped", end + "| kernel | old |\n" + begin, "", markersErr},
		{"a marker twice", begin + end + begin + end, "", markersErr},
		{"a marker inside a line", "see " + tableBegin + "\n" + end, "", markersErr},
	}
	for _, c := range readmes {
		t.Run(c.name, func(t *testing.T) {
			got, err := withKernelTable(c.text, table)
			if errText(err) != c.wantErr || got != c.want {
				t.Errorf("got %q, error %q; want %q, error %q", got, errText(err), c.want, c.wantErr)
			}
		})
	}
}

// errText is err's message, or "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestREADMELayoutTable(t *testing.T) {
	root, text := readREADME(t)
	folders, err := packageFolders(root)
	if err != nil {
		t.Fatal(err)
	}
	// The rule finds the folders of this module and not those of the
	// modules nested in it.
	for _, want := range []string{"kernels", "kernels/internal/apigen", "cmd/tinygpt"} {
		if !slices.Contains(folders, want) {
			t.Errorf("packageFolders misses %s: %v", want, folders)
		}
	}
	for _, f := range folders {
		if strings.HasPrefix(f, "asm/gen") || strings.HasPrefix(f, "perf") || strings.Contains(f, "testdata") {
			t.Errorf("packageFolders lists %s, which is not a package folder of this module", f)
		}
	}
	exists := func(rel string) bool {
		_, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel)))
		return err == nil
	}
	for _, p := range layoutTableProblems(text, folders, exists) {
		t.Errorf("README.md layout table: %s", p)
	}
}

func TestREADMEPathsExist(t *testing.T) {
	root, text := readREADME(t)
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var top []string
	for _, e := range entries {
		top = append(top, e.Name())
	}
	for _, p := range pathProblems(text, top, rootGlob(root)) {
		t.Errorf("README.md: %s", p)
	}
}

func TestREADMEGoBlocksAreExamples(t *testing.T) {
	root, text := readREADME(t)
	files, err := filepath.Glob(filepath.Join(root, "kernels", "example_*_test.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples in kernels/ (%v)", err)
	}
	var examples []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		examples = append(examples, string(b))
	}
	for _, p := range exampleProblems(text, examples) {
		t.Errorf("README.md: %s", p)
	}
}

// rootGlob returns a glob of slash-separated patterns relative to root.
func rootGlob(root string) func(string) []string {
	return func(pattern string) []string {
		m, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(pattern)))
		return m
	}
}

// TestREADMECheckers runs the checks on small READMEs with a known fault
// each, so that each fault is seen to be reported.
func TestREADMECheckers(t *testing.T) {
	kernelTable := func(rows ...string) string {
		return "# x\n\n| kernel | what it does |\n|---|---|\n" + strings.Join(rows, "\n") + "\n\nafter\n"
	}
	layoutTable := func(rows ...string) string {
		return "| path | contents |\n|---|---|\n" + strings.Join(rows, "\n") + "\n"
	}
	names := []string{"Gemm", "Gemv"}
	folders := []string{"kernels", "kernels/lowbit"}
	existing := []string{"kernels", "kernels/lowbit", "kernels/gemm.go", "kernels/gemv.go", "PERF.md", "doc", "doc/a.png"}
	exists := func(p string) bool { return slices.Contains(existing, p) }
	glob := func(pattern string) []string {
		var m []string
		for _, e := range existing {
			if ok, _ := filepath.Match(pattern, e); ok {
				m = append(m, e)
			}
		}
		return m
	}
	top := []string{"kernels", "doc", "PERF.md"}
	example := "func ExampleGemv() {\n\ty := make([]float32, 2)\n\tkernels.Gemv(false, 2, 3, 1, a, 3, x, 0, y)\n}\n"
	cases := []struct {
		name  string
		check func() []string
		want  []string
	}{
		{"kernel table complete", func() []string {
			return kernelTableProblems(kernelTable("| `Gemm` | a |", "| `Gemv` | b |"), names)
		}, nil},
		{"kernel missing", func() []string {
			return kernelTableProblems(kernelTable("| `Gemm` | a |"), names)
		}, []string{"kernel Gemv has no row"}},
		{"kernel twice, unknown kernel", func() []string {
			return kernelTableProblems(kernelTable("| `Gemm` | a |", "| `Gemv` | b |", "| `Gemv` | c |", "| `Gemx` | d |"), names)
		}, []string{"kernel Gemv has 2 rows", "row `Gemx` is not a kernel of the list"}},
		{"two kernels in a row", func() []string {
			return kernelTableProblems(kernelTable("| `Gemm`, `Gemv` | a |"), names)
		}, []string{"row \"`Gemm`, `Gemv`\" names 2 kernels, want one"}},
		{"no kernel table", func() []string {
			return kernelTableProblems("| name | x |\n|---|---|\n| `Gemm` | a |\n", names)
		}, []string{"want one table whose header starts with \"kernel\", found 0"}},
		{"kernel table inside a code block", func() []string {
			return kernelTableProblems("```\n"+kernelTable("| `Gemm` | a |", "| `Gemv` | b |")+"```\n", names)
		}, []string{"want one table whose header starts with \"kernel\", found 0"}},
		{"layout complete", func() []string {
			return layoutTableProblems(layoutTable("| `kernels/` | a |", "| `kernels/lowbit/`, `doc/` | b |"), folders, exists)
		}, nil},
		{"layout misses a folder", func() []string {
			return layoutTableProblems(layoutTable("| `kernels/` | a |"), folders, exists)
		}, []string{"package folder kernels/lowbit/ has no row"}},
		{"layout lists a moved folder and a file", func() []string {
			return layoutTableProblems(layoutTable("| `kernels/`, `kernels/lowbit/` | a |", "| `kernels/old/` | b |", "| `kernels/gemm.go` | c |"), folders, exists)
		}, []string{"`kernels/old/` does not exist", "`kernels/gemm.go` is not a folder (dir/)"}},
		{"paths exist", func() []string {
			return pathProblems("see `kernels/gemm.go`, `kernels/FAMILY.go`, `gpt2/model.safetensors`, [perf](PERF.md#x), ![c](doc/a.png), [web](https://x.org/y)\n", top, glob)
		}, nil},
		{"a moved file and a missing link target", func() []string {
			return pathProblems("`kernels/softmax.go` and [c](doc/b.png)\n", top, glob)
		}, []string{"path kernels/softmax.go does not exist", "link target doc/b.png does not exist"}},
		{"a span over a line break", func() []string {
			return pathProblems("the command `go\nrun` reads `kernels/gone.go`\n", top, glob)
		}, []string{"path kernels/gone.go does not exist"}},
		{"a path inside a code block is not checked", func() []string {
			return pathProblems("```\ncat kernels/softmax.go `kernels/softmax.go`\n```\n", top, glob)
		}, nil},
		{"Go block from the examples", func() []string {
			return exampleProblems("```go\nimport \"x/kernels\"\n\n// y = A·x\ny := make([]float32, 2)\nkernels.Gemv(false, 2, 3, 1, a, 3, x, 0, y) // y = [-2 -2]\n```\n", []string{example})
		}, nil},
		{"Go block with a call the examples lack", func() []string {
			return exampleProblems("```go\nkernels.Gemv(true, 2, 3, 1, a, 3, x, 0, y)\n```\n", []string{example})
		}, []string{"line \"kernels.Gemv(true, 2, 3, 1, a, 3, x, 0, y)\" of a Go block is not in an example"}},
		{"Go block without kernels is not compared", func() []string {
			return exampleProblems("```go\nl.Forward(out, x, b, t, p)\n```\n", []string{example})
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.check()
			if !slices.Equal(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestWithDriverRows checks how a family table's layout row is set: an
// existing row replaced, a missing one inserted after the last row of
// kernels/internal/ (or the table's last), and the refusals.
func TestWithDriverRows(t *testing.T) {
	const table = "x\n| path | contents |\n|---|---|\n| `kernels/` | api |\n| `kernels/internal/a/` | old |\n| `kernels/internal/g/` | guard |\n| `gpt/` | model |\n\ny\n"
	for _, c := range []struct {
		name, text string
		rows       [][2]string
		want       string
		wantErr    string
	}{
		{"replaced", table, [][2]string{{"kernels/internal/a/", "new"}},
			"x\n| path | contents |\n|---|---|\n| `kernels/` | api |\n| `kernels/internal/a/` | new |\n| `kernels/internal/g/` | guard |\n| `gpt/` | model |\n\ny\n", ""},
		{"inserted", table, [][2]string{{"kernels/internal/z/", "driver"}},
			"x\n| path | contents |\n|---|---|\n| `kernels/` | api |\n| `kernels/internal/a/` | old |\n| `kernels/internal/g/` | guard |\n| `kernels/internal/z/` | driver |\n| `gpt/` | model |\n\ny\n", ""},
		{"inserted last", "| path | contents |\n|---|---|\n| `gpt/` | model |\n", [][2]string{{"kernels/internal/z/", "driver"}},
			"| path | contents |\n|---|---|\n| `gpt/` | model |\n| `kernels/internal/z/` | driver |\n", ""},
		{"current", table, [][2]string{{"kernels/internal/a/", "old"}}, table, ""},
		{"no table", "x\n", [][2]string{{"kernels/internal/a/", "new"}}, "", "no layout table (a header \"| path |\")"},
		{"bar", table, [][2]string{{"kernels/internal/a/", "a | b"}}, "", "the layout row of kernels/internal/a/ is empty or holds '|' or a line break"},
		{"empty", table, [][2]string{{"kernels/internal/a/", " "}}, "", "the layout row of kernels/internal/a/ is empty or holds '|' or a line break"},
	} {
		got, err := withDriverRows(c.text, c.rows)
		if errText(err) != c.wantErr || got != c.want {
			t.Errorf("%s: got %q, error %q; want %q, error %q", c.name, got, errText(err), c.want, c.wantErr)
		}
	}
	rows := driverRows()
	if !slices.Contains(rows, [2]string{"kernels/internal/bf16compute/", bf16Kernels.about}) {
		t.Errorf("driverRows = %q, want bf16compute's", rows)
	}
}
