package x86

import (
	"sort"

	"github.com/mmcloughlin/avo/build"

	"github.com/simdgpt/simdgpt/asm/gen/internal/entry"
)

// registered are the emitters Register added, with their kinds.
var registered []struct {
	kind string
	emit func()
}

// Register adds emit, which emits the functions of kind, to what Finish
// emits: a generator's file of a new kind registers its emitter from
// init, so that no list of the generator's main names it.
func Register(kind string, emit func()) {
	entry.Lookup(kind) // panics for a kind not in the list
	registered = append(registered, struct {
		kind string
		emit func()
	}{kind, emit})
}

// Finish runs the registered emitters, in the order of their kinds in
// the list of assembly functions (entry.List), after what the
// generator's main emitted, and writes the generator's output
// (build.Generate).
func Finish() {
	index := map[string]int{}
	for i, k := range entry.List {
		index[k.Name] = i
	}
	sort.SliceStable(registered, func(i, j int) bool { return index[registered[i].kind] < index[registered[j].kind] })
	for _, r := range registered {
		r.emit()
	}
	build.Generate()
}
