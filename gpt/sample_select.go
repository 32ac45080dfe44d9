package gpt

import (
	"math"
	"math/bits"
	"slices"

	"github.com/simdgpt/simdgpt/gpt/rng"
	"github.com/simdgpt/simdgpt/kernels"
)

// Weights without top-k: the vocabulary's weights come from one softmax
// kernel call (float32, vectorised exp) and are summed per bucket of a
// histogram over the logit: token i falls in bucket
// floor((max - logit_i)/temperature · bucketsPerE), the last bucket taking
// everything further down. A bucket spans a factor e^(1/bucketsPerE) ≈
// 1.03 of weight, so the buckets in order are the tokens in rank order
// cut into runs, and the nucleus is whole buckets plus a rank-order prefix
// of one, the only tokens ever ranked one by one.
const (
	weightBuckets = 4096
	bucketsPerE   = 32
)

// drawScratch is what Sampler.draw works in; it allocates nothing per draw.
type drawScratch struct {
	k     *kernels.Impl
	keys  []uint64  // rank keys (rankKey): top-k's candidates, or the cut bucket's tokens
	probs []float64 // top-k's weights, in rank order
	w     []float32 // every token's weight by id (softmax at the temperature)
	bkt   []uint16  // every token's bucket by id
	// mass[0] is each bucket's total weight; mass[1] is a second
	// accumulator (even and odd ids), so runs of tokens in one bucket do
	// not wait on one another.
	mass *[2][weightBuckets]float64
	nb   int // the buckets weigh used: mass[0][nb:] and mass[1] are 0
	// Without top-k the candidates are the tokens of the buckets below cut
	// and, of bucket cut, those of s.keys[:cutN] whose key is at least
	// cutLast (cut = nb: every token).
	cut     int
	cutN    int
	cutLast uint64
}

// drawScratchBytes is the memory of draw's scratch for v tokens.
func drawScratchBytes(v int) float64 {
	return 22*float64(v) + 2*weightBuckets*8
}

// newDrawScratch returns draw's scratch for a vocabulary of v tokens,
// computing with the kernels of k.
func newDrawScratch(k *kernels.Impl, v int) drawScratch {
	return drawScratch{k: k, keys: make([]uint64, v), probs: make([]float64, v),
		w: make([]float32, v), bkt: make([]uint16, v), mass: new([2][weightBuckets]float64)}
}

// draw picks the next token from s.logits, which must hold no NaN or +Inf
// and at least one finite logit (GenerateWith checks). Tokens are ranked
// by logit, descending, ties by lower id first (rankKey); their weights are
// exp((logit - max)/temperature). Top-k keeps the topK first in rank;
// top-p then keeps the shortest rank-order prefix whose weights sum to at
// least topP times the sum of those kept (the token that reaches it
// included); the token is drawn in proportion to the weights left, with
// one r.Float64(). Nothing sorts the vocabulary: greedy is the Max kernel
// and a search for the first token at the maximum; top-k selects the k
// with a bounded heap or a quickselect, O(V + k log k), weighs them in
// float64 and walks them in rank order. Without top-k the weights are
// float32, from the softmax kernel (relative error a few 1e-6; a weight
// below float32's range, about e^-87 of the largest, may count as 0),
// summed per bucket (weightBuckets); top-p finds the bucket where the
// running sum reaches its target and ranks only that bucket's tokens (a
// quickselect weighted by the weights); the draw picks a bucket by its
// sum, then walks its tokens in id order (the cut bucket's in the
// selection's order). The draw for a given r thus differs from a
// rank-order walk, not the distribution. It allocates nothing.
func (s *Sampler) draw(temperature float64, topK int, topP float64, r *rng.RNG) int32 {
	if temperature == 0 {
		// Greedy: the first largest logit (the lowest id among ties, as
		// rank order gives; -0 and +0 compare equal).
		mx := s.k.Max(s.logits)
		for i, l := range s.logits {
			if l == mx {
				return int32(i)
			}
		}
		return 0
	}
	k, sum := s.candidates(temperature, topK, topP)
	u := r.Float64() * sum
	if k > 0 {
		// Top-k: the candidates are s.keys[:k] in rank order, their
		// weights s.probs[:k].
		for i := 0; i < k; i++ {
			u -= s.probs[i]
			if u < 0 {
				return int32(keyID(s.keys[i]))
			}
		}
		return int32(keyID(s.keys[k-1]))
	}
	// Pick the bucket, then the token in it. Rounding that leaves the walk
	// short of the end picks the last token it passed with a nonzero
	// weight.
	mass := &s.mass[0]
	last := -1 // the last bucket passed with a nonzero sum
	for b := range s.cut {
		m := mass[b]
		if m == 0 {
			continue
		}
		if u < m {
			return int32(s.pickInBucket(b, u))
		}
		u -= m
		last = b
	}
	pick := -1
	for _, key := range s.keys[:s.cutN] {
		id := keyID(key)
		if key < s.cutLast || s.w[id] == 0 {
			continue
		}
		pick = id
		if u -= float64(s.w[id]); u < 0 {
			break
		}
	}
	if pick < 0 {
		pick = s.pickInBucket(last, math.Inf(1))
	}
	return int32(pick)
}

