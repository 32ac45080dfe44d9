package main

import (
	"bytes"
	"fmt"
)

// asmKind is one kind of assembly function (see asmKinds).
type asmKind struct {
	name   string   // the functions' names start with it
	sig    string   // their Go signature without a name: "func(x, y []float32) float32"
	arch   []string // the architectures with such functions
	usedBy string   // what takes them
	// ref is the generic function that is the executable reference of
	// their contract, if there is one; their stubs' doc comments name it.
	ref string
	// table and field, when table is set, are the family table the
	// functions fill in each ISA package and its field (see in).
	table  *familyTable
	field  string
	byRows bool // whether field is a slice by row count (see rows)
	// cond is the Go condition under which the functions fill their
	// field; empty for always.
	cond string
}

// kind returns the kind name of functions with the Go signature sig on the
// architectures arch, taken by usedBy, with the executable reference ref
// ("" for none).
func kind(name, sig string, arch []string, usedBy, ref string) asmKind {
	return asmKind{name: name, sig: sig, arch: arch, usedBy: usedBy, ref: ref}
}

// in returns k filling field of table t: the generators write, for each
// ISA whose functions fill some field of t, the table's literal t.name+ISA
// (lowbitAVX512) into the ISA package's families_gen.go. What follows the
// kind in a function's name decides where it goes: a tile RxC
// (gemmBF16Kernel14x32) sets the table's MR and NR and the field; a row
// count (lowbitBF16Pair1), the field; other text (bf16PackRowsHalves) is
// appended to the field's name (PackRowsHalves); nothing, the field.
func (k asmKind) in(t *familyTable, field string) asmKind {
	k.table, k.field = t, field
	return k
}

// rows returns k filling the slice field of table t by row count (see in):
// the function of r rows (lowbitBF163) is its element r-1, its element
// type k.usedBy; the slice runs from one row to the most of any function
// of the ISA, and a row count the ISA has no function of takes its
// fallback's (isaFallback: the avx512 set multiplies one row of A by
// low-bit weights on the AVX2 kernels).
func (k asmKind) rows(t *familyTable, field string) asmKind {
	k = k.in(t, field)
	k.byRows = true
	return k
}

// when returns k whose functions fill their field only when the Go
// condition cond holds (the table is then built by a function).
func (k asmKind) when(cond string) asmKind {
	k.cond = cond
	return k
}

// familyTable is the Go type a family's driver takes its assembly
// functions in, one literal an ISA (see families in kernels.go).
type familyTable struct {
	name string // its literals' names, before the ISA's suffix
	typ  string // its Go type, with * for a pointer to it
	pkg  string // the import path of the type's package
	// value and build, when build is set, make the family a value of
	// each SIMD set: the set's literal (sets.go) declares the variable
	// value, the kernels' simd expressions' name for it, as
	// build(table, g, caches): build is the constructor in the table's
	// package, of the signature
	//
	//	func(t *T, g *gemm.Family, c gemm.Caches) *Family
	//
	// (T the table's type without its *), given the set's table (a
	// pointer to the ISA's literal) or nil, the set's GEMM family and the
	// CPU's caches.
	value, build string
	// about, when set, is the row of the table's package (the family's
	// driver) in README's layout table: what it holds, one line of
	// Markdown without '|' (see withDriverRows).
	about string
	// sets are the ISA suffixes of the sets that give build their
	// table, each with the Go condition under which they do (the CPU
	// features its functions need; "" for always); the others give nil.
	sets map[string]string
}

// isaFallback maps an ISA to the one whose function an ISA's slice takes
// for a row count it has no function of: AVX-512 CPUs run AVX2 code (the
// avx512 set multiplies one row of A by low-bit weights on the AVX2
// kernels, which stream the weights from memory at least as fast as ZMM
// ones on the CPUs measured, PERF.md "GEMV with 16- and 8-bit weights").
var isaFallback = map[string]string{"AVX512": "AVX2"}

// The architectures of asmKinds.
var (
	both    = []string{"amd64", "arm64"}
	onAMD64 = []string{"amd64"}
	onARM64 = []string{"arm64"}
)

// writeEntries writes asm/gen/internal/entry's List from asmKinds.
func writeEntries(b *bytes.Buffer) {
	b.WriteString("package entry\n\n// List is every kind of assembly function, in the order of\n// kernels/internal/apigen's asmKinds.\nvar List = []Kind{\n")
	for _, k := range asmKinds {
		fmt.Fprintf(b, "\t{Name: %q, Sig: %q, Arch: %#v, Use: %q, Ref: %q", k.name, k.sig, k.arch, k.usedBy, k.ref)
		if k.table != nil {
			fmt.Fprintf(b, ", Table: %q, Field: %q", k.table.name, k.field)
			if k.byRows {
				b.WriteString(", Rows: true")
			}
			if k.cond != "" {
				fmt.Fprintf(b, ", When: %q", k.cond)
			}
		}
		b.WriteString("},\n")
	}
	b.WriteString("}\n\n// Tables are the family tables the kinds fill, by name.\nvar Tables = map[string]Table{\n")
	seen := map[*familyTable]bool{}
	for _, k := range asmKinds {
		if t := k.table; t != nil && !seen[t] {
			seen[t] = true
			fmt.Fprintf(b, "\t%q: {Type: %q, Import: %q},\n", t.name, t.typ, t.pkg)
		}
	}
	b.WriteString("}\n\n// Fallback maps an ISA to the one whose function a slice of its\n// tables takes for a row count it has no function of.\nvar Fallback = map[string]string{\n")
	for _, isa := range []string{"AVX2", "AVX512", "NEON"} {
		if f, ok := isaFallback[isa]; ok {
			fmt.Fprintf(b, "\t%q: %q,\n", isa, f)
		}
	}
	b.WriteString("}\n")
}
