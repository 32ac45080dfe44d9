package blocked

import "testing"

func TestBlockSizes(t *testing.T) {
	for _, c := range []struct {
		name            string
		l1d, l2, mr, nr int
		kc, nc          int
	}{
		// (mr+nr)·kc·4 <= L1D, multiple of 32, in [64, 256];
		// kc·nc·4 <= L2/2, multiple of nr, in [4nr, 4096].
		{"zen5 avx512", 48 << 10, 1 << 20, 14, 32, 256, 512},   // 49152/184 = 267 -> 256
		{"zen5 avx2", 48 << 10, 1 << 20, 6, 16, 256, 512},      // 558 -> 256 (cap)
		{"32K L1 avx512", 32 << 10, 1 << 20, 14, 32, 160, 800}, // 178 -> 160; 524288/640 = 819 -> 800
		{"32K L1 avx2", 32 << 10, 2 << 20, 6, 16, 256, 1024},   // 372 -> 256; 1048576/1024
		{"unknown", 0, 0, 14, 32, 160, 800},                    // defaults 32 KiB, 1 MiB
		{"tiny L1", 4 << 10, 256 << 10, 14, 32, 64, 512},       // 22 -> 64 (floor); 131072/256 = 512
		{"tiny L2", 48 << 10, 64 << 10, 14, 32, 256, 128},      // 32 -> 4nr = 128
		{"huge L2", 64 << 10, 64 << 20, 8, 12, 256, 4096},      // cap
		{"neon 8x12", 64 << 10, 1 << 20, 8, 12, 256, 504},      // 819 -> 256; 512 -> multiple of 12
	} {
		kc, nc := BlockSizes(c.l1d, c.l2, c.mr, c.nr)
		if kc != c.kc || nc != c.nc {
			t.Errorf("%s: BlockSizes(%d, %d, %d, %d) = %d, %d; want %d, %d", c.name, c.l1d, c.l2, c.mr, c.nr, kc, nc, c.kc, c.nc)
		}
	}
}
