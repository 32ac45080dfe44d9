package main

import (
	"slices"
	"testing"
)

// TestGenerators checks which programs of the module the command runs:
// the avo generators (those of today among them; a new one joins them),
// gemm with -table and vecops without, never neon, internal or itself.
func TestGenerators(t *testing.T) {
	gens, err := generators("..")
	if err != nil {
		t.Fatal(err)
	}
	var names, tables []string
	for _, g := range gens {
		names = append(names, g.name)
		if g.table {
			tables = append(tables, g.name)
		}
	}
	for _, want := range []string{"gelu", "gemm", "layernorm", "lowbit", "optim", "peak", "skinny", "softmax", "vecops"} {
		if !slices.Contains(names, want) {
			t.Errorf("generators %v lack %s", names, want)
		}
	}
	for _, not := range []string{"neon", "internal", "amd64"} {
		if slices.Contains(names, not) {
			t.Errorf("generators %v include %s", names, not)
		}
	}
	if !slices.Contains(tables, "gemm") || slices.Contains(tables, "vecops") {
		t.Errorf("generators taking -table: %v, want gemm and not vecops", tables)
	}
}
