package attention

import (
	"fmt"

	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

// KVCache is the number format of a Decoder's key/value cache.
type KVCache int

const (
	// KVFloat32 keeps the keys and values as the caller computed them:
	// 8 bytes per position and channel (4·C·maxT bytes a layer).
	KVFloat32 KVCache = iota
	// KVBF16 rounds each key and value to bfloat16 (lowbit.ToBF16: to
	// nearest even, relative error at most 2⁻⁹) as it enters the cache:
	// half the memory, and half the bytes a decoded token reads from the
	// cache (llama.cpp's f16 cache types do the same in half precision).
	// Everything else stays float32: the scores and the outputs are sums
	// of products of the float32 queries and probabilities with the
	// rounded keys and values, summed in float32 (on CPUs with
	// AVX512_BF16, a query or probability row of a token decoded alone
	// is held as two bfloat16 vectors, within 2⁻¹⁶ of it: see kernels'
	// low-bit products). On inputs whose scores are of order 1 the
	// outputs stay within 0.4% of float64 attention's largest output
	// (the tests hold them to 1%).
	KVBF16
)

// String returns "f32" or "bf16", the names ParseKVCache takes.
func (f KVCache) String() string {
	switch f {
	case KVFloat32:
		return "f32"
	case KVBF16:
		return "bf16"
	}
	return fmt.Sprintf("KVCache(%d)", int(f))
}

// ParseKVCache returns the KVCache named s ("f32" or "bf16"), or an error
// naming s.
func ParseKVCache(s string) (KVCache, error) {
	switch s {
	case "f32":
		return KVFloat32, nil
	case "bf16":
		return KVBF16, nil
	}
	return 0, fmt.Errorf("key/value cache %q: want f32 or bf16", s)
}

// valid reports whether f is one of the formats above.
func (f KVCache) valid() bool { return f == KVFloat32 || f == KVBF16 }

// bytesPer returns the bytes of one cached key or value element.
func (f KVCache) bytesPer() int {
	if f == KVBF16 {
		return 2
	}
	return 4
}

// CacheBytes returns the bytes a Decoder in format f holds for maxT
// positions of C channels in H heads (keys and values, with the bf16
// cache's padding: each head's key rows padded to whole groups of 32,
// its value columns to whole blocks of 32 positions).
func CacheBytes(f KVCache, maxT, c, h int) int64 {
	if f != KVBF16 {
		return 8 * int64(maxT) * int64(c)
	}
	d := c / h
	keys := int64(h) * int64(maxT) * int64(lowbit.Groups(d)*lowbit.GroupSize)
	values := int64(h) * int64(lowbit.Groups(maxT)*lowbit.GroupSize) * int64(d)
	return 2 * (keys + values)
}

// The bf16 cache of a Decoder, head h of H with D channels:
//
//   - keys: the rows of a lowbit.BF16 matrix (position t is row t, its D
//     channels the columns), rows ks = Groups(D)·32 elements apart, head
//     h's maxT rows from kb[h·maxT·ks]; the first keys rows are the
//     N = keys matrix GemmBF16 multiplies a query by.
//   - values: transposed in blocks of 32 positions, each a D×32
//     lowbit.BF16 matrix (row d holds channel d of the block's positions,
//     in the group's interleaved order), head h's nb = Groups(maxT)
//     blocks from vb[h·nb·D·32]. A query's output is the sum over the
//     blocks of GemmBF16 of its probabilities with them. The positions
//     of the last block at or after Len() hold +0 (a block is cleared
//     when its first position is written), so the zero-padded
//     probabilities beyond Len() multiply zeros, never a stale value.
type bf16Cache struct {
	ks, nb int
	kb, vb []uint16
	// Per worker: the matrices handed to GemmBF16 (kept here so that
	// passing them does not allocate) and, for prompts, the head's keys
	// and values widened to float32 (wk, wv: Len()×D each, Len() after
	// the call).
	views  []bf16Views
	wk, wv []float32
}

type bf16Views struct{ k, v lowbit.BF16 }

// bf16DirectRows is the most rows of a call whose heads read the bf16
// cache in place (lowbit's kernels take up to 8 rows of A a pass); a
// longer call (a prompt) widens each head's cache to float32 once and
// runs the float32 products.
const bf16DirectRows = 8

func newBF16Cache(maxT, c, h int) *bf16Cache {
	d := c / h
	b := &bf16Cache{ks: lowbit.Groups(d) * lowbit.GroupSize, nb: lowbit.Groups(maxT)}
	b.kb = make([]uint16, h*maxT*b.ks)
	b.vb = make([]uint16, h*b.nb*d*lowbit.GroupSize)
	return b
}

// store rounds head h's key k and value v (D elements each) of position
// t into the cache.
func (b *bf16Cache) store(h, maxT, t int, k, v []float32) {
	D := len(k)
	row := b.kb[(h*maxT+t)*b.ks:][:b.ks]
	for p, x := range k {
		row[lowbit.BF16Index(p)] = lowbit.ToBF16(x)
	}
	blk := b.vb[(h*b.nb+t/lowbit.GroupSize)*D*lowbit.GroupSize:][:D*lowbit.GroupSize]
	q := t % lowbit.GroupSize
	if q == 0 {
		clear(blk)
	}
	at := lowbit.BF16Index(q)
	for c, x := range v {
		blk[c*lowbit.GroupSize+at] = lowbit.ToBF16(x)
	}
}

// keys returns worker's view of head h's first n keys.
func (b *bf16Cache) keys(worker, h, maxT, n, D int) *lowbit.BF16 {
	k := &b.views[worker].k
	*k = lowbit.BF16{N: n, K: D, Data: b.kb[h*maxT*b.ks:][:n*b.ks]}
	return k
}

// values returns worker's view of block blk of head h's values, holding
// n positions (1..32).
func (b *bf16Cache) values(worker, h, blk, n, D int) *lowbit.BF16 {
	v := &b.views[worker].v
	*v = lowbit.BF16{N: D, K: n, Data: b.vb[(h*b.nb+blk)*D*lowbit.GroupSize:][:D*lowbit.GroupSize]}
	return v
}

// widen writes head h's first n keys and values as float32 into worker's
// wk and wv ([n, D] each, exact) and returns them.
func (b *bf16Cache) widen(worker, h, maxT, n, D int) (k, v []float32) {
	k = b.wk[worker*n*D:][:n*D]
	v = b.wv[worker*n*D:][:n*D]
	for t := 0; t < n; t++ {
		row := b.kb[(h*maxT+t)*b.ks:]
		for p := range D {
			k[t*D+p] = lowbit.FromBF16(row[lowbit.BF16Index(p)])
		}
	}
	for blk := 0; blk*lowbit.GroupSize < n; blk++ {
		src := b.vb[(h*b.nb+blk)*D*lowbit.GroupSize:][:D*lowbit.GroupSize]
		for q := 0; q < min(lowbit.GroupSize, n-blk*lowbit.GroupSize); q++ {
			at, dst := lowbit.BF16Index(q), v[(blk*lowbit.GroupSize+q)*D:][:D]
			for c := range dst {
				dst[c] = lowbit.FromBF16(src[c*lowbit.GroupSize+at])
			}
		}
	}
	return k, v
}

// grow sizes the per-worker state of a call for workers workers, with
// room to widen n positions of D channels when wide.
func (b *bf16Cache) grow(workers, n, D int, wide bool) {
	if len(b.views) < workers {
		b.views = make([]bf16Views, workers)
	}
	if wide {
		b.wk = grow(b.wk, workers*n*D)
		b.wv = grow(b.wv, workers*n*D)
	}
}
