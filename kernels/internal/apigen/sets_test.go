package main

import (
	"bytes"
	"slices"
	"testing"
)

// TestSimdExpr checks how a SIMD set's literal wires a kernel: the
// default name, a kernel's own expression, and a set's override.
func TestSimdExpr(t *testing.T) {
	set := func(suffix string) simdSet {
		for _, s := range simdSets {
			if s.suffix == suffix {
				return s
			}
		}
		t.Fatalf("no SIMD set %s", suffix)
		return simdSet{}
	}
	kern := func(name string) kernel {
		for _, k := range kernels {
			if k.name == name {
				return k
			}
		}
		t.Fatalf("no kernel %s", name)
		return kernel{}
	}
	for _, c := range []struct{ set, kernel, want string }{
		{"AVX2", "Dot", "dotAVX2"},
		{"NEON", "SumSquares", "sumSquaresNEON"},
		{"AVX512", "LayerNorm", "layernorm.LayerNorm(layerNormRowAVX512)"},
		{"AVX512", "Gemm", "g.Gemm"},
		{"AVX2", "GemmInt8", "lowbitAVX2.GemmInt8"},
		{"AVX2", "Max", "maxAVX2"},
		{"NEON", "Max", "maxFirstNaNNEON"},
		{"NEON", "GELU", "geluNEON"},
		{"AVX512", "GELU", "geluRowAVX512"},
	} {
		if got := simdExpr(set(c.set), kern(c.kernel)); got != c.want {
			t.Errorf("%s's %s: %s, want %s", c.set, c.kernel, got, c.want)
		}
	}
}

// TestFamilyValue checks the declaration of a family's value in a set's
// literal: the set's table under its condition, always, or nil for a set
// the family table does not list; a pointer table passed as it is.
func TestFamilyValue(t *testing.T) {
	fam := func(typ string, sets map[string]string) *familyTable {
		return &familyTable{name: "trialKernels", typ: typ, pkg: "example.com/x/trial", value: "tr", build: "trial.NewFamily", sets: sets}
	}
	cond := map[string]string{"AVX512": "hasAVX512BF16", "NEON": ""}
	for _, c := range []struct {
		t    *familyTable
		set  string
		want string
	}{
		{fam("trial.Kernels", cond), "AVX2", "\ttr := trial.NewFamily(nil, g, caches)\n"},
		{fam("trial.Kernels", cond), "NEON", "\ttr := trial.NewFamily(&trialKernelsNEON, g, caches)\n"},
		{fam("*trial.Kernels", cond), "NEON", "\ttr := trial.NewFamily(trialKernelsNEON, g, caches)\n"},
		{fam("trial.Kernels", cond), "AVX512", "\tvar trTable *trial.Kernels\n\tif hasAVX512BF16 {\n\t\ttrTable = &trialKernelsAVX512\n\t}\n\ttr := trial.NewFamily(trTable, g, caches)\n"},
	} {
		var b bytes.Buffer
		familyValue(&b, simdSet{suffix: c.set}, c.t)
		if b.String() != c.want {
			t.Errorf("%s %s: got\n%s\nwant\n%s", c.t.typ, c.set, b.String(), c.want)
		}
	}
}

// TestCheckFamilies checks that the family tables of the list are
// sound, and that checkFamilies refuses a half-declared constructor, a
// constructor or type of another package and a set that does not exist.
func TestCheckFamilies(t *testing.T) {
	if err := checkFamilies(setFamilies()); err != nil {
		t.Errorf("the list's family tables: %v", err)
	}
	if !slices.Contains(setFamilies(), bf16Kernels) || slices.Contains(setFamilies(), lowbit) {
		t.Errorf("setFamilies = %v, want the tables with a constructor (bf16Kernels, not lowbit)", setFamilies())
	}
	const pkg = "example.com/x/trial"
	for _, c := range []struct {
		t       familyTable
		wantErr string
	}{
		{familyTable{name: "a", typ: "trial.K", pkg: pkg, value: "tr", build: "trial.NewFamily", sets: map[string]string{"AVX2": ""}}, ""},
		{familyTable{name: "a", typ: "trial.K", pkg: pkg}, ""},
		{familyTable{name: "a", typ: "trial.K", pkg: pkg, build: "trial.NewFamily"}, "family table a: value, build and sets go together"},
		{familyTable{name: "a", typ: "trial.K", pkg: pkg, sets: map[string]string{"AVX2": ""}}, "family table a: value, build and sets go together"},
		{familyTable{name: "a", typ: "trial.K", pkg: pkg, value: "tr", build: "other.NewFamily"}, "family table a: build other.NewFamily and type trial.K are not both of package " + pkg},
		{familyTable{name: "a", typ: "*other.K", pkg: pkg, value: "tr", build: "trial.NewFamily"}, "family table a: build trial.NewFamily and type *other.K are not both of package " + pkg},
		{familyTable{name: "a", typ: "trial.K", pkg: pkg, value: "tr", build: "trial.NewFamily", sets: map[string]string{"SSE2": ""}}, "family table a: no set SSE2"},
	} {
		if got := errText(checkFamilies([]*familyTable{&c.t})); got != c.wantErr {
			t.Errorf("%+v: error %q, want %q", c.t, got, c.wantErr)
		}
	}
}

// TestNames checks which expressions name a family's value.
func TestNames(t *testing.T) {
	for _, c := range []struct {
		e    string
		want bool
	}{
		{"bf.GemmBF16Compute", true},
		{"wrap(g, bf.Gemm)", true},
		{"bfx.Gemm", false},
		{"lowbf.Gemm", false},
		{"x.bf.Gemm", false},
		{"bf16compute.New", false},
	} {
		if got := names(c.e, "bf"); got != c.want {
			t.Errorf("names(%q, bf) = %v, want %v", c.e, got, c.want)
		}
	}
}
