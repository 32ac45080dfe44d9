package entry

import (
	"bytes"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// ISAs are the suffixes of the functions' names by architecture, the
// longer first where one ends another.
var ISAs = map[string][]string{"amd64": {"AVX512", "AVX2"}, "arm64": {"NEON"}}

// isaOrder is the order of the tables of an architecture.
var isaOrder = []string{"AVX2", "AVX512", "NEON"}

// Split splits the name of an assembly function of arch into its kind,
// what follows the kind (a row count, a tile, a variant) and its ISA
// suffix. ok is false when the name has no ISA suffix of arch or no kind.
func Split(arch, name string) (k Kind, variant, isa string, ok bool) {
	for _, s := range ISAs[arch] {
		if strings.HasSuffix(name, s) {
			isa = s
			break
		}
	}
	if isa == "" {
		return Kind{}, "", "", false
	}
	base := strings.TrimSuffix(name, isa)
	if k, ok = KindOf(base); !ok {
		return Kind{}, "", "", false
	}
	return k, strings.TrimPrefix(base, k.Name), isa, true
}

var stubDecl = regexp.MustCompile(`(?m)^func ([A-Za-z0-9_]+)\(`)

// StubNames returns the names of the functions declared in the stubs
// files of arch in dir (*_stubs_ARCH.go), sorted.
func StubNames(dir, arch string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_stubs_"+arch+".go"))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, m := range stubDecl.FindAllSubmatch(src, -1) {
			names = append(names, string(m[1]))
		}
	}
	sort.Strings(names)
	return names, nil
}

var tile = regexp.MustCompile(`^([0-9]+)x([0-9]+)$`)

// tableLit is one ISA's literal of a family table as it is built.
type tableLit struct {
	mr, nr  int
	singles map[string]string         // field: function
	slices  map[string]map[int]string // field: row count: function
	cond    map[string]string         // field: When
	elem    map[string]string         // slice field: element type
	rank    map[string]int            // field: the index in List of its kind
}

// field records field f of the kind of index i in List.
func (t *tableLit) field(f string, i int, k Kind) {
	t.rank[f] = i
	t.cond[f] = k.When
}

// order returns the fields in the order of their kinds in List, those of
// one kind by name.
func (t *tableLit) order() []string {
	var fs []string
	for f := range t.rank {
		fs = append(fs, f)
	}
	sort.Slice(fs, func(i, j int) bool {
		if t.rank[fs[i]] != t.rank[fs[j]] {
			return t.rank[fs[i]] < t.rank[fs[j]]
		}
		return fs[i] < fs[j]
	})
	return fs
}

// Families returns the Go source of package pkg (kernels/amd64 or
// kernels/arm64) that defines the family tables (Tables) of the
// functions of arch named names: for each table and each ISA with
// functions of its kinds, the variable table+ISA (lowbitAVX512) holding
// them, each function in its kind's Field by what follows the kind in
// its name: a row count r is the element r-1 of the slice Field, whose
// element type is the kind's Use (the slice runs from one row to the
// most any function has; a row count an ISA lacks takes its Fallback's
// function); a tile RxC sets the table's MR and NR and Field; other text
// is appended to Field's name; nothing is Field itself. Fields with a
// When are set only when it holds. header is the generated file's first
// line.
func Families(header, arch, pkg string, names []string) ([]byte, error) {
	lits := map[string]map[string]*tableLit{} // table: ISA: literal
	for _, name := range names {
		k, variant, isa, ok := Split(arch, name)
		if !ok {
			return nil, fmt.Errorf("%s: no kind or ISA suffix", name)
		}
		if k.Table == "" {
			continue
		}
		if lits[k.Table] == nil {
			lits[k.Table] = map[string]*tableLit{}
		}
		t := lits[k.Table][isa]
		if t == nil {
			t = &tableLit{singles: map[string]string{}, slices: map[string]map[int]string{}, cond: map[string]string{}, elem: map[string]string{}, rank: map[string]int{}}
			lits[k.Table][isa] = t
		}
		r, err := strconv.Atoi(variant)
		isRows := err == nil && r >= 1
		if k.Rows && !isRows {
			return nil, fmt.Errorf("%s: %s.%s is by row count; the name has %q", name, k.Table, k.Field, variant)
		}
		if k.Rows {
			if t.slices[k.Field] == nil {
				t.slices[k.Field] = map[int]string{}
			}
			t.slices[k.Field][r] = name
			t.elem[k.Field] = k.Use
			t.field(k.Field, kindIndex(k.Name), k)
			continue
		}
		field := k.Field
		if m := tile.FindStringSubmatch(variant); m != nil {
			mr, _ := strconv.Atoi(m[1])
			nr, _ := strconv.Atoi(m[2])
			if t.mr != 0 && (t.mr != mr || t.nr != nr) {
				return nil, fmt.Errorf("%s: tile %s in a %s table of tile %dx%d", name, variant, isa, t.mr, t.nr)
			}
			t.mr, t.nr = mr, nr
		} else if !isRows {
			field += variant
		}
		if prev, ok := t.singles[field]; ok {
			return nil, fmt.Errorf("%s and %s both fill %s%s.%s", prev, name, k.Table, isa, field)
		}
		t.singles[field] = name
		t.field(field, kindIndex(k.Name), k)
	}
	var body bytes.Buffer
	imports := map[string]bool{}
	var tables []string
	for _, k := range List {
		if k.Table != "" && lits[k.Table] != nil && !slices.Contains(tables, k.Table) {
			tables = append(tables, k.Table)
		}
	}
	for _, tn := range tables {
		tt, ok := Tables[tn]
		if !ok {
			return nil, fmt.Errorf("table %s is not in Tables", tn)
		}
		imports[tt.Import] = true
		for _, isa := range isaOrder {
			t := lits[tn][isa]
			if t == nil {
				continue
			}
			if err := writeLit(&body, tn, tt, isa, t, lits[tn][Fallback[isa]]); err != nil {
				return nil, err
			}
		}
	}

	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\n\n//go:build %s && !purego\n\npackage %s\n\n", header, arch, pkg)
	b.WriteString("// The family tables: each driver's assembly functions of an ISA, by the\n// fields of their kinds in the list of assembly functions\n// (kernels/internal/apigen's asmKinds).\n\n")
	var paths []string
	for p := range imports {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	b.WriteString("import (\n")
	for _, p := range paths {
		fmt.Fprintf(&b, "\t%q\n", p)
	}
	b.WriteString(")\n")
	b.Write(body.Bytes())
	out, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("families: %v\n%s", err, b.Bytes())
	}
	return out, nil
}

