package entry

import (
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// stub is one function declared without a body.
type stub struct {
	types string // its parameter and result types (funcTypes)
	doc   string // its doc comment, on one line
}

// stubs returns the functions declared without a body in the files
// matching glob, by name with the ISA suffix removed.
func stubs(t *testing.T, glob string, suffixes ...string) map[string][]stub {
	t.Helper()
	files, err := filepath.Glob(glob)
	if err != nil || len(files) == 0 {
		t.Fatalf("no files match %s (%v)", glob, err)
	}
	fset := token.NewFileSet()
	out := map[string][]stub{}
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body != nil {
				continue
			}
			n := fd.Name.Name
			for _, s := range suffixes {
				if strings.HasSuffix(n, s) {
					n = strings.TrimSuffix(n, s)
					break
				}
			}
			out[n] = append(out[n], stub{funcTypes(fset, fd.Type), strings.Join(strings.Fields(fd.Doc.Text()), " ")})
		}
	}
	return out
}

// funcTypes returns the parameter and result types of a func type,
// without names: "(int, *float32) float32".
func funcTypes(fset *token.FileSet, ft *ast.FuncType) string {
	list := func(fl *ast.FieldList) string {
		if fl == nil {
			return "()"
		}
		var ts []string
		for _, f := range fl.List {
			var b strings.Builder
			printer.Fprint(&b, fset, f.Type)
			for range max(1, len(f.Names)) {
				ts = append(ts, b.String())
			}
		}
		return "(" + strings.Join(ts, ", ") + ")"
	}
	return list(ft.Params) + " " + list(ft.Results)
}

// TestStubsFollowList checks the generated stubs of both architectures
// against List: every function is of a kind of the list, on an
// architecture the kind names, with the kind's parameter and result
// types and a doc comment naming the kind's executable reference, if it
// has one; and every kind has functions on each architecture it names.
func TestStubsFollowList(t *testing.T) {
	arches := map[string]map[string][]stub{
		"amd64": stubs(t, "../../../../kernels/amd64/*_stubs_amd64.go", "AVX512", "AVX2"),
		"arm64": stubs(t, "../../../../kernels/arm64/*_stubs_arm64.go", "NEON"),
	}
	fset := token.NewFileSet()
	for arch, fns := range arches {
		seen := map[string]bool{}
		for name, sigs := range fns {
			k, ok := KindOf(name)
			if !ok {
				t.Errorf("%s: %s is of no kind of the list", arch, name)
				continue
			}
			seen[k.Name] = true
			if !slices.Contains(k.Arch, arch) {
				t.Errorf("%s: %s is of kind %s, which the list gives only %v", arch, name, k.Name, k.Arch)
			}
			e, err := parser.ParseExpr(k.Sig)
			if err != nil {
				t.Fatalf("kind %s: signature %q: %v", k.Name, k.Sig, err)
			}
			want := funcTypes(fset, e.(*ast.FuncType))
			for _, got := range sigs {
				if got.types != want {
					t.Errorf("%s: %s takes %s; its kind %s, %s", arch, name, got.types, k.Name, want)
				}
				if k.Ref != "" && !strings.Contains(got.doc, k.Ref+" is the executable reference") {
					t.Errorf("%s: the doc comment of %s does not name %s as its executable reference: %s", arch, name, k.Ref, got.doc)
				}
			}
		}
		for _, k := range List {
			if slices.Contains(k.Arch, arch) && !seen[k.Name] {
				t.Errorf("%s: no function of kind %s, which the list gives %v", arch, k.Name, k.Arch)
			}
		}
	}
}

// TestDecl checks the declarations Decl builds and that it refuses a
// name of another kind.
func TestDecl(t *testing.T) {
	for _, c := range []struct{ name, kind, want string }{
		{"dotNEON", "dot", "func dotNEON(x, y []float32) float32"},
		{"skinnyDots3NEON", "skinnyDots", "func skinnyDots3NEON(rows, k int, w *float32, ldw int, x *float32, ldx int, c *float32, ldc int, alpha, beta float32)"},
	} {
		if got := Decl(c.name, c.kind); got != c.want {
			t.Errorf("Decl(%q, %q) = %q, want %q", c.name, c.kind, got, c.want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Decl(sumNEON, dot) did not panic")
		}
	}()
	Decl("sumNEON", "dot")
}
