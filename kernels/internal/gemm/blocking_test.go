package gemm

import (
	"strings"
	"testing"

	"github.com/simdgpt/simdgpt/kernels/internal/cpuinfo"
)

// Micro-tiles of the generated kernels: MR×NR and the packed A panel's
// stride (gemm_kernels_amd64.go, gemm_kernels_arm64.go). Each ISA's
// driver blocks for its wide tile; the narrow ones are listed to show what
// the model would pick for them.
var (
	avx512Wide   = tile{14, 32, 16}
	avx512Narrow = tile{14, 16, 16}
	avx2Wide     = tile{6, 16, 8}
	avx2Narrow   = tile{6, 8, 8}
	neonWide     = tile{8, 12, 8}
	neonNarrow   = tile{8, 4, 8}
)

type tile struct{ mr, nr, ps int }

// Cache descriptions of the cores the model is checked on: size, ways,
// line, cores sharing. The figures are the vendors' (optimization guides
// and technical reference manuals), cross-checked against third-party
// measurements where the vendor is silent.
var (
	// AMD Software Optimization Guide for Family 19h (pub. 56665), Zen 3:
	// L1d 32 KiB 8-way, L2 512 KiB 8-way, L3 32 MiB 16-way per CCX of 8
	// cores (a victim cache of the L2s).
	zen3 = Caches{Level{32 << 10, 8, 64, 1}, Level{512 << 10, 8, 64, 1}, Level{32 << 20, 16, 64, 8}}
	// Same guide for Zen 4 (pub. 57647; EPYC 9004 "Genoa", family 25 model
	// 17, the Zen 4 of PERF.md): L2 doubled to 1 MiB, still 8-way.
	zen4 = Caches{Level{32 << 10, 8, 64, 1}, Level{1 << 20, 8, 64, 1}, Level{32 << 20, 16, 64, 8}}
	// AMD Software Optimization Guide for Family 1Ah (pub. 58455), Zen 5:
	// L1d 48 KiB 12-way, L2 1 MiB 16-way, L3 32 MiB 16-way per 8 cores.
	zen5 = Caches{Level{48 << 10, 12, 64, 1}, Level{1 << 20, 16, 64, 1}, Level{32 << 20, 16, 64, 8}}
	// Intel 64 and IA-32 Architectures Optimization Reference Manual,
	// Skylake Server (also Cascade Lake): L1d 32 KiB 8-way, L2 1 MiB
	// 16-way, non-inclusive L3 of 1.375 MiB per core, 11-way (a 28-core
	// Xeon Platinum 8280: 38.5 MiB).
	cascadeLake = Caches{Level{32 << 10, 8, 64, 1}, Level{1 << 20, 16, 64, 1}, Level{28 * 1408 << 10, 11, 64, 28}}
	// Same manual, Sapphire Rapids (Golden Cove): L1d 48 KiB 12-way, L2
	// 2 MiB 16-way, L3 1.875 MiB per core, 15-way (Xeon 8480+: 56 cores,
	// 105 MiB).
	sapphireRapids = Caches{Level{48 << 10, 12, 64, 1}, Level{2 << 20, 16, 64, 1}, Level{105 << 20, 15, 64, 56}}
	// Arm Neoverse N1 Technical Reference Manual (100616): L1d 64 KiB
	// 4-way, L2 512 KiB or 1 MiB 8-way, 64-byte lines; the L3 is the
	// system's: AWS Graviton2 has 32 MiB for 64 cores (16-way assumed).
	neoverseN1 = Caches{Level{64 << 10, 4, 64, 1}, Level{1 << 20, 8, 64, 1}, Level{32 << 20, 16, 64, 64}}
	// Arm Neoverse V1 TRM (101427): the same L1d and L2; Graviton3 has
	// 32 MiB of L3 for 64 cores.
	neoverseV1 = Caches{Level{64 << 10, 4, 64, 1}, Level{1 << 20, 8, 64, 1}, Level{32 << 20, 16, 64, 64}}
	// Apple M1 P-core (Firestorm): L1d 128 KiB, 128-byte lines (sysctl
	// hw.l1dcachesize, hw.cachelinesize), 8-way; L2 12 MiB shared by the
	// cluster of 4 P-cores, 12-way; no L3 (the system level cache is a
	// memory-side cache, not modelled). Apple publishes no associativity:
	// the ways are third-party measurements (Dougall Johnson's and Maynard
	// Handley's M1 notes). M2's L2 is 16 MiB, 16-way: the same per way.
	appleM1 = Caches{Level{128 << 10, 8, 128, 1}, Level{12 << 20, 12, 128, 4}, Level{}}
)

