package attention

import (
	"fmt"
	"math"

	"github.com/simdgpt/simdgpt/internal/parallel"
	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

// Decoder computes a layer's output incrementally, for sampling: it holds
// the keys and values of the positions of one sequence (B = 1) decoded so
// far (a key/value cache) and its own workspace, so each new token costs
// one row of work instead of a forward pass over the whole context. Make
// one per layer and sequence with Layer.NewDecoder; it shares the layer's
// shape and kernel implementation but none of its state, so decoding
// never disturbs what Forward kept for Backward and Probs. A Decoder is
// not safe for concurrent use; it allocates nothing once its workspace
// has grown to the longest call.
type Decoder struct {
	shape

	// The cache: maxT positions, n of them filled.
	maxT, n int
	// k and v hold the keys and values head by head, [H, maxT, D]: head
	// h's are one contiguous block, row i position i, which a new query
	// reads front to back (its scores as dot products with the rows of
	// k, its output as the sum of the rows of v they weigh). With a bf16
	// cache they are nil and bf16 holds the cache instead.
	k, v []float32
	kv   KVCache
	bf16 *bf16Cache

	// The call in progress: the caller's qkv and y, and the scores.
	qkv, s, y []float32
	rows      int // tokens of this call
	past      int // positions cached before them
}

// NewDecoder returns a Decoder with an empty float32 cache (KVFloat32)
// for sequences of at most maxT positions of l's shape and
// implementation: NewDecoderKV(maxT, KVFloat32).
func (l *Layer) NewDecoder(maxT int) *Decoder {
	return l.newDecoder("NewDecoder", maxT, KVFloat32)
}

// NewDecoderKV returns a Decoder with an empty cache in format kv for
// sequences of at most maxT positions of l's shape and implementation
// (CacheBytes(kv, maxT, C, H) bytes). It panics if maxT is less than 1,
// if kv is not a KVCache of this package, or if the cache's size would
// not fit in an int (maxT at most MaxInt/4/C - 32 for KVFloat32,
// MaxInt/64/C - 32 for KVBF16).
func (l *Layer) NewDecoderKV(maxT int, kv KVCache) *Decoder {
	return l.newDecoder("NewDecoderKV", maxT, kv)
}

func (l *Layer) newDecoder(fn string, maxT int, kv KVCache) *Decoder {
	if maxT < 1 {
		panic(fmt.Sprintf("attention.Layer.%s: maxT = %d, must be >= 1", fn, maxT))
	}
	if !kv.valid() {
		panic(fmt.Sprintf("attention.Layer.%s: kv = %v, want KVFloat32 or KVBF16", fn, kv))
	}
	c := l.c
	// The float32 cache is 2·C·maxT floats; the bf16 one at most
	// 2·(C+31·H)·(maxT+31) halves, under 16·C·(maxT+32) floats' bytes.
	limit := math.MaxInt/4/c - 32
	if kv == KVBF16 {
		limit = math.MaxInt/64/c - 32
	}
	if maxT > limit {
		panic(fmt.Sprintf("attention.Layer.%s: maxT = %d, must be <= %d for C = %d (the cache's size must be an int)", fn, maxT, limit, c))
	}
	d := &Decoder{shape: l.shape, maxT: maxT, kv: kv}
	if kv == KVBF16 {
		d.bf16 = newBF16Cache(maxT, c, l.h)
	} else {
		d.k, d.v = make([]float32, maxT*c), make([]float32, maxT*c)
	}
	return d
}

// KVCache returns the format of the decoder's cache.
func (d *Decoder) KVCache() KVCache { return d.kv }

// Len returns the number of positions in the cache: the position the next
// decoded token will have.
func (d *Decoder) Len() int { return d.n }

// Cap returns the most positions the cache can hold (maxT).
func (d *Decoder) Cap() int { return d.maxT }

// Reset empties the cache for a new sequence, keeping its memory.
func (d *Decoder) Reset() { d.n = 0 }

// decodeMinFlops is the work of one Decode call below which the heads are
// computed on the calling goroutine. For one token it is 4·Len()·C, the
// cache read (2·Len()·C floats) split by heads from about 340 positions
// of GPT-2's width on, where the cache of a layer no longer fits in L2
// and a second core adds memory bandwidth.
const decodeMinFlops = 1 << 20

// decodeHeads is a Decoder seen as the parallel.Task of one Decode call:
// part h is head h.
type decodeHeads Decoder

// RunPart computes one head of the call with the worker's scores.
func (dh *decodeHeads) RunPart(worker, h int) { (*Decoder)(dh).decodeHead(worker, h) }

// Decode computes the heads of the next n positions of the sequence
// whose earlier positions are in the cache: qkv [n,3C] holds their
// queries, keys and values side by side (a caller's projection
// x·WQKV + BQKV of the tokens at positions Len() .. Len()+n-1), and y
// [n,C] receives the heads' outputs concatenated (the input of the
// caller's output projection). Their keys and values are appended to the
// cache. The rows of y equal the same rows of Layer.Forward over the
// whole sequence up to float32 rounding (the kernels sum in a different
// order for a different number of rows; the tests hold them to 5e-6 of
// the largest output). Feed a prompt with one call of n = its length (or
// a few calls of consecutive chunks), then one token per call: a prompt's
// rows go through the heads in blocks of 64, each goroutine holding the
// scores of one block (64 × (Len()+n) floats), never a T×T matrix. y may not
// overlap qkv. It panics if n < 1, if qkv is shorter than n*3C or y
// shorter than n*C, if the cache has no room for n more positions, or if
// the score workspace (4·n·(Len()+n)·C floats at most) would not fit in
// an int; the cache is unchanged then.
func (d *Decoder) Decode(y, qkv []float32, n int) {
	const fn = "Decoder.Decode"
	C := d.c
	if n < 1 {
		panic(fmt.Sprintf("attention.%s: n = %d, must be >= 1", fn, n))
	}
	if n > d.maxT-d.n {
		panic(fmt.Sprintf("attention.%s: Len() = %d plus n = %d tokens exceeds the decoder's maxT = %d", fn, d.n, n, d.maxT))
	}
	if len(qkv) < 3*n*C {
		panic(fmt.Sprintf("attention.%s: len(qkv) = %d, want >= 3*n*C = 3*%d*%d = %d", fn, len(qkv), n, C, 3*n*C))
	}
	if len(y) < n*C {
		panic(fmt.Sprintf("attention.%s: len(y) = %d, want >= n*C = %d*%d = %d", fn, len(y), n, C, n*C))
	}
	checkProduct(fn, "the score workspace", "4*n*(Len()+n)*C", 4, n, d.n+n, C)
	d.qkv, d.y = qkv, y
	d.heads(n)
	d.qkv, d.y = nil, nil
}

// heads appends the keys and values of the n rows of d.qkv to the cache
// and computes the heads' outputs into d.y.
func (d *Decoder) heads(n int) {
	C := d.c
	past := d.n
	total := past + n
	for r := 0; r < n; r++ {
		row := d.qkv[r*3*C : (r+1)*3*C]
		for h := 0; h < d.h; h++ {
			k, v := row[C+h*d.d:C+(h+1)*d.d], row[2*C+h*d.d:2*C+(h+1)*d.d]
			if d.bf16 != nil {
				d.bf16.store(h, d.maxT, past+r, k, v)
				continue
			}
			at := (h*d.maxT + past + r) * d.d
			copy(d.k[at:at+d.d], k)
			copy(d.v[at:at+d.d], v)
		}
	}
	d.n = total
	d.rows, d.past = n, past

	workers := 1
	if 4*n*total*C >= decodeMinFlops {
		workers = workersFor(d.h)
	}
	// The scores of one block of rows per worker: a prompt of any length
	// never holds a T×T matrix.
	d.s = grow(d.s, workers*min(n, rowBlock)*total)
	if d.bf16 != nil {
		d.bf16.grow(workers, total, d.d, n > bf16DirectRows)
	}
	parallel.Run((*decodeHeads)(d), d.h, workers)
}

// decodeHead computes head h of a Decode call, its scores in the
// worker's block of d.s.
func (d *Decoder) decodeHead(worker, h int) {
	C, D, n, past := d.c, d.d, d.rows, d.past
	total := past + n
	q := d.qkv[h*D:]
	sw := min(n, rowBlock) * total
	s := d.s[worker*sw : (worker+1)*sw]
	y := d.y[h*D:]
	var k, v []float32
	switch {
	case d.bf16 == nil:
		k, v = d.k[h*d.maxT*D:], d.v[h*d.maxT*D:]
	case n <= bf16DirectRows:
		d.decodeHeadBF16(worker, h, s)
		return
	default:
		k, v = d.bf16.widen(worker, h, d.maxT, total, D)
	}
	inf := float32(math.Inf(-1))
	for i0 := 0; i0 < n; i0 += rowBlock {
		i1 := min(i0+rowBlock, n)
		m, keys := i1-i0, past+i1
		d.gemm(false, true, m, keys, D, d.scale, q[i0*3*C:], 3*C, k, D, 0, s, total)
		// Causal mask: query i0+r (position past+i0+r) sees keys up to
		// its own position. A single token sees every cached key.
		for r := 0; r < m-1; r++ {
			row := s[r*total+past+i0+r+1 : r*total+keys]
			for j := range row {
				row[j] = inf
			}
		}
		d.impl.Softmax(m, keys, s, total, s, total)
		d.gemm(false, false, m, D, keys, 1, s, total, v, D, 0, y[i0*C:], C)
	}
}

// decodeHeadBF16 computes head h of a Decode call of at most
// bf16DirectRows rows on the bf16 cache in place, its scores in s: the
// scores by GemmBF16 of the queries with the cached keys, the outputs by
// GemmBF16 of the probabilities with each block of 32 cached values,
// accumulated in y.
func (d *Decoder) decodeHeadBF16(worker, h int, s []float32) {
	C, D, n, past := d.c, d.d, d.rows, d.past
	total := past + n
	b := d.bf16
	q, y := d.qkv[h*D:], d.y[h*D:]
	d.impl.GemmBF16(n, d.scale, q, 3*C, b.keys(worker, h, d.maxT, total, D), 0, s, total)
	inf := float32(math.Inf(-1))
	for r := 0; r < n-1; r++ {
		row := s[r*total+past+r+1 : (r+1)*total]
		for j := range row {
			row[j] = inf
		}
	}
	d.impl.Softmax(n, total, s, total, s, total)
	for blk := 0; blk*lowbit.GroupSize < total; blk++ {
		p0 := blk * lowbit.GroupSize
		var beta float32
		if blk > 0 {
			beta = 1
		}
		d.impl.GemmBF16(n, 1, s[p0:], total, b.values(worker, h, blk, min(lowbit.GroupSize, total-p0), D), beta, y, C)
	}
}
