package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/simdgpt/simdgpt/asm/gen/internal/x86"
)

func init() {
	x86.Register("lowbitPackInt8", func() {
		for _, s := range x86.Both {
			packInt8Kernel(s)
		}
	})
	x86.Register("packBF16", func() {
		for _, s := range x86.Both {
			packBF16Kernel(s)
		}
	})
}

// packChunk is the number of columns of op(B) and of its rows (one half
// of an Int8 group) the packing kernel converts at a time: a 16×16 block,
// transposed as one 16×16 block of ZMM rows (AVX-512) or four 8×8 blocks
// of YMM rows (AVX2).
const packChunk = 16

// packInt8Kernel emits lowbitPackInt8<ISA>, the dequantizing packer of
// the GEMM's B panels for int8 weights (lowbit.PackInt8Func): 16 rows of
// W (columns j of op(B) = Wᵀ), rows stride bytes apart from w, each
// starting at the Int8 block of the panel's first k step, converted 16 k
// steps (half a group) at a time (packKernel). For each row and each run
// of a vector's lanes of k steps: the weights sign-extended to int32
// (VPMOVSXBD), converted to float32 (exact) and multiplied by the
// broadcast scale (one rounding, as lowbit.Int8.At).
func packInt8Kernel(s *x86.ISA) {
	name := "lowbitPackInt8" + s.Name
	x86.Func(name, "lowbitPackInt8",
		fmt.Sprintf("%s sets dst[q*nr+j] = s*float32(q) of row j (stride bytes apart from w), k step q,", name),
		"for j < 16 and q < 16·chunks, the rows' first k step at the group of w's blocks (its second half when odd is 1; see lowbit.PackInt8Func).",
		fmt.Sprintf("Requires %s. Arguments are not checked.", s.Req))
	packKernel(s, name, 36, func(x reg.VecVirtual, row func(disp int) Mem, half, q0 int) {
		VPMOVSXBD(row(4+half*packChunk+q0), x)
		VCVTDQ2PS(x, x)
		if s.Is512() {
			VMULPS_BCST(row(0), x, x)
		} else {
			sc := s.Vec()
			VBROADCASTSS(row(0), sc)
			VMULPS(sc, x, x)
		}
	})
}

// packBF16Kernel emits packBF16<ISA>, the widening packer of the GEMM's
// B panels for bfloat16 weights (gemm.Family.PackBF16): 16 rows of W
// (columns j of op(B) = Wᵀ), rows stride bytes apart from w, each
// starting at the group of the panel's first k step, widened 16 k steps
// (half a group) at a time (packKernel). A group of 32 bfloat16 stores
// w[d] in the low half of its 32-bit word d and w[16+d] in the high half
// (lowbit.BF16's order), so a vector of words gives a run of the first
// half's k steps shifted left by 16, and of the second half's with the
// low half cleared (shifted right by 16, then left): exact float32, no
// rounding. Each row's line two groups on is prefetched as its group is
// first read (a prefetch never faults, past the matrix included): the 16
// rows are 16 streams of one line a group, which the hardware
// prefetchers alone bring in about a fifth slower (GPT-2 small's 48 block
// matrices packed whole, one thread on the Emerald Rapids Xeon: 28–30 ms
// without, 22–24 with).
func packBF16Kernel(s *x86.ISA) {
	name := "packBF16" + s.Name
	x86.Func(name, "packBF16",
		fmt.Sprintf("%s sets dst[q*nr+j] = the float32 value of row j's bfloat16 (rows stride bytes apart from w), k step q,", name),
		"for j < 16 and q < 16·chunks, the rows' first k step at the group at w (its second half when odd is 1; see gemm.Family.PackBF16).",
		fmt.Sprintf("Requires %s. Arguments are not checked.", s.Req))
	packKernel(s, name, 2*lowbitGroup, func(x reg.VecVirtual, row func(disp int) Mem, half, q0 int) {
		if s.Is512() {
			VMOVDQU32(row(4*q0), x)
		} else {
			VMOVDQU(row(4*q0), x)
		}
		if half == 0 && q0 == 0 {
			PREFETCHT0(row(packBF16Ahead))
		}
		if half == 1 {
			VPSRLD(U8(16), x, x)
		}
		VPSLLD(U8(16), x, x)
	})
}