// TestModel checks the blocking the model picks for each core and tile,
// exactly (the derivation is in Model's comment; the first rows show the
// arithmetic).
func TestModel(t *testing.T) {
	for _, c := range []struct {
		name   string
		caches Caches
		tile   tile
		want   Blocking
	}{
		// L1 way 4 KiB, W1 = 8: C_B = floor(7/(1+16/32)) = 4, kc = 4·4096/(32·4) = 128.
		// L2 way 128 KiB: C_A2 = ceil(16·128·4/131072) = 1, C_B2 = 8−1−1 = 6, nc = 6·131072/(128·4) = 1536.
		// L3 share 4 MiB, way 256 KiB: mc = 15·262144/(16·128·4) = 480 slivers -> cap 2048/14·14 = 2044.
		{"zen4", zen4, avx512Wide, Blocking{KC: 128, MC: 2044, NC: 1536}},
		// C_B = floor(7/(1+16/16)) = 3, kc = 3·4096/64 = 192; nc = 6·131072/768 = 1024.
		{"zen4", zen4, avx512Narrow, Blocking{KC: 192, MC: 2044, NC: 1024}},
		// C_B = floor(7/1.5) = 4, kc = 4·4096/64 = 256; nc = 6·131072/1024 = 768.
		{"zen4", zen4, avx2Wide, Blocking{KC: 256, MC: 2046, NC: 768}},
		{"zen4", zen4, avx2Narrow, Blocking{KC: 384, MC: 1920, NC: 512}},

		// Zen 3: the L1 of Zen 4, half its L2.
		{"zen3", zen3, avx2Wide, Blocking{KC: 256, MC: 2046, NC: 384}},
		{"zen3", zen3, avx2Narrow, Blocking{KC: 384, MC: 1920, NC: 256}},

		// W1 = 12: C_B = floor(11/1.5) = 7, kc = 7·4096/128 = 224; L2 way 64 KiB:
		// C_A2 = 1, nc = 14·65536/(224·4) = 1024.
		{"zen5", zen5, avx512Wide, Blocking{KC: 224, MC: 2044, NC: 1024}},
		{"zen5", zen5, avx512Narrow, Blocking{KC: 320, MC: 2044, NC: 704}},
		// kc = 7·4096/64 = 448, nc = 14·65536/1792 = 512; L3 way 256 KiB:
		// mc = floor(15·262144/(8·448·4)) = 274 slivers = 1644 rows.
		{"zen5", zen5, avx2Wide, Blocking{KC: 448, MC: 1644, NC: 512}},
		{"zen5", zen5, avx2Narrow, Blocking{KC: 640, MC: 1152, NC: 352}},

		// L2 16-way of 64 KiB ways: nc = 14·65536/512 = 1792; L3 way 128 KiB:
		// mc = 10·131072/(16·128·4) = 160 slivers -> cap.
		{"cascade lake", cascadeLake, avx512Wide, Blocking{KC: 128, MC: 2044, NC: 1792}},
		{"cascade lake", cascadeLake, avx512Narrow, Blocking{KC: 192, MC: 1484, NC: 1184}},
		{"cascade lake", cascadeLake, avx2Wide, Blocking{KC: 256, MC: 960, NC: 896}},
		{"cascade lake", cascadeLake, avx2Narrow, Blocking{KC: 384, MC: 636, NC: 592}},

		// kc 224 as Zen 5; L2 way 128 KiB: nc = 14·131072/896 = 2048; L3 way
		// 128 KiB: mc = 14·131072/(16·224·4) = 128 slivers = 1792 rows.
		{"sapphire rapids", sapphireRapids, avx512Wide, Blocking{KC: 224, MC: 1792, NC: 2048}},
		{"sapphire rapids", sapphireRapids, avx512Narrow, Blocking{KC: 320, MC: 1246, NC: 1424}},
		{"sapphire rapids", sapphireRapids, avx2Wide, Blocking{KC: 448, MC: 768, NC: 1024}},
		{"sapphire rapids", sapphireRapids, avx2Narrow, Blocking{KC: 640, MC: 534, NC: 712}},

		// L1 way 16 KiB, W1 = 4: C_B = floor(3/(1+8/12)) = 1, kc = 16384/48 = 341 -> 336;
		// nc = 6·131072/1344 = 585 -> 576; L3 way 32 KiB: mc = 15·32768/10752 = 45 slivers = 360 rows.
		{"neoverse n1", neoverseN1, neonWide, Blocking{KC: 336, MC: 360, NC: 576}},
		// C_B = floor(3/3) = 1, kc = 16384/16 = 1024; mc = 15·32768/(8·1024·4) = 15 slivers.
		{"neoverse n1", neoverseN1, neonNarrow, Blocking{KC: 1024, MC: 120, NC: 192}},
		{"neoverse v1", neoverseV1, neonWide, Blocking{KC: 336, MC: 360, NC: 576}},
		{"neoverse v1", neoverseV1, neonNarrow, Blocking{KC: 1024, MC: 120, NC: 192}},

		// L1 way 16 KiB, 128-byte lines: C_B = floor(7/(1+8/12)) = 4, kc =
		// 4·16384/48 = 1365 -> 1344 -> cap 1024; L2 share 3 MiB, way 256 KiB:
		// nc = 10·262144/4096 = 640 -> 636; no L3: the B block takes
		// ceil(1024·636·4/262144) = 10 ways, leaving 1: 8 slivers, mc = 64.
		{"apple m1", appleM1, neonWide, Blocking{KC: 1024, MC: 64, NC: 636}},
		{"apple m1", appleM1, neonNarrow, Blocking{KC: 1024, MC: 64, NC: 640}},
	} {
		got := Model(c.caches, c.tile.mr, c.tile.nr, c.tile.ps)
		if got != c.want {
			t.Errorf("%s %dx%d: Model = %+v, want %+v", c.name, c.tile.mr, c.tile.nr, got, c.want)
		}
		checkInvariants(t, c.name, c.caches, c.tile, got)
	}
}

