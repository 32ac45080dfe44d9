//go:build openblas

package main

import (
	"strings"
	"testing"

	"github.com/simdgpt/simdgpt/bench"
	"github.com/simdgpt/simdgpt/bench/peers"
	"github.com/simdgpt/simdgpt/kernels"
)

// TestOpenBLASRun runs gemm on two shapes with both OpenBLAS peers and
// checks the header (the core each instance runs), their rows in the gemm
// table and the OpenBLAS comparison section: per shape, simdgpt's widest
// implementation against openblas and avx2 against openblas-avx2, with
// confidence intervals.
func TestOpenBLASRun(t *testing.T) {
	if _, err := kernels.Lookup("avx2"); err != nil {
		t.Skipf("no openblas-avx2 without simdgpt's avx2: %v", err)
	}
	code, stdout, stderr := kernelbench(t, "-kernels", "gemm", "-shapes", "sq64,sq128", "-time", "1ms", "-count", "4")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	core := peers.OpenBLASAVX2Core()
	widest := bench.Widest().Name()
	for _, want := range []string{
		"            openblas: OpenBLAS cblas_sgemm and cblas_sgemv with the kernels it picks for this CPU: core ",
		"            openblas-avx2: OpenBLAS cblas_sgemm and cblas_sgemv with its AVX2 kernels: a second instance of the library, loaded with OPENBLAS_CORETYPE=" + core + ": core " + core + "; OpenBLAS ",
		"\n| sq64  | openblas ", "\n| sq64  | openblas-avx2 ", "\n| sq128 | openblas ", "\n| sq128 | openblas-avx2 ",
		"\n### gemm against OpenBLAS, ISA for ISA\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	_, section, _ := strings.Cut(stdout, "\n### gemm against OpenBLAS")
	var head string
	rows := map[string][]string{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if cells[1] == "shape" {
			head = line
		}
		rows[cells[1]] = cells[2 : len(cells)-1]
	}
	if want := "| shape | " + widest + " vs openblas "; !strings.HasPrefix(head, want) || !strings.Contains(head, "| avx2 vs openblas-avx2 ") {
		t.Errorf("section header %q, want %q... and avx2 vs openblas-avx2", head, want)
	}
	for _, shape := range []string{"sq64", "sq128"} {
		if cells := rows[shape]; len(cells) != 2 || !strings.Contains(cells[0], "× [") || !strings.Contains(cells[1], "× [") {
			t.Errorf("%s: cells %q, want two ratios with intervals", shape, cells)
		}
	}
}
