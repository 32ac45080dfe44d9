package x86

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// Loops emits the iteration over the n elements of the arrays at ptrs, all
// advanced together: at label name_loop<unroll>, blocks of unroll vectors
// (if unroll > 1); at name_loop1, single vectors; at name_tail, one masked
// step for the last 0 < n < lanes elements. body(k, t) processes k
// vectors at s.At(ptr, 0..k-1), with t nil, or the tail with t the mask
// of its lanes (k = 1). n counts down. Control then reaches the label
// name_done, which the caller emits.
func (s *ISA) Loops(name string, n reg.GPVirtual, ptrs []reg.GPVirtual, unroll int, m *Masks, body func(k int, t *Tail)) {
	step := func(k int, next string) {
		Label(fmt.Sprintf("%s_loop%d", name, k))
		CMPQ(n, U32(k*s.Lanes))
		JB(LabelRef(next))
		body(k, nil)
		for _, p := range ptrs {
			ADDQ(U32(k*s.Bytes()), p)
		}
		SUBQ(U32(k*s.Lanes), n)
		JMP(LabelRef(fmt.Sprintf("%s_loop%d", name, k)))
	}
	if unroll > 1 {
		step(unroll, name+"_loop1")
	}
	step(1, name+"_tail")

	Label(name + "_tail")
	TESTQ(n, n)
	JZ(LabelRef(name + "_done"))
	body(1, m.Tail(s, n))
}

// Split returns a body for Loops that calls block(k) for k whole vectors
// and tail(t) for the masked tail.
func Split(block func(k int), tail func(t *Tail)) func(int, *Tail) {
	return func(k int, t *Tail) {
		if t == nil {
			block(k)
			return
		}
		tail(t)
	}
}
