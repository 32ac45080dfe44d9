package main

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// simdSet is one SIMD kernel set an ISA package (kernels/amd64,
// kernels/arm64) registers. Its literal is generated: every kernel of the
// list, wired by the kernel's simd expression with $ replaced by the
// set's suffix, after the values of the families with a constructor
// (familyTable.build) that the expressions name. The package writes by
// hand what else the expressions name (the assembly's Go wrappers, and
// family$(tile string) *gemm.Family, the GEMM family on a tile, named g
// in the expressions), the CPU conditions of the families' tables, caches
// (gemm.Caches, the CPU's), instruments$(tile string)
// kernelset.Instruments, and the registration of set$(tile).
type simdSet struct {
	pkg       string // the ISA package: amd64 or arm64
	suffix    string // the suffix of the set's Go names, such as AVX2
	name      string // Set.Name
	requires  string // Set.Requires
	available string // the Go expression of Set.Available
	bf16Pair  string // the Go expression of Set.BF16Pair; empty for false
	// overrides replaces the simd expressions of some kernels (by name)
	// for this set.
	overrides map[string]string
}

var simdSets = []simdSet{
	{pkg: "amd64", suffix: "AVX2", name: "avx2", requires: "AVX2, FMA", available: "hasAVX2"},
	{pkg: "amd64", suffix: "AVX512", name: "avx512", requires: "AVX-512F, AVX-512DQ, AVX-512BW", available: "hasAVX512", bf16Pair: "bf16DotAVX512"},
	{pkg: "arm64", suffix: "NEON", name: "neon", requires: "ASIMD", available: "hasNEON", overrides: map[string]string{
		// FMAX returns some NaN; the set's Max returns the first.
		"Max": "maxFirstNaNNEON",
		// The NEON row kernels take whole vectors; these handle the tail.
		"GELU":         "geluNEON",
		"GELUBackward": "geluBackwardNEON",
	}},
}

// simdExpr returns the expression that gives kernel k's field in set s.
func simdExpr(s simdSet, k kernel) string {
	e, ok := s.overrides[k.name]
	if !ok {
		e = k.simd
		if e == "" {
			e = strings.ToLower(k.name[:1]) + k.name[1:] + "$"
		}
	}
	return strings.ReplaceAll(e, "$", s.suffix)
}

// setFamilies returns the family tables with a constructor, in the order
// of their first kind in asmKinds.
func setFamilies() []*familyTable {
	var ts []*familyTable
	for _, k := range asmKinds {
		if t := k.table; t != nil && t.build != "" && !slices.Contains(ts, t) {
			ts = append(ts, t)
		}
	}
	return ts
}

// checkFamilies reports a family table whose constructor is half
// declared or whose sets name a set that does not exist.
func checkFamilies(ts []*familyTable) error {
	for _, t := range ts {
		if (t.value == "") != (t.build == "") || (t.build == "" && len(t.sets) > 0) {
			return fmt.Errorf("family table %s: value, build and sets go together", t.name)
		}
		if q := path.Base(t.pkg) + "."; t.build != "" && (!strings.HasPrefix(t.build, q) || !strings.HasPrefix(strings.TrimPrefix(t.typ, "*"), q)) {
			return fmt.Errorf("family table %s: build %s and type %s are not both of package %s", t.name, t.build, t.typ, t.pkg)
		}
		for isa := range t.sets {
			if !slices.ContainsFunc(simdSets, func(s simdSet) bool { return s.suffix == isa }) {
				return fmt.Errorf("family table %s: no set %s", t.name, isa)
			}
		}
	}
	return nil
}

// familyValue writes the declaration of the value of family table t in
// set s: t.build given the set's table when the set's condition holds,
// else nil.
func familyValue(b *bytes.Buffer, s simdSet, t *familyTable) {
	cond, ok := t.sets[s.suffix]
	lit := t.name + s.suffix
	if !strings.HasPrefix(t.typ, "*") {
		lit = "&" + lit
	}
	switch {
	case !ok:
		fmt.Fprintf(b, "\t%s := %s(nil, g, caches)\n", t.value, t.build)
	case cond == "":
		fmt.Fprintf(b, "\t%s := %s(%s, g, caches)\n", t.value, t.build, lit)
	default:
		tv := t.value + "Table"
		fmt.Fprintf(b, "\tvar %s *%s\n\tif %s {\n\t\t%s = %s\n\t}\n", tv, strings.TrimPrefix(t.typ, "*"), cond, tv, lit)
		fmt.Fprintf(b, "\t%s := %s(%s, g, caches)\n", t.value, t.build, tv)
	}
}

// names reports whether the Go expression e names the variable v (as
// v.Field).
func names(e, v string) bool {
	return regexp.MustCompile(`(^|[^A-Za-z0-9_.])` + regexp.QuoteMeta(v) + `\.`).MatchString(e)
}

func writeSets(b *bytes.Buffer, pkg string) {
	fmt.Fprintf(b, "//go:build %s && !purego\n\npackage %s\n\n", pkg, pkg)
	imports := []string{"github.com/simdgpt/simdgpt/kernels/internal/kernelset"}
	var body bytes.Buffer
	for _, s := range simdSets {
		if s.pkg != pkg {
			continue
		}
		fmt.Fprintf(&body, "\n// set%s returns the %s set with its GEMM family on the named tile.\n", s.suffix, s.name)
		fmt.Fprintf(&body, "func set%s(tile string) *kernelset.Set {\n\tg := family%s(tile)\n", s.suffix, s.suffix)
		for _, t := range setFamilies() {
			for _, k := range kernels {
				if !k.composite && names(simdExpr(s, k), t.value) {
					familyValue(&body, s, t)
					if !slices.Contains(imports, t.pkg) {
						imports = append(imports, t.pkg)
					}
					break
				}
			}
		}
		body.WriteString("\treturn &kernelset.Set{\n")
		fmt.Fprintf(&body, "\t\tName: %q,\n\t\tRequires: %q,\n\t\tAvailable: %s,\n", s.name, s.requires, s.available)
		if s.bf16Pair != "" {
			fmt.Fprintf(&body, "\t\tBF16Pair: %s,\n", s.bf16Pair)
		}
		for _, k := range kernels {
			if !k.composite {
				fmt.Fprintf(&body, "\t\t%s: %s,\n", k.name, simdExpr(s, k))
			}
		}
		fmt.Fprintf(&body, "\t\tInstruments: instruments%s(tile),\n\t}\n}\n", s.suffix)
	}
	if bytes.Contains(body.Bytes(), []byte("layernorm.")) {
		imports = append(imports, "github.com/simdgpt/simdgpt/kernels/internal/layernorm")
	}
	slices.Sort(imports)
	b.WriteString("import (\n")
	for _, p := range imports {
		fmt.Fprintf(b, "\t%q\n", p)
	}
	b.WriteString(")\n")
	b.Write(body.Bytes())
}