// checkInvariants checks what Model promises of any blocking: multiples of
// the tile (and kc of 16 floats), within bounds, and each block fitting
// the cache level it targets unless a lower bound overrode the model.
func checkInvariants(t *testing.T, name string, c Caches, tl tile, b Blocking) {
	t.Helper()
	const s = floatBytes
	l1 := c.L1D.withDefaults(32<<10, 8)
	l2 := c.L2.withDefaults(1<<20, 8)
	if b.KC < kcMin || b.KC > kcMax || b.KC%16 != 0 || b.KC%(l1.Line/s) != 0 {
		t.Errorf("%s %dx%d: kc %d not a multiple of a line in [%d, %d]", name, tl.mr, tl.nr, b.KC, kcMin, kcMax)
	}
	if b.NC < 4*tl.nr || b.NC > ncMax || b.NC%tl.nr != 0 {
		t.Errorf("%s %dx%d: nc %d not a multiple of NR in [4·NR, %d]", name, tl.mr, tl.nr, b.NC, ncMax)
	}
	if b.MC < 4*tl.mr || b.MC > mcMax || b.MC%tl.mr != 0 {
		t.Errorf("%s %dx%d: mc %d not a multiple of MR in [4·MR, %d]", name, tl.mr, tl.nr, b.MC, mcMax)
	}
	// L1: the A sliver and one B panel in W1 − 1 ways (when there are
	// ways enough for the argument: at least 3).
	w1 := l1.wayBytes()
	if b.KC > kcMin && l1.Ways >= 3 && ceilDiv(tl.ps*b.KC*s, w1)+ceilDiv(tl.nr*b.KC*s, w1) > l1.Ways-1 {
		t.Errorf("%s %dx%d: kc %d: the A sliver and a B panel do not fit %d ways of %d bytes", name, tl.mr, tl.nr, b.KC, l1.Ways-1, w1)
	}
	// L2: the B block and one A sliver in W2 − 1 ways.
	w2 := l2.wayBytes()
	if b.NC > 4*tl.nr && l2.Ways >= 3 && ceilDiv(b.KC*b.NC*s, w2)+ceilDiv(tl.ps*b.KC*s, w2) > l2.Ways-1 {
		t.Errorf("%s %dx%d: kc %d nc %d: the B block and an A sliver do not fit %d ways of %d bytes", name, tl.mr, tl.nr, b.KC, b.NC, l2.Ways-1, w2)
	}
	// Last level: the packed A block in the ways left to it.
	ablock := ceilDiv(b.MC, tl.mr) * tl.ps * b.KC * s
	if b.MC > 4*tl.mr {
		if c.L3.Size > 0 {
			l3 := c.L3.withDefaults(0, 16)
			if ablock > (l3.Ways-1)*l3.wayBytes() {
				t.Errorf("%s %dx%d: mc %d: the A block (%d bytes) exceeds %d ways of the L3 share", name, tl.mr, tl.nr, b.MC, ablock, l3.Ways-1)
			}
		} else if ceilDiv(b.KC*b.NC*s, w2)+ceilDiv(ablock, w2) > l2.Ways-1 {
			t.Errorf("%s %dx%d: mc %d: the A block and the B block overflow the L2", name, tl.mr, tl.nr, b.MC)
		}
	}
}

