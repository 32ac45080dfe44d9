//go:build amd64 && !purego

package amd64

import (
	"os"
	"testing"

	"github.com/simdgpt/simdgpt/kernels/internal/blocked"
	"github.com/simdgpt/simdgpt/kernels/internal/cpuinfo"
)

// TestBlockingFromCPU checks that the GEMMs of this package are blocked by
// the cache model for the caches this CPU reports (unless
// SIMDGPT_BLOCKING overrides it), and logs the blocking.
func TestBlockingFromCPU(t *testing.T) {
	info := cpuinfo.Read()
	c := blocked.CachesOf(info)
	overridden := os.Getenv(blocked.EnvBlocking) != ""
	for _, d := range []struct {
		name string
		g    *blocked.Driver
	}{{"avx2", gemmAVX2}, {"avx512", gemmAVX512}} {
		g := d.g
		want := blocked.Model(c, g.Wide.MR, g.Wide.NR, g.PanelStride)
		got := g.Blocking()
		t.Logf("%s %dx%d on %+v: %+v", d.name, g.Wide.MR, g.Wide.NR, c, got)
		if overridden {
			continue
		}
		if got != want {
			t.Errorf("%s %dx%d GEMM blocked %+v; the model gives %+v for %+v", d.name, g.Wide.MR, g.Wide.NR, got, want, c)
		}
	}
}
