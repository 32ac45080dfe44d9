package x86

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// Op3 is a vector instruction of the form op(a, b, dst), dst = b op a,
// such as VADDPS or VMAXPS.
type Op3 = func(...Op)

// Tree combines accumulators pairwise with op into acc[0]: acc[1] into
// acc[0], acc[3] into acc[2], ..., then at twice the distance, and so on.
func Tree(op Op3, acc []reg.VecVirtual) { TreeAll(op, [][]reg.VecVirtual{acc}) }

// TreeAll is Tree on each of the sets of accumulators, one step of every
// set before the next step, so that their latencies overlap.
func TreeAll(op Op3, sets [][]reg.VecVirtual) {
	n := len(sets[0])
	for w := 1; w < n; w *= 2 {
		for i := 0; i+w < n; i += 2 * w {
			for _, acc := range sets {
				op(acc[i+w], acc[i], acc[i])
			}
		}
	}
}

// ReduceAll reduces each of vs across its lanes with op, leaving the result
// in every lane: halves, then quarters, and so on, swapped and combined.
// The vectors' steps are interleaved so that their latencies overlap.
func (s *ISA) ReduceAll(vs []reg.VecVirtual, op Op3) {
	tmps := make([]reg.VecVirtual, len(vs))
	for i := range tmps {
		tmps[i] = s.Vec()
	}
	var stages []func(v, tmp reg.VecVirtual)
	if s.Is512() {
		stages = []func(v, tmp reg.VecVirtual){
			func(v, tmp reg.VecVirtual) { VSHUFF32X4(Imm(0x4e), v, v, tmp) }, // swap 256-bit halves
			func(v, tmp reg.VecVirtual) { VSHUFF32X4(Imm(0xb1), v, v, tmp) }, // swap 128-bit neighbours
		}
	} else {
		stages = []func(v, tmp reg.VecVirtual){
			func(v, tmp reg.VecVirtual) { VPERM2F128(Imm(1), v, v, tmp) }, // swap 128-bit halves
		}
	}
	stages = append(stages,
		func(v, tmp reg.VecVirtual) { VPERMILPS(Imm(0x4e), v, tmp) }, // swap 64-bit pairs
		func(v, tmp reg.VecVirtual) { VPERMILPS(Imm(0xb1), v, tmp) }, // swap neighbours
	)
	for _, st := range stages {
		for i, v := range vs {
			st(v, tmps[i])
		}
		for i, v := range vs {
			op(tmps[i], v, v)
		}
	}
}

// ReduceLow combines the accumulators with op (Tree) and then reduces the
// lanes of acc[0] by extracting its upper halves; the result is in lane 0
// of the returned XMM register (acc[0]'s).
func (s *ISA) ReduceLow(op Op3, acc []reg.VecVirtual) reg.Register {
	Tree(op, acc)
	v := acc[0]
	if s.Is512() {
		hi := YMM()
		VEXTRACTF64X4(U8(1), v, hi)
		op(hi, v.AsY(), v.AsY())
	}
	hi := XMM()
	VEXTRACTF128(U8(1), v.AsY(), hi)
	x := v.AsX()
	op(hi, x, x)
	t := XMM()
	VMOVHLPS(x, x, t)
	op(t, x, x)
	VMOVSHDUP(x, t)
	op(t, x, x)
	return x
}

// SumToLane0 leaves the sum of v's lanes in its lane 0: on AVX-512 the
// upper 256 bits added to the lower, then halves of the YMM register,
// quarters and pairs, the last step a scalar add.
func (s *ISA) SumToLane0(v reg.VecVirtual) {
	if s.Is512() {
		hi := YMM()
		VEXTRACTF64X4(U8(1), v, hi)
		VADDPS(hi, v.AsY(), v.AsY())
	}
	x := XMM()
	VEXTRACTF128(U8(1), v.AsY(), x)
	VADDPS(x, v.AsX(), v.AsX())
	VMOVHLPS(v.AsX(), v.AsX(), x)
	VADDPS(x, v.AsX(), v.AsX())
	VMOVSHDUP(v.AsX(), x)
	VADDSS(x, v.AsX(), v.AsX())
}