// pickInBucket walks the tokens of bucket b in id order, subtracting
// their weights from u, and returns the one that takes u below 0, or the
// last with a nonzero weight if none does.
func (s *Sampler) pickInBucket(b int, u float64) int {
	pick := 0
	bb := uint16(b)
	for i, x := range s.bkt[:len(s.logits)] {
		if x != bb || s.w[i] == 0 {
			continue
		}
		pick = i
		if u -= float64(s.w[i]); u < 0 {
			break
		}
	}
	return pick
}

// candidates computes the tokens draw (temperature > 0) draws from and
// their weights, summing to sum. With 0 < topK < V it returns k > 0: the
// candidates are s.keys[:k], the rank keys of the first in rank order
// (topKeys), cut to the nucleus, and s.probs[:k] their weights (float64).
// Otherwise it returns k = 0 after weigh: s.w holds every token's weight
// by id, s.bkt its bucket, and the candidates are given by s.cut, s.cutN
// and s.cutLast (see drawScratch).
func (s *Sampler) candidates(temperature float64, topK int, topP float64) (k int, sum float64) {
	V := len(s.logits)
	if topK > 0 && topK < V {
		k = topK
		topKeys(s.keys, s.logits, k)
		top := float64(s.logits[keyID(s.keys[0])])
		for i, key := range s.keys[:k] {
			p := math.Exp((float64(s.logits[keyID(key)]) - top) / temperature)
			s.probs[i] = p
			sum += p
		}
		if kept := nucleus(s.probs[:k], sum, topP); kept < k {
			k, sum = kept, 0
			for _, p := range s.probs[:k] {
				sum += p
			}
		}
		return k, sum
	}
	total := s.weigh(temperature)
	s.cut, s.cutN, s.cutLast = s.nb, 0, 0
	if topP <= 0 || topP >= 1 {
		return 0, total
	}
	// The first bucket where the running sum reaches the target holds the
	// nucleus's last token: the sums are added in the order weigh added
	// them into total, so one is reached.
	mass := &s.mass[0]
	target := topP * total
	ahead := 0.0
	b := 0
	for ; b < s.nb-1 && ahead+mass[b] < target; b++ {
		ahead += mass[b]
	}
	n := 0
	bb := uint16(b)
	for i, x := range s.bkt[:V] {
		if x == bb {
			s.keys[n] = rankKey(s.logits[i], i)
			n++
		}
	}
	last := nucleusKey(s.keys[:n], s.w, target-ahead)
	sum = ahead
	for _, key := range s.keys[:n] {
		if key >= last {
			sum += float64(s.w[keyID(key)])
		}
	}
	s.cut, s.cutN, s.cutLast = b, n, last
	return 0, sum
}

