//go:build amd64 && !purego

package amd64

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRequires reads the CPU features avo lists above every generated
// function ("// Requires: ...") and checks that each is one the set
// running it checks at start-up: hasAVX2 for the AVX2 functions, hasAVX512
// for the AVX-512 ones, hasAVX512BF16 for the one-row BF16 product on
// VDPBF16PS (whose bytes the generator tags with AVX512_BF16). A generator that starts using, say, an AVX-512BW
// instruction fails here instead of on a CPU without it.
func TestRequires(t *testing.T) {
	avx2 := map[string]bool{"AVX": true, "AVX2": true, "FMA3": true, "CMOV": true, "MMX+": true, "SSE": true, "SSE2": true}
	avx512 := map[string]bool{"AVX512F": true, "AVX512DQ": true, "AVX512BW": true}
	for f := range avx2 {
		avx512[f] = true
	}
	// The functions the avx512 set calls only under hasAVX512BF16.
	bf16 := map[string]bool{"AVX512VL": true, "AVX512_BF16": true}
	for f := range avx512 {
		bf16[f] = true
	}
	gatedBF16 := map[string]bool{"lowbitBF16Pair1AVX512": true, "lowbitSplitBF16AVX512": true,
		"gemmBF16Kernel14x32AVX512": true, "gemmBF16PrefetchKernel14x32AVX512": true, "bf16PackRowsAVX512": true, "bf16PackRowsHalvesAVX512": true,
		"bf16PackPairsAVX512": true, "bf16PeakAVX512": true}
	files, err := filepath.Glob("*_amd64.s")
	if err != nil || len(files) == 0 {
		t.Fatalf("no generated assembly: %v", err)
	}
	seen := 0
	for _, name := range files {
		fh, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		var requires []string
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			line := sc.Text()
			if r, ok := strings.CutPrefix(line, "// Requires: "); ok {
				requires = strings.Split(r, ", ")
				continue
			}
			if !strings.HasPrefix(line, "TEXT ·") {
				requires = nil
				continue
			}
			sym := strings.TrimPrefix(strings.Fields(line)[1], "·")
			allowed := avx2
			if strings.Contains(sym, "AVX512") {
				allowed = avx512
			}
			if fn, _, _ := strings.Cut(sym, "("); gatedBF16[fn] {
				allowed = bf16
			}
			for _, f := range requires {
				if !allowed[f] {
					t.Errorf("%s: %s requires %s, which its set does not check", name, sym, f)
				}
			}
			seen++
			requires = nil
		}
		fh.Close()
	}
	if seen < 20 {
		t.Fatalf("found only %d generated functions", seen)
	}
}
