package bpe

import (
	"strings"
	"sync"
)

// The merge loop of OpenAI's encoder.py repeats: find the pair of
// adjacent symbols with the lowest rank, then merge every occurrence of
// that pair, left to right without overlap. Done literally that is
// quadratic in the length of a word. bpe below does the same work in
// O(n log n): the symbols are a linked list, every adjacent pair that has a
// merge sits in a heap ordered by (rank, position), and one round pops all
// the entries of the lowest rank before merging any of them, so that a
// pair made by this round's merges (which has another rank: a merged
// symbol differs from both its halves) waits for the next round, exactly
// as in encoder.py even when its rank is lower. Entries whose symbols have
// changed since they were pushed are skipped.

// mergeState is the scratch space of one bpe call.
type mergeState struct {
	nodes []mergeNode
	heap  []mergeEntry
	round []mergeEntry
}

// mergeNode is a symbol of the word being merged; nodes are never moved,
// so a node's index is its position, and a merged pair keeps its left node.
type mergeNode struct {
	sym        int32 // token id; -1 once merged into its left neighbour
	prev, next int   // neighbours, -1 at the ends
}

// mergeEntry is a candidate merge of the pair that starts at node pos.
type mergeEntry struct {
	rank, left, right, result int32
	pos                       int
}

func (a mergeEntry) less(b mergeEntry) bool {
	return a.rank < b.rank || (a.rank == b.rank && a.pos < b.pos)
}

// maxKeptState is the largest word (in bytes) whose scratch space is kept
// for reuse.
const maxKeptState = 1 << 16

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

// push adds the pair starting at node p to the heap if it has a merge.
func (t *Tokenizer) push(st *mergeState, p int) {
	q := st.nodes[p].next
	left, right := st.nodes[p].sym, st.nodes[q].sym
	m, ok := t.merges[pairKey(left, right)]
	if !ok {
		return
	}
	h := append(st.heap, mergeEntry{rank: m.rank, left: left, right: right, result: m.result, pos: p})
	// Sift up.
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h[i].less(h[parent]) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
	st.heap = h
}

// pop removes and returns the heap's smallest entry.
func (st *mergeState) pop() mergeEntry {
	h := st.heap
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	// Sift down.
	for i := 0; ; {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		m := l
		if r := l + 1; r < len(h) && h[r].less(h[l]) {
			m = r
		}
		if !h[m].less(h[i]) {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	st.heap = h
	return top
}

// bpe appends the token ids of one pre-token (at least 2 bytes) to dst.
func (t *Tokenizer) bpe(st *mergeState, piece string, dst []int) []int {
	n := len(piece)
	nodes := st.nodes[:0]
	for i := 0; i < n; i++ {
		nodes = append(nodes, mergeNode{sym: t.byteID[piece[i]], prev: i - 1, next: i + 1})
	}
	nodes[n-1].next = -1
	st.nodes = nodes
	st.heap = st.heap[:0]
	for i := 0; i+1 < n; i++ {
		t.push(st, i)
	}
	for len(st.heap) > 0 {
		rank := st.heap[0].rank
		round := st.round[:0]
		for len(st.heap) > 0 && st.heap[0].rank == rank {
			round = append(round, st.pop())
		}
		st.round = round
		for _, e := range round {
			p := e.pos
			q := nodes[p].next
			if nodes[p].sym != e.left || q < 0 || nodes[q].sym != e.right {
				continue // stale: one of the two symbols was merged since
			}
			nodes[p].sym = e.result
			nodes[p].next = nodes[q].next
			nodes[q].sym = -1
			if r := nodes[p].next; r >= 0 {
				nodes[r].prev = p
				t.push(st, p)
			}
			if l := nodes[p].prev; l >= 0 {
				t.push(st, l)
			}
		}
	}
	for p := 0; p >= 0; p = nodes[p].next {
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