// kindIndex returns the index in List of the kind named name.
func kindIndex(name string) int {
	return slices.IndexFunc(List, func(k Kind) bool { return k.Name == name })
}

// writeLit writes the variable of table tn of isa, whose fallback's
// literal is fb (nil for none).
func writeLit(b *bytes.Buffer, tn string, tt Table, isa string, t, fb *tableLit) error {
	typ := strings.TrimPrefix(tt.Type, "*")
	amp := strings.Repeat("&", len(tt.Type)-len(typ))
	fmt.Fprintf(b, "\n// %s%s are the %s functions of the %s table.\n", tn, isa, isa, typ)
	var always, conds bytes.Buffer
	condOrder := []string{}
	byCond := map[string]*bytes.Buffer{}
	if t.mr != 0 {
		fmt.Fprintf(&always, "\tMR: %d, NR: %d,\n", t.mr, t.nr)
	}
	for _, f := range t.order() {
		var val string
		if fns, ok := t.slices[f]; ok {
			n := 0
			for r := range fns {
				n = max(n, r)
			}
			var list []string
			for r := 1; r <= n; r++ {
				fn, ok := fns[r]
				if !ok && fb != nil {
					fn, ok = fb.slices[f][r]
				}
				if !ok {
					return fmt.Errorf("%s%s.%s: no function of %d rows", tn, isa, f, r)
				}
				list = append(list, fn)
			}
			val = fmt.Sprintf("[]%s{%s}", t.elem[f], strings.Join(list, ", "))
		} else {
			val = t.singles[f]
		}
		if c := t.cond[f]; c != "" {
			if byCond[c] == nil {
				byCond[c] = &bytes.Buffer{}
				condOrder = append(condOrder, c)
			}
			fmt.Fprintf(byCond[c], "\t\tt.%s = %s\n", f, val)
			continue
		}
		fmt.Fprintf(&always, "\t%s: %s,\n", f, val)
	}
	for _, c := range condOrder {
		fmt.Fprintf(&conds, "\tif %s {\n%s\t}\n", c, byCond[c])
	}
	if conds.Len() == 0 {
		fmt.Fprintf(b, "var %s%s = %s%s{\n%s}\n", tn, isa, amp, typ, always.Bytes())
		return nil
	}
	fmt.Fprintf(b, "var %s%s = func() %s {\n\tt := %s%s{\n", tn, isa, tt.Type, amp, typ)
	for _, l := range strings.SplitAfter(always.String(), "\n") {
		if l != "" {
			b.WriteString("\t" + l)
		}
	}
	fmt.Fprintf(b, "\t}\n%s\treturn t\n}()\n", conds.Bytes())
	return nil
}
