//go:build amd64 && !purego

package amd64

import (
	"testing"

	"github.com/simdgpt/simdgpt/kernels/internal/blocked"
	"github.com/simdgpt/simdgpt/kernels/internal/cpuinfo"
)

// TestBlockingFromCPU checks that the GEMMs of this package are blocked
// for the caches cpuid reports.
func TestBlockingFromCPU(t *testing.T) {
	info := cpuinfo.Read()
	for name, g := range map[string]*blocked.Driver{"avx2": gemmAVX2, "avx512": gemmAVX512} {
		kc, nc := blocked.BlockSizes(info.L1D, info.L2, g.Wide.MR, g.Wide.NR)
		gkc, _, gnc := g.Blocking()
		if gkc != kc || gnc != nc {
			t.Errorf("%s %dx%d GEMM blocked kc=%d nc=%d; the caches (L1D %d, L2 %d) give kc=%d nc=%d", name, g.Wide.MR, g.Wide.NR, gkc, gnc, info.L1D, info.L2, kc, nc)
		}
		t.Logf("L1D %d, L2 %d: %s kc=%d nc=%d", info.L1D, info.L2, name, gkc, gnc)
	}
}
