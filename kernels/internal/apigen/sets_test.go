package main

import "testing"

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
