package bpe

import (
	"fmt"
	"strings"
	"sync"
)

// The merge loop of OpenAI's encoder.py repeats: find the pair of
// adjacent symbols with the lowest rank, then merge every occurrence of
// that pair, left to right without overlap. Done literally that is
// quadratic in the length of a word. bpe below does the same work in
// O(n log n) time and O(n) memory: the symbols are a linked list, every
// adjacent pair that has a merge sits in a heap ordered by (rank,
// position), and one round pops all the entries of the lowest rank before
// merging any of them, so that a pair made by this round's merges (which
// has another rank: a merged symbol differs from both its halves) waits
// for the next round, exactly as in encoder.py even when its rank is
// lower.
//
// Each node records the rank of the pair it starts. The pair that starts
// at a node never comes back once it changes (its two symbols only grow,
// and together cover more bytes after every change), and each rank is one
// pair, so a heap entry is current exactly when its node is still a
// symbol whose pair has the entry's rank; other entries are skipped.
//
// Memory: a word of n bytes has n nodes of mergeNodeBytes and at most
// 3(n-1) heap entries of 8 bytes: the n-1 pairs at the start, and at most
// two new pairs for each of the at most n-1 merges. The heap's backing
// array has that capacity from the start and never grows; the entries of
// the current round sit at its far end, which the heap cannot reach
// (every entry ever pushed is in the heap, in this round or dropped, so
// the heap and the round together hold at most 3(n-1)).

// mergeState is the scratch space of one bpe call.
type mergeState struct {
	nodes []mergeNode
	heap  []uint64 // rank<<32 | position
}

// mergeNode is a symbol of the word being merged; nodes are never moved,
// so a node's index is its position, and a merged pair keeps its left node.
type mergeNode struct {
	sym        int32 // token id; -1 once merged into its left neighbour
	prev, next int32 // neighbours, -1 at the ends
	rank       int32 // the rank of the merge of this symbol and the next; -1: none
	result     int32 // the token that merge makes
}

// Sizes of the merge loop's scratch space, per byte of a word.
const (
	mergeNodeBytes  = 20    // one mergeNode
	mergeHeapBytes  = 3 * 8 // at most three heap entries
	maxPieceBytes   = 1 << 31
	maxKeptState    = 1 << 16 // the largest word (in bytes) whose scratch space is kept for reuse
	mergeStateBytes = mergeNodeBytes + mergeHeapBytes
)

func (t *Tokenizer) getState() *mergeState {
	if st, ok := t.states.Get().(*mergeState); ok {
		return st
	}
	return new(mergeState)
}

func (t *Tokenizer) putState(st *mergeState) {
	if cap(st.nodes) <= maxKeptState {
		t.states.Put(st)
	}
}

// pair sets the rank and result of the pair that starts at node p (whose
// next node is q, or -1) and pushes it to the heap if it has a merge.
func (t *Tokenizer) pair(st *mergeState, p, q int32) {
	nd := &st.nodes[p]
	if q < 0 {
		nd.rank = -1
		return
	}
	m, ok := t.merges[pairKey(nd.sym, st.nodes[q].sym)]
	if !ok {
		nd.rank = -1
		return
	}
	nd.rank, nd.result = m.rank, m.result
	key := uint64(m.rank)<<32 | uint64(p)
	h := append(st.heap, key)
	// Sift up.
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if h[parent] <= key {
			break
		}
		h[i] = h[parent]
		i = parent
		h[i] = key
	}
	st.heap = h
}

// pop removes and returns the heap's smallest entry.
func (st *mergeState) pop() uint64 {
	h := st.heap
	top := h[0]
	last := len(h) - 1
	x := h[last]
	h = h[:last]
	// Sift down.
	i := 0
	for {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		m := l
		if r := l + 1; r < len(h) && h[r] < h[l] {
			m = r
		}
		if h[m] >= x {
			break
		}
		h[i] = h[m]
		i = m
	}
	if i < len(h) {
		h[i] = x
	}
	st.heap = h
	return top
}

// bpe appends the token ids of one pre-token (at least 2 bytes, at most
// maxPieceBytes) to dst.
func (t *Tokenizer) bpe(st *mergeState, piece string, dst []int) []int {
	n := len(piece)
	if int64(n) > maxPieceBytes {
		panic(fmt.Sprintf("bpe: Encode: a pre-token of %d bytes is longer than the limit of %d", n, int64(maxPieceBytes)))
	}
	if cap(st.nodes) < n {
		st.nodes = make([]mergeNode, n)
	}
	if c := 3 * (n - 1); cap(st.heap) < c {
		st.heap = make([]uint64, 0, c)
	}
	nodes := st.nodes[:n]
	for i := range nodes {
		nodes[i] = mergeNode{sym: t.byteID[piece[i]], prev: int32(i - 1), next: int32(i + 1)}
	}
	nodes[n-1].next = -1
	st.nodes = nodes
	st.heap = st.heap[:0]
	for i := int32(0); int(i) < n; i++ {
		t.pair(st, i, nodes[i].next)
	}
	all := st.heap[:cap(st.heap)]
	for len(st.heap) > 0 {
		rank := st.heap[0] >> 32
		// The round, in the order popped (increasing positions), at
		// all[end-1], all[end-2], ... down to all[start].
		end := len(all)
		start := end
		for len(st.heap) > 0 && st.heap[0]>>32 == rank {
			start--
			all[start] = st.pop()
		}
		for k := end - 1; k >= start; k-- {
			p := int32(all[k])
			nd := &nodes[p]
			if nd.sym < 0 || nd.rank != int32(rank) {
				continue // stale: one of the two symbols was merged since
			}
			q := nd.next
			nd.sym = nd.result
			r := nodes[q].next
			nd.next = r
			nodes[q].sym = -1
			if r >= 0 {
				nodes[r].prev = p
			}
			t.pair(st, p, r)
			if l := nd.prev; l >= 0 {
				t.pair(st, l, p)
			}
		}
	}
	for p := int32(0); p >= 0; p = nodes[p].next {
		dst = append(dst, int(nodes[p].sym))
	}
	return dst
}

// wordCache remembers the tokens of short pre-tokens. It holds at most
// cacheEntries words of at most cacheMaxWord bytes each, and is emptied
// when full.
type wordCache struct {
	mu sync.Mutex
	m  map[string][]int32
}

const (
	cacheEntries = 1 << 14
	cacheMaxWord = 64
)

func (c *wordCache) get(word string) ([]int32, bool) {
	if len(word) > cacheMaxWord {
		return nil, false
	}
	c.mu.Lock()
	ids, ok := c.m[word]
	c.mu.Unlock()
	return ids, ok
}

func (c *wordCache) put(word string, ids []int) {
	if len(word) > cacheMaxWord {
		return
	}
	v := make([]int32, len(ids))
	for i, id := range ids {
		v[i] = int32(id)
	}
	// Clone: word may be a small part of a large text.
	word = strings.Clone(word)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= cacheEntries {
		c.m = make(map[string][]int32, 256)
	}
	c.m[word] = v
	c.mu.Unlock()
}
