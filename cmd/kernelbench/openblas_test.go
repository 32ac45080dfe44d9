package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/simdgpt/simdgpt/bench"
	"github.com/simdgpt/simdgpt/kernels"
)

// TestPrintOpenBLAS checks the section that pairs each OpenBLAS peer with
// simdgpt's implementation of its ISA, on made-up samples: ours is twice
// as fast as openblas and half as fast as openblas-avx2 on every shape.
func TestPrintOpenBLAS(t *testing.T) {
	impls := kernels.Implementations()
	widest, avx2 := impls[len(impls)-1], impls[len(impls)-1]
	for _, p := range impls {
		if p.Name() == "avx2" {
			avx2 = p
		}
	}
	ours := func(p *kernels.Impl) *bench.Impl { return &bench.Impl{Name: p.Name(), Own: p, ISA: p} }
	peer := func(name string, isa *kernels.Impl) *bench.Impl { return &bench.Impl{Name: name, Peer: true, ISA: isa} }
	k := bench.Kernels()[0]
	result := func(shape string, im *bench.Impl, ns float64) *bench.Result {
		return &bench.Result{Case: bench.Case{Kernel: k, Shape: bench.Shape{Name: shape}}, Impl: im, Ns: []float64{ns, ns * 1.01, ns * 0.99, ns * 1.02, ns * 0.98, ns}}
	}
	ob, obAVX2, gonum := peer("openblas", widest), peer("openblas-avx2", avx2), peer("gonum", widest)
	var both []*bench.Result
	for _, shape := range []string{"sq64", "sq128"} {
		both = append(both, result(shape, ours(widest), 100))
		if avx2 != widest {
			both = append(both, result(shape, ours(avx2), 100))
		}
		both = append(both, result(shape, ob, 200), result(shape, obAVX2, 50), result(shape, gonum, 1000))
	}
	for _, tc := range []struct {
		name string
		rs   []*bench.Result
		want []string // lines of the output, in order; none: no output
	}{
		{"both", both, []string{
			"### " + k.Name + " against OpenBLAS, ISA for ISA",
			"| shape | " + widest.Name() + " vs openblas ",
			"| sq64  | 2.00× [",
			"| sq128 | 2.00× [",
		}},
		{"no openblas", []*bench.Result{result("sq64", ours(widest), 1), result("sq64", gonum, 2)}, nil},
		{"openblas without its counterpart", []*bench.Result{result("sq64", obAVX2, 1), result("sq64", gonum, 2)}, nil},
	} {
		var buf bytes.Buffer
		printOpenBLAS(&buf, k, tc.rs)
		out := buf.String()
		if len(tc.want) == 0 {
			if out != "" {
				t.Errorf("%s: printed\n%s", tc.name, out)
			}
			continue
		}
		rest := out
		for _, w := range tc.want {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Fatalf("%s: output lacks %q after the previous line:\n%s", tc.name, w, out)
			}
			rest = rest[i+len(w):]
		}
		if strings.Contains(out, "gonum") {
			t.Errorf("%s: gonum in the OpenBLAS section:\n%s", tc.name, out)
		}
		// The avx2 pairing, in the header and a 0.50× cell per shape.
		if !strings.Contains(out, " "+avx2.Name()+" vs openblas-avx2 ") || strings.Count(out, " 0.50× [") != 2 {
			t.Errorf("%s: no %s vs openblas-avx2 column of 0.50×:\n%s", tc.name, avx2.Name(), out)
		}
	}
}