// TestModelInvariants sweeps cache descriptions, including odd and
// unknown ones, through the invariants.
func TestModelInvariants(t *testing.T) {
	var l1s = []Level{{}, {16 << 10, 4, 64, 1}, {32 << 10, 8, 64, 1}, {48 << 10, 12, 64, 1}, {64 << 10, 4, 64, 1}, {128 << 10, 8, 128, 1}, {32 << 10, 1, 32, 1}, {64 << 10, 16, 64, 1}}
	var l2s = []Level{{}, {256 << 10, 4, 64, 1}, {512 << 10, 8, 64, 1}, {1 << 20, 16, 64, 1}, {2 << 20, 16, 64, 1}, {12 << 20, 12, 128, 4}, {64 << 20, 16, 64, 1}}
	var l3s = []Level{{}, {8 << 20, 16, 64, 4}, {32 << 20, 16, 64, 8}, {105 << 20, 15, 64, 56}, {256 << 20, 16, 64, 1}}
	for _, l1 := range l1s {
		for _, l2 := range l2s {
			for _, l3 := range l3s {
				for _, tl := range []tile{avx512Wide, avx512Narrow, avx2Wide, avx2Narrow, neonWide, neonNarrow} {
					c := Caches{l1, l2, l3}
					checkInvariants(t, "sweep", c, tl, Model(c, tl.mr, tl.nr, tl.ps))
				}
			}
		}
	}
}

func TestModelBadTile(t *testing.T) {
	for _, tl := range []tile{{0, 16, 8}, {6, 0, 8}, {8, 12, 4}} {
		func() {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.Contains(s, "gemm.Model") {
					t.Errorf("Model(%v) panicked with %v, want a message naming gemm.Model", tl, r)
				}
			}()
			Model(zen4, tl.mr, tl.nr, tl.ps)
		}()
	}
}

// TestCachesOf checks the conversion from cpuinfo, and that unknowns
// become the vendor defaults.
func TestCachesOf(t *testing.T) {
	for _, c := range []struct {
		name string
		info cpuinfo.Info
		want Caches
	}{
		{"zen4 from sysfs", cpuinfo.Info{Vendor: "AMD", Arch: "amd64", Cores: 96, L1D: 32 << 10, L2: 1 << 20, L3: 32 << 20, LineSize: 64, L1DWays: 8, L2Ways: 8, L3Ways: 16, L2Shared: 1, L3Shared: 8}, zen4},
		{"amd64, ways unknown", cpuinfo.Info{Vendor: "Intel", Arch: "amd64", Cores: 28, L1D: 48 << 10, L2: 2 << 20, L3: 105 << 20}, Caches{Level{48 << 10, 12, 64, 1}, Level{2 << 20, 16, 64, 1}, Level{105 << 20, 12, 64, 28}}},
		{"arm64, nothing known", cpuinfo.Info{Arch: "arm64"}, Caches{Level{64 << 10, 4, 64, 1}, Level{1 << 20, 8, 64, 1}, Level{}}},
		{"apple", cpuinfo.Info{Vendor: "Apple", Arch: "arm64", L1D: 128 << 10, L2: 12 << 20, LineSize: 128}, appleM1},
	} {
		if got := CachesOf(c.info); got != c.want {
			t.Errorf("%s: CachesOf = %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestParseBlocking(t *testing.T) {
	for _, c := range []struct {
		in   string
		want map[string]Blocking
		err  string
	}{
		{"", nil, ""},
		{" 256,448,512 ", map[string]Blocking{"": {256, 448, 512}}, ""},
		{"256,,0", map[string]Blocking{"": {256, 0, 0}}, ""},
		{"avx512:160,448,800;avx2:256,384,512", map[string]Blocking{"avx512": {160, 448, 800}, "avx2": {256, 384, 512}}, ""},
		{"256,448", nil, "want kc,mc,nc"},
		{"256,x,512", nil, "not a block size"},
		{"-1,2,3", nil, "not a block size"},
		{"avx2:1,2,3;avx2:4,5,6", nil, "twice"},
	} {
		got, err := ParseBlocking(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseBlocking(%q) error %v, want one containing %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || len(got) != len(c.want) {
			t.Errorf("ParseBlocking(%q) = %v, %v; want %v", c.in, got, err, c.want)
			continue
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("ParseBlocking(%q)[%q] = %+v, want %+v", c.in, k, got[k], v)
			}
		}
	}
}

func TestOverride(t *testing.T) {
	model := Blocking{KC: 128, MC: 2044, NC: 1536}
	for _, c := range []struct {
		o, want Blocking
	}{
		{Blocking{}, model},
		{Blocking{KC: 160, MC: 448, NC: 800}, Blocking{KC: 160, MC: 448, NC: 800}},
		{Blocking{MC: 384, NC: 500}, Blocking{KC: 128, MC: 378, NC: 480}}, // rounded down to 14 and 32
		{Blocking{MC: 5, NC: 5}, Blocking{KC: 128, MC: 14, NC: 32}},       // at least one tile
	} {
		if got := model.override(c.o, 14, 32); got != c.want {
			t.Errorf("override(%+v) = %+v, want %+v", c.o, got, c.want)
		}
	}
}
