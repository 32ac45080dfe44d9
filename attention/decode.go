package attention

import (
	"fmt"
	"math"

	"github.com/simdgpt/simdgpt/kernels"
)

// KVCache holds the keys and values of the positions of one sequence
// (B = 1) that a layer has decoded so far, for incremental decoding with
// Decode. Use one cache per layer and sequence.
type KVCache struct {
	c, maxT, n int
	// kt holds the keys transposed, [C, ldk]: column i is position i, so
	// head h's keys are rows h·D..h·D+D-1, which a new query multiplies as
	// they are (kernels.Gemm reads such a B in place, without packing).
	kt  []float32
	ldk int
	v   []float32 // [maxT, C]: row i is position i, heads side by side
}

// NewKVCache returns an empty cache for a layer of width c and sequences
// of at most maxT positions. It panics if c or maxT is less than 1.
func NewKVCache(c, maxT int) *KVCache {
	if c < 1 {
		panic(fmt.Sprintf("attention.NewKVCache: c = %d, must be >= 1", c))
	}
	if maxT < 1 {
		panic(fmt.Sprintf("attention.NewKVCache: maxT = %d, must be >= 1", maxT))
	}
	// Rows of kt start on cache lines and are not 4 KiB apart (see
	// kernels.Gemm's in-place B).
	ldk := (maxT + 15) &^ 15
	if ldk%1024 == 0 {
		ldk += 16
	}
	return &KVCache{c: c, maxT: maxT, kt: make([]float32, c*ldk), ldk: ldk, v: make([]float32, maxT*c)}
}

// Len returns the number of positions in the cache: the position the next
// decoded token will have.
func (c *KVCache) Len() int { return c.n }

// Cap returns the most positions the cache can hold (maxT).
func (c *KVCache) Cap() int { return c.maxT }

// Reset empties the cache for a new sequence, keeping its memory.
func (c *KVCache) Reset() { c.n = 0 }

// decodeState is Decode's workspace.
type decodeState struct {
	qkv, s, y []float32
	n, past   int // tokens of this call, positions cached before them
	cache     *KVCache
}

// decodeMinFlops is the work of one Decode call below which the heads are
// computed on the calling goroutine.
const decodeMinFlops = 1 << 22

// Decode computes the layer's output for the next n tokens of the sequence
// whose earlier positions are in cache: x [n,C] are the tokens at positions
// cache.Len() .. cache.Len()+n-1 and out [n,C] receives their outputs. Their
// keys and values are appended to the cache. The rows of out equal the
// same rows of Forward over the whole sequence up to float32 rounding
// (the kernels sum in a different order for a different number of rows;
// the tests hold them to 5e-6 of the largest output). Feed a prompt with
// one call of n = its length, then one token per call. out may be the same
// slice as x. It panics if n < 1, if x or out is shorter than n*C, if the
// cache is for another width or has no room for n more positions, or if
// a slice of p does not have its exact size. Decode does not disturb what
// Forward kept for Backward and Probs.
func (l *Layer) Decode(out, x []float32, n int, p Params, cache *KVCache) {
	const fn = "Decode"
	C := l.c
	if n < 1 {
		panic(fmt.Sprintf("attention.Decode: n = %d, must be >= 1", n))
	}
	if cache == nil {
		panic("attention.Decode: cache is nil (use NewKVCache)")
	}
	if cache.c != C {
		panic(fmt.Sprintf("attention.Decode: cache is for C = %d, the layer has C = %d", cache.c, C))
	}
	if cache.n+n > cache.maxT {
		panic(fmt.Sprintf("attention.Decode: cache.Len() = %d plus n = %d tokens exceeds the cache's maxT = %d", cache.n, n, cache.maxT))
	}
	if len(x) < n*C {
		panic(fmt.Sprintf("attention.Decode: len(x) = %d, want >= n*C = %d*%d = %d", len(x), n, C, n*C))
	}
	if len(out) < n*C {
		panic(fmt.Sprintf("attention.Decode: len(out) = %d, want >= n*C = %d*%d = %d", len(out), n, C, n*C))
	}
	p.check(fn, "p", C)

	d := &l.dec
	past := cache.n
	total := past + n
	d.qkv = grow(d.qkv, n*3*C)
	d.y = grow(d.y, n*C)
	d.s = grow(d.s, l.h*n*total)
	project(n, C, 3*C, x, p.WQKV, p.BQKV, d.qkv)
	for r := 0; r < n; r++ {
		row := d.qkv[r*3*C : (r+1)*3*C]
		for j, kv := range row[C : 2*C] {
			cache.kt[j*cache.ldk+past+r] = kv
		}
		copy(cache.v[(past+r)*C:(past+r+1)*C], row[2*C:])
	}
	cache.n = total
	d.n, d.past, d.cache = n, past, cache

	workers := 1
	if 4*n*total*C >= decodeMinFlops {
		workers = workersFor(l.h)
	}
	l.phase = phaseDecode
	runParallel(l, &l.it, l.h, workers)
	d.cache = nil
	project(n, C, C, d.y, p.WProj, p.BProj, out)
}

// decodeItem computes head h of a Decode call.
func (l *Layer) decodeItem(h int) {
	d := &l.dec
	C, D, n, past := l.c, l.d, d.n, d.past
	total := past + n
	ldk := d.cache.ldk
	q := d.qkv[h*D:]
	kt := d.cache.kt[h*D*ldk:]
	v := d.cache.v[h*D:]
	s := d.s[h*n*total : (h+1)*n*total]
	y := d.y[h*D:]
	inf := float32(math.Inf(-1))
	for i0 := 0; i0 < n; i0 += rowBlock {
		i1 := min(i0+rowBlock, n)
		m, keys := i1-i0, past+i1
		sb := s[i0*total:]
		kernels.Gemm(false, false, m, keys, D, l.scale, q[i0*3*C:], 3*C, kt, ldk, 0, sb, total)
		// Causal mask: query i0+r (position past+i0+r) sees keys up to
		// its own position. A single token sees every cached key.
		for r := 0; r < m-1; r++ {
			row := sb[r*total+past+i0+r+1 : r*total+keys]
			for j := range row {
				row[j] = inf
			}
		}
		kernels.Softmax(m, keys, sb, total, sb, total)
		kernels.Gemm(false, false, m, D, keys, 1, sb, total, v, C, 0, y[i0*C:], C)
	}
}
