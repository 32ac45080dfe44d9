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
}

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
		fmt.Fprintf(b, "\t{Name: %q, Sig: %q, Arch: %#v, Use: %q, Ref: %q},\n", k.name, k.sig, k.arch, k.usedBy, k.ref)
	}
	b.WriteString("}\n")
}
