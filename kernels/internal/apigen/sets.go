package main

import (
	"bytes"
	"fmt"
	"strings"
)

// simdSet is one SIMD kernel set an ISA package (kernels/amd64,
// kernels/arm64) registers. Its literal is generated: every kernel of the
// list, wired by the kernel's simd expression with $ replaced by the
// set's suffix. The package writes by hand what the expressions name (the
// assembly's Go wrappers and tables, and family$(tile string)
// *gemm.Family, the GEMM family on a tile, and bf16Family$(g
// *gemm.Family) *bf16compute.Family, the bfloat16 products on it, named
// bf in the expressions), instruments$(tile string)
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
	{pkg: "amd64", suffix: "AVX512", name: "avx512", requires: "AVX-512F, AVX-512DQ, AVX-512BW", available: "hasAVX512", bf16Pair: "hasAVX512BF16"},
	{pkg: "arm64", suffix: "NEON", name: "neon", requires: "ASIMD", available: "hasNEON", overrides: map[string]string{
		// FMAX returns some NaN; the set's Max returns the first.
		"Max": "maxFirstNaNNEON",
		// The NEON row kernels take whole vectors; these handle the tail.
		"GELU":         "geluNEON",
		"GELUBackward": "geluBackwardNEON",
		// GemmBF16 converts its weights in registers for any number of
		// rows.
		"GemmBF16": "lowbitNEON.GemmBF16",
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

func writeSets(b *bytes.Buffer, pkg string) {
	fmt.Fprintf(b, "//go:build %s && !purego\n\npackage %s\n\n", pkg, pkg)
	var body bytes.Buffer
	for _, s := range simdSets {
		if s.pkg != pkg {
			continue
		}
		fmt.Fprintf(&body, "\n// set%s returns the %s set with its GEMM family on the named tile.\n", s.suffix, s.name)
		fmt.Fprintf(&body, "func set%s(tile string) *kernelset.Set {\n\tg := family%s(tile)\n", s.suffix, s.suffix)
		for _, k := range kernels {
			if !k.composite && strings.HasPrefix(simdExpr(s, k), "bf.") {
				// The bfloat16 products on the set's GEMM family.
				fmt.Fprintf(&body, "\tbf := bf16Family%s(g)\n", s.suffix)
				break
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
	imports := []string{"github.com/simdgpt/simdgpt/kernels/internal/kernelset"}
	if bytes.Contains(body.Bytes(), []byte("layernorm.")) {
		imports = append(imports, "github.com/simdgpt/simdgpt/kernels/internal/layernorm")
	}
	b.WriteString("import (\n")
	for _, p := range imports {
		fmt.Fprintf(b, "\t%q\n", p)
	}
	b.WriteString(")\n")
	b.Write(body.Bytes())
}