// weigh sets s.w to the weights of s.logits at temperature (a softmax:
// they sum to about 1), s.bkt to each token's bucket and s.mass[0] to
// each bucket's sum (s.nb the buckets used), and returns the sum of
// s.mass[0] in bucket order.
func (s *Sampler) weigh(temperature float64) float64 {
	V := len(s.logits)
	logits, w, bkt := s.logits, s.w[:V], s.bkt[:V]
	mx := s.k.Max(logits)
	invT := 1 / temperature
	// The softmax subtracts its own maximum; scaling first is exact enough
	// unless the largest scaled logit overflows float32 or 1/temperature
	// is not a normal float32 (an -Inf logit times 0 is NaN), when the
	// difference to the maximum is scaled in float64.
	if sc := float32(invT); sc >= math.SmallestNonzeroFloat32*(1<<23) && !math.IsInf(float64(sc), 0) && !math.IsInf(float64(mx*sc), 0) {
		copy(w, logits)
		s.k.Scale(sc, w)
	} else {
		for i, l := range logits {
			if d := float64(l) - float64(mx); d < 0 {
				w[i] = float32(d * invT)
			} else {
				w[i] = 0
			}
		}
	}
	s.k.Softmax(1, V, w, V, w, V)
	// Buckets: (mx - l)·c, non-decreasing as the logit falls (float32
	// rounding is monotone), clamped to the last bucket; c is kept within
	// [1e-30, 1e30] so that no temperature makes 0·Inf (NaN).
	c := float32(min(max(invT*bucketsPerE, 1e-30), 1e30))
	top := float32(weightBuckets - 1)
	m0, m1 := &s.mass[0], &s.mass[1]
	clear(m0[:s.nb])
	hi := 0
	i := 0
	for ; i+1 < V; i += 2 {
		b0 := int(min((mx-logits[i])*c, top)) & (weightBuckets - 1)
		b1 := int(min((mx-logits[i+1])*c, top)) & (weightBuckets - 1)
		bkt[i], bkt[i+1] = uint16(b0), uint16(b1)
		m0[b0] += float64(w[i])
		m1[b1] += float64(w[i+1])
		hi = max(hi, b0, b1)
	}
	if i < V {
		b0 := int(min((mx-logits[i])*c, top)) & (weightBuckets - 1)
		bkt[i] = uint16(b0)
		m0[b0] += float64(w[i])
		hi = max(hi, b0)
	}
	s.nb = hi + 1
	total := 0.0
	for b := range m0[:s.nb] {
		m0[b] += m1[b]
		m1[b] = 0
		total += m0[b]
	}
	return total
}

// The sampler ranks tokens by logit, descending, ties by id ascending.
// rankKey encodes that order as one uint64 per token, larger first: the
// high 32 bits order the float32 logits (as integers: sign-flipped bit
// patterns, with -0 taken as +0 since the two compare equal), the low 32
// bits are the complement of the id, so of two equal logits the lower id
// has the larger key. Keys are distinct, and the id is ^uint32(key). NaN
// logits have no rank (the sampler never draws from them; see
// Sampler.checkLogits).
func rankKey(l float32, id int) uint64 {
	b := math.Float32bits(l)
	if b == 1<<31 { // -0
		b = 0
	}
	if b&(1<<31) != 0 {
		b = ^b
	} else {
		b |= 1 << 31
	}
	return uint64(b)<<32 | uint64(^uint32(id))
}

// keyID returns the token id of a rankKey.
func keyID(key uint64) int { return int(^uint32(key)) }

// topKeys leaves in keys[:k] the rank keys of the k first tokens of logits
// in rank order, sorted (largest key first), using keys (len(logits)) as
// scratch: a bounded heap of k for small k (one pass, most tokens rejected
// by one comparison), a quickselect otherwise; O(V + k log k), no
// allocation. It needs 0 < k <= len(logits).
func topKeys(keys []uint64, logits []float32, k int) {
	if k <= 1024 && 4*k <= len(logits) {
		// A min-heap of the k largest keys seen so far.
		h := keys[:0]
		for i, l := range logits {
			key := rankKey(l, i)
			if len(h) < k {
				h = append(h, key)
				for j := len(h) - 1; j > 0; {
					p := (j - 1) / 2
					if h[p] <= h[j] {
						break
					}
					h[p], h[j] = h[j], h[p]
					j = p
				}
				continue
			}
			if key <= h[0] {
				continue
			}
			h[0] = key
			siftDown(h, 0)
		}
	} else {
		for i, l := range logits {
			keys[i] = rankKey(l, i)
		}
		selectKeys(keys, k)
	}
	slices.Sort(keys[:k])
	slices.Reverse(keys[:k])
}

