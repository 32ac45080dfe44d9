package gemm

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/simdgpt/simdgpt/kernels/internal/cpuinfo"
)

// Level is one level of the data caches as the blocking model sees it.
type Level struct {
	Size   int // bytes of the whole cache (of all the cores sharing it); 0: no such level
	Ways   int // associativity W
	Line   int // line size L in bytes
	Shared int // cores sharing it (1, or 0, for a private cache)
}

// Caches describes the data caches of one core: L1d, L2 and L3 (L3.Size 0
// when there is none, as on Apple's cores).
type Caches struct{ L1D, L2, L3 Level }

// CachesOf returns the cache description in info, with the vendor's
// defaults for what cpuid and the OS did not say (cpuinfo.WithDefaults).
func CachesOf(info cpuinfo.Info) Caches {
	info = info.WithDefaults()
	c := Caches{
		L1D: Level{Size: info.L1D, Ways: info.L1DWays, Line: info.LineSize, Shared: 1},
		L2:  Level{Size: info.L2, Ways: info.L2Ways, Line: info.LineSize, Shared: info.L2Shared},
	}
	if info.L3 > 0 {
		c.L3 = Level{Size: info.L3, Ways: info.L3Ways, Line: info.LineSize, Shared: info.L3Shared}
	}
	return c
}

// Blocking is a driver's block sizes: depth KC, rows of A MC, columns of
// B NC (see the loop nest in the package documentation).
type Blocking struct{ KC, MC, NC int }

// Bounds of the model's block sizes. Below kcMin the C tile's load and
// store, once per kc steps, weigh on the micro-kernel; above kcMax the
// model's L1 argument still holds (Apple's 128 KiB L1d gives 1344 for
// 8×12) but the B block it leaves in L2 gets narrow. ncMax and mcMax bound
// the packed buffers (B block kc·nc floats, A block about kc·mc floats per
// goroutine).
const (
	kcMin, kcMax = 64, 1024
	ncMax        = 4096
	mcMax        = 2048
	floatBytes   = 4 // S, the size of a float32
)

// Model returns the block sizes for micro-kernels of mr×nr whose packed A
// panels hold ps >= mr floats per k step, on a core with caches c: an
// analytical model in the manner of Low, Igual, Smith and Quintana-Ortí,
// "Analytical Modeling Is Enough for High-Performance BLIS" (ACM TOMS 43,
// 2016), written for this package's loop nest.
//
// Which operand is which. BLIS keeps a kc×nr micro-panel of B in L1,
// streams mr×kc micro-panels of A past it (its micro-kernel loads A as
// vectors and broadcasts B), keeps the mc×kc block of A in L2 and the
// kc×nc block of B in L3. Here the kernels load B as vectors and
// broadcast A, so the roles swap: the MR×kc sliver of A is the panel that
// stays in L1 across the innermost loop (jr), the kc×NR panels of B stream
// past it, and the kc×nc block of B is the one that stays in L2 across the
// ir loop (our nc plays BLIS's mc). Our mc, the rows of A handled per
// block, plays BLIS's nc; A is packed one sliver at a time, except that a
// transposed A is packed a whole mc×kc block at once (PackPanels), and
// that packed block is what must come back from the last level cache.
//
// Symbols: S = 4 bytes; for cache level i, W_i ways, line L_i and N_i
// sets, so one way spans B_i = N_i·L_i bytes; a cache shared by P cores
// counts as its per-core share, W_i ways of B_i = Size_i/(P·W_i) bytes.
// ceil and floor as usual; an operand of x bytes fills ceil(x/B_i) ways
// of every set when laid out contiguously.
//
// kc, from L1. The A sliver (ps·kc·S bytes: the packed panel's stride ps,
// MR rounded up, is what it occupies) is used at every k step of every
// tile of the row; a B panel (NR·kc·S bytes) is used once per tile. With
// LRU replacement, a new B panel evicts the least recently used lines,
// those of the previous B panel, and not the A sliver, provided one way
// of each set is left for the incoming panel (and the C tile), the B
// panel fills C_B ways and the sliver the rest:
//
//	C_B = floor((W_1 − 1) / (1 + ps/NR))
//	kc  = floor(C_B · B_1 / (NR · S))
//
// so the sliver takes C_B·ps/NR <= W_1 − 1 − C_B ways (C_B is at least 1:
// a cache of fewer than 3 ways leaves the argument no room; Low et al.'s
// C_Ar = floor((W_L1 − 1)/(1 + nr/mr)), with their A_r our B panel and
// their nr/mr our ps/NR). kc is rounded down to a multiple of 16 floats
// (a 64-byte line, and the longest vector) or of L_1/S when the line is
// longer, and kept in [kcMin, kcMax].
//
// nc, from L2. The B block (kc·nc·S bytes) is reused by every sliver of
// A; each sliver (ps·kc·S) passes through L2 once, and one way is left for
// the C tiles and the next sliver:
//
//	C_A2 = ceil(ps · kc · S / B_2)
//	C_B2 = W_2 − 1 − C_A2
//	nc   = floor(C_B2 · B_2 / (kc · S))
//
// rounded down to a multiple of NR and kept in [4·NR, ncMax].
//
// mc, from the last level. A packed mc×kc block of A (ceil(mc/MR)·ps·kc·S
// bytes) is written, then read one sliver per row of tiles while the B
// block, in L2, is swept for each; it must stay in the last level cache
// meanwhile. With an L3 (all of those modelled are non-inclusive victim
// caches, Zen's and Intel's since Skylake-SP, or system caches, Arm's
// CMN, so the B block does not occupy it), the block gets all ways but
// one of the per-core share:
//
//	C_A3 = W_3 − 1
//	mc   = floor(C_A3 · B_3 / (ps · kc · S)) · MR
//
// Without an L3 (Apple), the last level is the L2, whose ways the B block
// already fills but for C_A2 + 1: C_A3 = W_2 − 1 − ceil(kc·nc·S/B_2), with
// B_2 in place of B_3. mc is a multiple of MR kept in [4·MR, mcMax].
//
// The model assumes LRU and packed operands. Where it is off: A read in
// place (the strided kernels, m small against n) and B read in place
// (BInPlace) have rows ld floats apart, which map to sets differently; real
// L1s are pseudo-LRU with hardware prefetchers, which tolerate slightly
// larger kc (PERF.md has the measurements that disagree).
func Model(c Caches, mr, nr, ps int) Blocking {
	if mr <= 0 || nr <= 0 || ps < mr {
		panic(fmt.Sprintf("gemm.Model: tile mr=%d nr=%d ps=%d: need mr, nr > 0 and ps >= mr", mr, nr, ps))
	}
	l1 := c.L1D.withDefaults(32<<10, 8)
	l2 := c.L2.withDefaults(1<<20, 8)

	// kc from L1.
	cb := max(1, (l1.Ways-1)*nr/(nr+ps)) // floor((W−1)/(1+ps/NR))
	kc := cb * l1.wayBytes() / (nr * floatBytes)
	step := max(16, l1.Line/floatBytes)
	kc = min(max(kc/step*step, kcMin), kcMax)

	// nc from L2.
	ca2 := ceilDiv(ps*kc*floatBytes, l2.wayBytes())
	cb2 := max(1, l2.Ways-1-ca2)
	nc := cb2 * l2.wayBytes() / (kc * floatBytes)
	nc = min(max(nc/nr*nr, 4*nr), ncMax/nr*nr)

	// mc from the last level.
	llc, ca3 := l2, l2.Ways-1-ceilDiv(kc*nc*floatBytes, l2.wayBytes())
	if c.L3.Size > 0 {
		llc = c.L3.withDefaults(0, 16)
		ca3 = llc.Ways - 1
	}
	slivers := max(0, ca3) * llc.wayBytes() / (ps * kc * floatBytes)
	mc := min(max(slivers*mr, 4*mr), mcMax/mr*mr)
	return Blocking{KC: kc, MC: mc, NC: nc}
}