// packBF16Ahead is how far ahead of a row's group packBF16Kernel
// prefetches it, in bytes: two groups of 32 bfloat16.
const packBF16Ahead = 2 * 2 * lowbitGroup

// lowbitGroup is the weights of a group of lowbit.BF16 and lowbit.Int8.
const lowbitGroup = 32

// packKernel emits the body of a packer of the GEMM's B panels from
// grouped low-bit weights, the function name (whose header and doc the
// caller wrote), with arguments (chunks int, w *byte, stride int, odd int,
// dst *float32, nr int): 16 rows of W, stride bytes apart from w, each
// starting at the group of the panel's first k step (groupBytes bytes a
// group), 16 k steps (half a group; the second half first when odd is 1)
// at a time for chunks chunks. load converts the lanes k steps from q0 on
// of the given half of a row's group, whose bytes from disp on row(disp)
// addresses, into float32 in x; each square block of lanes × lanes is
// then transposed in registers (shuffles) and its rows, one k step each,
// stored nr floats apart, so that dst[q*nr+j] = W(j, p0+q).
func packKernel(s *x86.ISA, name string, groupBytes int, load func(x reg.VecVirtual, row func(disp int) Mem, half, q0 int)) {
	chunks := x86.Arg("chunks")
	w := x86.Arg("w")
	stride := x86.Arg("stride")
	odd := x86.Arg("odd")
	dst := x86.Arg("dst")
	nr := x86.Arg("nr")
	SHLQ(U8(2), nr) // bytes between dst's rows
	stride3 := GP64()
	LEAQ(Mem{Base: stride, Index: stride, Scale: 2}, stride3)
	// Row r of the 16 is at base[r/4] + (r%4)·stride.
	base := [4]reg.GPVirtual{w, GP64(), GP64(), GP64()}
	for i := 1; i < 4; i++ {
		LEAQ(Mem{Base: base[i-1], Index: stride, Scale: 4}, base[i])
	}
	row := func(r, disp int) Mem {
		m := Mem{Base: base[r/4], Disp: disp}
		switch r % 4 {
		case 1:
			m.Index, m.Scale = stride, 1
		case 2:
			m.Index, m.Scale = stride, 2
		case 3:
			m.Index, m.Scale = stride3, 1
		}
		return m
	}
	lanes := s.Lanes
	// block converts and stores the lanes×lanes block of rows j0.. and k
	// steps q0.. of the chunk at the given half of the group.
	block := func(half, j0, q0 int) {
		x := make([]reg.VecVirtual, lanes)
		for r := range x {
			x[r] = s.Vec()
			load(x[r], func(disp int) Mem { return row(j0+r, disp) }, half, q0)
		}
		var out []reg.VecVirtual
		if s.Is512() {
			out = transpose16(x)
		} else {
			out = transpose8(x)
		}
		d := GP64()
		if q0 == 0 {
			MOVQ(dst, d)
		} else {
			LEAQ(Mem{Base: dst, Index: nr, Scale: 8}, d) // 8 rows on
		}
		for q, v := range out {
			VMOVUPS(v, Mem{Base: d, Disp: 4 * j0})
			if q < len(out)-1 {
				ADDQ(nr, d)
			}
		}
	}
	chunk := func(half int) {
		for q0 := 0; q0 < packChunk; q0 += lanes {
			for j0 := 0; j0 < packChunk; j0 += lanes {
				block(half, j0, q0)
			}
		}
		// dst moves on by 16 rows of nr floats.
		SHLQ(U8(4), nr)
		ADDQ(nr, dst)
		SHRQ(U8(4), nr)
	}
	TESTQ(odd, odd)
	JNZ(LabelRef(name + "_second"))
	Label(name + "_first")
	TESTQ(chunks, chunks)
	JZ(LabelRef(name + "_done"))
	chunk(0)
	DECQ(chunks)
	JZ(LabelRef(name + "_done"))
	Label(name + "_second")
	chunk(1)
	for _, b := range base {
		ADDQ(U32(groupBytes), b) // the next group
	}
	DECQ(chunks)
	JMP(LabelRef(name + "_first"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// transpose8 returns the columns of the 8×8 block whose rows are r, one
// register each, in three stages of shuffles (VUNPCKL/HPS, VSHUFPS, then
// VPERM2F128 across the 128-bit lanes).
func transpose8(r []reg.VecVirtual) []reg.VecVirtual {
	vecs := func() []reg.VecVirtual { return vecRegs(x86.AVX2, 8) }
	// Go's operand order: the second source first.
	t := vecs()
	for i := 0; i < 4; i++ {
		VUNPCKLPS(r[2*i+1], r[2*i], t[2*i])
		VUNPCKHPS(r[2*i+1], r[2*i], t[2*i+1])
	}
	u := vecs()
	for _, h := range []int{0, 4} {
		VSHUFPS(U8(0x44), t[h+2], t[h], u[h])
		VSHUFPS(U8(0xee), t[h+2], t[h], u[h+1])
		VSHUFPS(U8(0x44), t[h+3], t[h+1], u[h+2])
		VSHUFPS(U8(0xee), t[h+3], t[h+1], u[h+3])
	}
	out := vecs()
	for x := 0; x < 4; x++ {
		VPERM2F128(U8(0x20), u[4+x], u[x], out[x])
		VPERM2F128(U8(0x31), u[4+x], u[x], out[4+x])
	}
	return out
}

// transpose16 returns the columns of the 16×16 block whose rows are r,
// one register each, in four stages of shuffles within and across the
// 128-bit lanes (VUNPCKL/HPS, VUNPCKL/HPD, then VSHUFF32X4 twice).
func transpose16(r []reg.VecVirtual) []reg.VecVirtual {
	vecs := func() []reg.VecVirtual { return vecRegs(x86.AVX512, 16) }
	// Go's operand order: the second source first.
	t := vecs()
	for i := 0; i < 8; i++ {
		VUNPCKLPS(r[2*i+1], r[2*i], t[2*i])
		VUNPCKHPS(r[2*i+1], r[2*i], t[2*i+1])
	}
	u := vecs()
	for i := 0; i < 4; i++ {
		VUNPCKLPD(t[4*i+2], t[4*i], u[4*i])
		VUNPCKHPD(t[4*i+2], t[4*i], u[4*i+1])
		VUNPCKLPD(t[4*i+3], t[4*i+1], u[4*i+2])
		VUNPCKHPD(t[4*i+3], t[4*i+1], u[4*i+3])
	}
	v := vecs()
	for _, h := range []int{0, 8} {
		for x := 0; x < 4; x++ {
			VSHUFF32X4(U8(0x88), u[h+4+x], u[h+x], v[h+x])
			VSHUFF32X4(U8(0xdd), u[h+4+x], u[h+x], v[h+4+x])
		}
	}
	out := vecs()
	for x := 0; x < 8; x++ {
		VSHUFF32X4(U8(0x88), v[8+x], v[x], out[x])
		VSHUFF32X4(U8(0xdd), v[8+x], v[x], out[8+x])
	}
	return out
}

// vecRegs returns n new vector registers of s.
func vecRegs(s *x86.ISA, n int) []reg.VecVirtual {
	v := make([]reg.VecVirtual, n)
	for i := range v {
		v[i] = s.Vec()
	}
	return v
}