// siftDown restores the min-heap h below position j.
func siftDown(h []uint64, j int) {
	n := len(h)
	for {
		c := 2*j + 1
		if c >= n {
			return
		}
		if c+1 < n && h[c+1] < h[c] {
			c++
		}
		if h[j] <= h[c] {
			return
		}
		h[j], h[c] = h[c], h[j]
		j = c
	}
}

// pivotKey returns the median of the first, middle and last of a (not empty).
func pivotKey(a []uint64) uint64 {
	x, y, z := a[0], a[len(a)/2], a[len(a)-1]
	if x > y {
		x, y = y, x
	}
	if y > z {
		y = z
	}
	return max(x, y)
}

// partitionKeys moves the keys of a above pivot to its front, then pivot
// itself (which a must hold), and returns the number above it: a[:n] >
// pivot, a[n] == pivot, a[n+1:] < pivot.
func partitionKeys(a []uint64, pivot uint64) int {
	n := 0
	for i, x := range a {
		if x > pivot {
			a[i], a[n] = a[n], x
			n++
		}
	}
	for i := n; i < len(a); i++ {
		if a[i] == pivot {
			a[i], a[n] = a[n], a[i]
			break
		}
	}
	return n
}

// selectKeys reorders the distinct keys so that keys[:k] are the k largest
// (in no particular order): a quickselect, expected O(len(keys)), falling
// back to sorting what is left after 2·log2(len(keys)) rounds so the worst
// case stays O(V log V).
func selectKeys(keys []uint64, k int) {
	lo, hi := 0, len(keys)
	for round := 2 * bits.Len(uint(len(keys))); hi-lo > 1; round-- {
		if round == 0 {
			slices.Sort(keys[lo:hi])
			slices.Reverse(keys[lo:hi])
			return
		}
		a := keys[lo:hi]
		n := lo + partitionKeys(a, pivotKey(a))
		switch {
		case k <= n:
			hi = n
		case k == n+1:
			return
		default:
			lo = n + 1
		}
	}
}

// nucleusKey returns the rank key of the last token of the nucleus: of
// the tokens of keys in rank order, the first whose running sum of w
// (indexed by id) reaches target. keys is reordered. It
// is a quickselect weighted by w, expected O(len(keys)): each round
// partitions the candidates around a pivot and keeps the side that holds
// the boundary, with the mass above it added to what is already ahead.
// When the whole mass stays below target (by rounding), it returns 0,
// keeping every token.
func nucleusKey(keys []uint64, w []float32, target float64) uint64 {
	lo, hi := 0, len(keys)
	ahead := 0.0 // the mass of keys[:lo], all ranked before keys[lo:hi]
	for round := 2 * bits.Len(uint(len(keys))); hi > lo; round-- {
		a := keys[lo:hi]
		if round <= 0 {
			// Too many unbalanced rounds: walk what is left in rank order.
			slices.Sort(a)
			slices.Reverse(a)
			for _, key := range a {
				if ahead += float64(w[keyID(key)]); ahead >= target {
					return key
				}
			}
			break
		}
		pivot := pivotKey(a)
		n := partitionKeys(a, pivot)
		above := 0.0
		for _, key := range a[:n] {
			above += float64(w[keyID(key)])
		}
		switch {
		case ahead+above >= target:
			hi = lo + n
		case ahead+above+float64(w[keyID(pivot)]) >= target:
			return pivot
		default:
			ahead += above + float64(w[keyID(pivot)])
			lo += n + 1
		}
	}
	return 0
}
