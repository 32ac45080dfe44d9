package main

import (
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// stubSigs returns the parameter and result types of every function
// declared without a body in the files matching glob, by name.
func stubSigs(t *testing.T, glob string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(glob)
	if err != nil || len(files) == 0 {
		t.Fatalf("no files match %s (%v)", glob, err)
	}
	fset := token.NewFileSet()
	out := map[string]string{}
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body != nil {
				continue
			}
			out[fd.Name.Name] = types(fset, fd.Type.Params) + " " + types(fset, fd.Type.Results)
		}
	}
	return out
}

// types lists the types of a field list, one a parameter, without names.
func types(fset *token.FileSet, fl *ast.FieldList) string {
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

// TestStubsAgree checks that an assembly function present on both
// architectures (the same name but for the suffix: skinnyDots1AVX2 and
// skinnyDots1NEON) has the same parameter and result types on both, so
// that the drivers that take them (gemm.DotsFunc, lowbit.Kernel, ...)
// see one signature. Both sets of stubs are generated: from the avo
// generators (asm/gen/FAMILY) and from the NEON emitter (asm/gen/neon).
func TestStubsAgree(t *testing.T) {
	root := moduleRoot(t)
	amd := stubSigs(t, filepath.Join(root, "kernels/amd64/*_stubs_amd64.go"))
	arm := stubSigs(t, filepath.Join(root, "kernels/arm64/*_stubs_arm64.go"))
	shared := 0
	for name, sig := range arm {
		stem := strings.TrimSuffix(name, "NEON")
		for _, isa := range []string{"AVX2", "AVX512"} {
			if a, ok := amd[stem+isa]; ok {
				shared++
				if a != sig {
					t.Errorf("%s%s%s\n\tand %s%s", stem, isa, a, name, sig)
				}
			}
		}
	}
	if shared < 20 {
		t.Errorf("only %d functions found on both architectures; the stub files moved?", shared)
	}
}
