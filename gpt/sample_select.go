package gpt

import (
	"math"
	"math/bits"
	"slices"
)

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
// the tokens in rank order, the first whose running sum of w (indexed by
// id) reaches target. keys holds every token's key and is reordered. It
// is a quickselect weighted by w, expected O(len(keys)): each round
// partitions the candidates around a pivot and keeps the side that holds
// the boundary, with the mass above it added to what is already ahead.
// When the whole mass stays below target (by rounding), it returns the
// smallest key, keeping every token.
func nucleusKey(keys []uint64, w []float64, target float64) uint64 {
	lo, hi := 0, len(keys)
	ahead := 0.0 // the mass of keys[:lo], all ranked before keys[lo:hi]
	for round := 2 * bits.Len(uint(len(keys))); hi > lo; round-- {
		a := keys[lo:hi]
		if round <= 0 {
			// Too many unbalanced rounds: walk what is left in rank order.
			slices.Sort(a)
			slices.Reverse(a)
			for _, key := range a {
				if ahead += w[keyID(key)]; ahead >= target {
					return key
				}
			}
			break
		}
		pivot := pivotKey(a)
		n := partitionKeys(a, pivot)
		above := 0.0
		for _, key := range a[:n] {
			above += w[keyID(key)]
		}
		switch {
		case ahead+above >= target:
			hi = lo + n
		case ahead+above+w[keyID(pivot)] >= target:
			return pivot
		default:
			ahead += above + w[keyID(pivot)]
			lo += n + 1
		}
	}
	return 0
}