// withDefaults fills an unknown size, ways or line of l.
func (l Level) withDefaults(size, ways int) Level {
	if l.Size <= 0 {
		l.Size = size
	}
	if l.Ways <= 0 {
		l.Ways = ways
	}
	if l.Line <= 0 {
		l.Line = 64
	}
	if l.Shared <= 0 {
		l.Shared = 1
	}
	return l
}

// wayBytes is B = N·L per core: the bytes of one way of the core's share.
func (l Level) wayBytes() int { return max(l.Line, l.Size/(l.Shared*l.Ways)) }

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// EnvBlocking is the environment variable that overrides the model's
// block sizes, a tuning aid for comparing blockings (for example today's
// model against another choice, interleaved in one sitting):
//
//	SIMDGPT_BLOCKING=kc,mc,nc                  every driver
//	SIMDGPT_BLOCKING=avx512:160,448,800;avx2:256,384,512
//
// An empty or 0 field keeps the model's value; mc is rounded down to a
// multiple of MR and nc to a multiple of NR (at least one tile). A value
// that does not parse is reported once on stderr and the model is used.
const EnvBlocking = "SIMDGPT_BLOCKING"

// envBlocking is the parsed SIMDGPT_BLOCKING: per driver name ("" for
// every driver).
var envBlocking = func() map[string]Blocking {
	v := os.Getenv(EnvBlocking)
	m, err := ParseBlocking(v)
	if err != nil {
		fmt.Fprintf(os.Stderr, "simdgpt/kernels: %s=%q: %v; using the cache model\n", EnvBlocking, v, err)
		return nil
	}
	return m
}()

// ParseBlocking parses a SIMDGPT_BLOCKING value (see EnvBlocking) into
// block sizes per driver name, "" for a value without a name.
func ParseBlocking(v string) (map[string]Blocking, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil, nil
	}
	out := map[string]Blocking{}
	for _, part := range strings.Split(v, ";") {
		part = strings.TrimSpace(part)
		name, sizes, named := strings.Cut(part, ":")
		if !named {
			name, sizes = "", part
		}
		name = strings.TrimSpace(name)
		f := strings.Split(sizes, ",")
		if len(f) != 3 {
			return nil, fmt.Errorf("%q: want kc,mc,nc", part)
		}
		var n [3]int
		for i, s := range f {
			s = strings.TrimSpace(s)
			if s == "" {
				continue
			}
			x, err := strconv.Atoi(s)
			if err != nil || x < 0 || x > 1<<20 {
				return nil, fmt.Errorf("%q: %q is not a block size", part, s)
			}
			n[i] = x
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("%q given twice", name)
		}
		out[name] = Blocking{KC: n[0], MC: n[1], NC: n[2]}
	}
	return out, nil
}

// override returns b with the non-zero fields of o, mc and nc rounded
// down to whole tiles of mr×nr.
func (b Blocking) override(o Blocking, mr, nr int) Blocking {
	if o.KC > 0 {
		b.KC = o.KC
	}
	if o.MC > 0 {
		b.MC = max(mr, o.MC/mr*mr)
	}
	if o.NC > 0 {
		b.NC = max(nr, o.NC/nr*nr)
	}
	return b
}
