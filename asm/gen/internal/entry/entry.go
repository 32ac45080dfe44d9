// Package entry is the one list of simdgpt's assembly entry points: each
// kind of function the generators emit, with its Go signature, the
// architectures that have it and what uses it. The list, List in
// list_gen.go, is written by kernels/internal/apigen from asmKinds, beside
// the list of the kernels (kernels/internal/apigen/kernels.go). The amd64
// generators (avo) and the NEON emitter read their signatures from here,
// and every stub
// (kernels/amd64/*_stubs_amd64.go, kernels/arm64/*_stubs_arm64.go), every
// TEXT directive's argument size and go vet's check of the assembly's
// argument offsets derive from them. entry_test.go checks the generated
// stubs against the list: every function has a kind here, with its
// signature, on the architectures the kind names.
//
// A function's name is its kind, then what varies within the kind (a
// row count, a tile such as 8x12, Packed, 14Rows), then the ISA's suffix
// (AVX2, AVX512, NEON): skinnyDots3AVX512 is of kind skinnyDots.
//
// To add an assembly function of a new kind: add the kind to asmKinds in
// kernels/internal/apigen/kernels.go (name, signature, architectures,
// and what takes it: the kernelset.Set field or the driver's function
// type, which has the same signature) and run go generate ./kernels/
// from the module root; in its avo generator call x86.Func(name, kind,
// doc...) (or s.Header(kind, doc...)), and in the NEON emitter
// f.fn(name, kind, doc); then go generate ./... from the module root.
// The emitter of a new kind's functions, in a new file of its family's
// generator, registers itself from init (x86.Register in an avo
// generator, whose main ends with x86.Finish; addPart in the NEON
// emitter), so that no main or list of emitters names it.
//
// The kinds a family's driver takes in a table (Kind.Table: the skinny,
// low-bit and bfloat16 kernels) need no Go by hand in the ISA packages:
// after the generators run, Families writes each ISA's tables from the
// functions the stubs declare into families_gen.go (kernels/amd64 and
// kernels/arm64). families_test.go checks that those files are current
// and that every generated function is taken by some Go file.
package entry

import (
	"fmt"
	"strings"
)

// Kind is one kind of assembly function.
type Kind struct {
	Name string // the functions' names start with it
	Sig  string // their Go signature, without the name: "func(x, y []float32) float32"
	// Arch lists the architectures with such functions: "amd64",
	// "arm64" or both.
	Arch []string
	// Use is what takes them: a field of kernelset.Set, a driver's
	// function type, or the Go wrapper that calls them.
	Use string
	// Ref is the generic function that is the executable reference of
	// their contract ("generic.Dot"), if any; RefDoc says so in their
	// stubs' doc comments.
	Ref string
	// Table and Field, when Table is set, are the family table (Tables)
	// the functions fill in each ISA package and its field; When is the
	// Go condition under which they fill it, empty for always; Rows,
	// whether Field is a slice by row count. See Families.
	Table, Field, When string
	Rows               bool
}

// Table is a family table: the Go type a family's driver takes its
// assembly functions in.
type Table struct {
	Type   string // its Go type, with * for a pointer to it
	Import string // the import path of its package
}

// RefDoc returns the sentence of the stubs' doc comments that names the
// executable reference of kind's contract; empty when it has none.
func RefDoc(kind string) string {
	if r := Lookup(kind).Ref; r != "" {
		return r + " is the executable reference of the contract."
	}
	return ""
}

// Lookup returns the kind named kind; it panics if there is none.
func Lookup(kind string) Kind {
	for _, k := range List {
		if k.Name == kind {
			return k
		}
	}
	panic(fmt.Sprintf("entry: no kind %q in the list of assembly functions", kind))
}

// Sig returns the Go signature of the functions of kind, without a name.
func Sig(kind string) string { return Lookup(kind).Sig }

// Decl returns the Go declaration of the function name of kind: "func
// name(params) results".
func Decl(name, kind string) string {
	if !strings.HasPrefix(name, kind) {
		panic(fmt.Sprintf("entry: %s is not of kind %s", name, kind))
	}
	return "func " + name + strings.TrimPrefix(Sig(kind), "func")
}

// KindOf returns the kind of the function name (its ISA suffix removed):
// the longest kind name that starts it. ok is false when none does.
func KindOf(name string) (k Kind, ok bool) {
	for _, c := range List {
		if strings.HasPrefix(name, c.Name) && len(c.Name) > len(k.Name) {
			k, ok = c, true
		}
	}
	return k, ok
}
