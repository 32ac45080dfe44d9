//go:build amd64 && !purego

package amd64

import (
	"fmt"
	"slices"
	"testing"

	"github.com/simdgpt/simdgpt/kernels/internal/cpuinfo"
)

func TestTileFor(t *testing.T) {
	saved := tileRules
	defer func() { tileRules = saved }()
	tileRules = []tileRule{
		{set: "avx512", vendor: "Intel", family: 6, tile: "8x48"},
		{set: "avx2", vendor: "AMD", tile: "4x24"},
	}
	zen5 := cpuinfo.Info{Vendor: "AMD", Family: 0x1A}
	intel := cpuinfo.Info{Vendor: "Intel", Family: 6}
	for _, tc := range []struct {
		set  string
		info cpuinfo.Info
		want string
	}{
		{"avx512", intel, "8x48"},
		{"avx512", cpuinfo.Info{Vendor: "Intel", Family: 19}, "14x32"}, // family must match
		{"avx512", zen5, "14x32"},                                      // no rule: the first tile
		{"avx2", zen5, "4x24"},                                         // family 0 matches any
		{"avx2", intel, "6x16"},
		{"avx512", cpuinfo.Info{}, "14x32"},
	} {
		if got := tileFor(tc.set, tc.info); got != tc.want {
			t.Errorf("tileFor(%q, %+v) = %q, want %q", tc.set, tc.info, got, tc.want)
		}
	}
}

// TestTileRules checks that every rule names a set and a tile that exist,
// and that every set's tiles have drivers blocked for their own MR×NR.
func TestTileRules(t *testing.T) {
	for _, r := range tileRules {
		if !slices.Contains(tileNames(r.set), r.tile) {
			t.Errorf("rule %+v: %s has no tile %q (it has %v)", r, r.set, r.tile, tileNames(r.set))
		}
	}
	for set, tiles := range gemmTiles {
		if len(tiles) < 2 {
			t.Errorf("%s has %d tiles, want at least 2", set, len(tiles))
		}
		for _, tl := range tiles {
			d := gemmDriver(set, tl.name)
			if d == nil {
				t.Fatalf("%s/%s: no driver", set, tl.name)
			}
			if want := fmt.Sprintf("%dx%d", d.Wide.MR, d.Wide.NR); tl.name != want {
				t.Errorf("%s tile %q has %s kernels", set, tl.name, want)
			}
			b := d.Blocking()
			if b.MC%d.Wide.MR != 0 || b.NC%d.Wide.NR != 0 {
				t.Errorf("%s/%s: blocking %+v is not in whole %d×%d tiles", set, tl.name, b, d.Wide.MR, d.Wide.NR)
			}
		}
	}
}
