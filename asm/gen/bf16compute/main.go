// Command bf16compute generates the AVX512_BF16 kernels of the bfloat16
// matrix products (kernels.GemmBF16Compute and its family): the
// register-blocked micro-kernel on VDPBF16PS and the packers that round
// float32 operands to bfloat16 pairs.
//
// Layout. VDPBF16PS multiplies the two bfloat16 of each 32-bit word of
// one register by those of the same word of another and adds both
// products to the word's float32 lane. So both operands hold pairs of k
// steps in one word: A(i, q) for the pair q of row i (a broadcast word),
// and B(q, j) for the pair q of column j (16 columns a register). Which
// two steps make a pair is the packers' choice (2q and 2q+1, or d and
// d+16 within a group of 32 as lowbit.BF16 stores weights), as long as A
// and B agree.
//
// The micro-kernel computes a 14×32 tile from k pairs: A(i, q) at
// a[i*rsa + q*csa] (words), B(q, 0..31) at b[32q:], a packed panel; 28
// accumulators, two registers of B and the broadcasts of A fill the 32
// ZMM registers. Each step loads two vectors of B, broadcasts 14 words
// of A and issues 28 VDPBF16PS (1792 floating-point operations).
package main

import (
	"flag"
	"fmt"
	"log"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/simdgpt/simdgpt/asm/gen/internal/x86"
)

// mr and nv are the tile: rows, and vectors of 16 columns.
const (
	mr = 14
	nv = 2
)

func main() {
	flag.Parse()
	log.SetFlags(0)
	ConstraintExpr("amd64,!purego")
	interleaveTable()
	microKernel(false)
	microKernel(true)
	packRows("bf16PackRowsAVX512", false)
	packRows("bf16PackRowsHalvesAVX512", true)
	packPairs()
	transpose()
	x86.Finish()
}

var interleave Mem

// interleaveTable holds VPERMW's indices that interleave the words of
// the two halves of a register: word 2d takes word d, word 2d+1 takes
// word 16+d.
func interleaveTable() {
	interleave = GLOBL("bf16Interleave", RODATA|NOPTR)
	for d := 0; d < 16; d++ {
		DATA(4*d, U16(d))
		DATA(4*d+2, U16(16+d))
	}
}

// accReg returns the accumulator of row i, vector v.
func accReg(i, v int) reg.VecPhysical { return zmm(nv*i + v) }

func zmm(i int) reg.VecPhysical {
	return []reg.VecPhysical{reg.Z0, reg.Z1, reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7,
		reg.Z8, reg.Z9, reg.Z10, reg.Z11, reg.Z12, reg.Z13, reg.Z14, reg.Z15,
		reg.Z16, reg.Z17, reg.Z18, reg.Z19, reg.Z20, reg.Z21, reg.Z22, reg.Z23,
		reg.Z24, reg.Z25, reg.Z26, reg.Z27, reg.Z28, reg.Z29, reg.Z30, reg.Z31}[i]
}

// rowAddr addresses row i of A from bases every 5 rows.
func rowAddr(bases []reg.GPVirtual, rs, rs3 reg.GPVirtual, i int) Mem {
	base := bases[i/5]
	switch i % 5 {
	case 0:
		return Mem{Base: base}
	case 1:
		return Mem{Base: base, Index: rs, Scale: 1}
	case 2:
		return Mem{Base: base, Index: rs, Scale: 2}
	case 3:
		return Mem{Base: base, Index: rs3, Scale: 1}
	default:
		return Mem{Base: base, Index: rs, Scale: 4}
	}
}

// microKernel generates gemmBF16Kernel14x32AVX512, or with prefetch
// gemmBF16PrefetchKernel14x32AVX512: the same tile, and at step q the
// prefetch into L2 (PREFETCHT1: the source is larger than L1) of the
// lines at pf + 2q*pfs and pf + (2q+1)*pfs floats and
// the lines after them, the pair q of the next B panel's source (32
// floats of two rows of B), so that the driver packs that panel from
// the caches while the tile's arithmetic hides the trip from memory.
func microKernel(prefetch bool) {
	kind, extra := "gemmBF16Kernel", ""
	if prefetch {
		kind, extra = "gemmBF16PrefetchKernel", " At step q it prefetches into L2 the 128 bytes at pf + 2q*pfs and at pf + (2q+1)*pfs (floats)."
	}
	name := fmt.Sprintf("%s%dx%dAVX512", kind, mr, 16*nv)
	x86.Func(name, kind,
		fmt.Sprintf("%s sets the %d×%d tile C = alpha*S + beta*C (leading dimension ldc), C not read when beta", name, mr, 16*nv),
		"is ±0, where S[i][j] is the float32 sum over q < kp (>= 1) of the products of the two bfloat16 of",
		fmt.Sprintf("A(i, q) = a[i*rsa + q*csa] and B(q, j) = b[%d*q + j], in order of q, by VDPBF16PS (denormals", 16*nv),
		"counted as 0 and flushed to 0). C = alpha*S + beta*C is computed as float32(alpha*S) +",
		"float32(beta*C)."+extra+" Requires AVX-512F and AVX512_BF16. Arguments are not checked.")
	rs := x86.Arg("rsa")
	SHLQ(U8(2), rs)
	rs3 := GP64()
	LEAQ(Mem{Base: rs, Index: rs, Scale: 2}, rs3)
	five := GP64()
	LEAQ(Mem{Base: rs, Index: rs, Scale: 4}, five)
	bases := make([]reg.GPVirtual, (mr+4)/5)
	bases[0] = x86.Arg("a")
	for i := 1; i < len(bases); i++ {
		bases[i] = GP64()
		LEAQ(Mem{Base: bases[i-1], Index: five, Scale: 1}, bases[i])
	}
	cs := x86.Arg("csa")
	SHLQ(U8(2), cs)
	b := x86.Arg("b")
	kp := x86.Arg("kp")
	// The C tile's lines are prefetched so that they arrive during the
	// loop instead of stalling its loads (beta != 0) and stores at the
	// end: C is read and written once per block of k, and a block is
	// short next to C's trip from memory.
	c := x86.Arg("c")
	ldc := x86.Arg("ldc")
	SHLQ(U8(2), ldc)
	cp := GP64()
	MOVQ(c, cp)
	for i := 0; i < mr; i++ {
		for v := 0; v < nv; v++ {
			PREFETCHT0(Mem{Base: cp, Disp: 64 * v})
		}
		ADDQ(ldc, cp)
	}
	for i := 0; i < mr; i++ {
		for v := 0; v < nv; v++ {
			VPXORD(accReg(i, v), accReg(i, v), accReg(i, v))
		}
	}
	var pf, pfs reg.GPVirtual
	if prefetch {
		pf = x86.Arg("pf")
		pfs = x86.Arg("pfs")
		SHLQ(U8(2), pfs)
	}
	bv := []reg.VecPhysical{reg.Z28, reg.Z29}
	bc := []reg.VecPhysical{reg.Z30, reg.Z31}
	Label(name + "_loop")
	if prefetch {
		PREFETCHT1(Mem{Base: pf})
		PREFETCHT1(Mem{Base: pf, Disp: 64})
		PREFETCHT1(Mem{Base: pf, Index: pfs, Scale: 1})
		PREFETCHT1(Mem{Base: pf, Index: pfs, Scale: 1, Disp: 64})
		LEAQ(Mem{Base: pf, Index: pfs, Scale: 2}, pf)
	}
	for v := 0; v < nv; v++ {
		VMOVUPS(Mem{Base: b, Disp: 64 * v}, bv[v])
	}
	for i := 0; i < mr; i++ {
		t := bc[i%2]
		VPBROADCASTD(rowAddr(bases, rs, rs3, i), t)
		for v := 0; v < nv; v++ {
			x86.VDPBF16PS(bv[v], t, accReg(i, v))
		}
	}
	for _, base := range bases {
		ADDQ(cs, base)
	}
	ADDQ(U32(64*nv), b)
	DECQ(kp)
	JNZ(LabelRef(name + "_loop"))

	// Store: alpha in Z28, beta in Z29.
	VBROADCASTSS(x86.Addr(Param("alpha")), reg.Z28)
	betaBits := GP32()
	MOVL(x86.Addr(Param("beta")), betaBits)
	VBROADCASTSS(x86.Addr(Param("beta")), reg.Z29)
	for i := 0; i < mr; i++ {
		for v := 0; v < nv; v++ {
			VMULPS(reg.Z28, accReg(i, v), accReg(i, v))
		}
	}
	ANDL(U32(0x7fffffff), betaBits)
	JZ(LabelRef(name + "_nobeta"))
	for i := 0; i < mr; i++ {
		for v := 0; v < nv; v++ {
			VMULPS(Mem{Base: c, Disp: 64 * v}, reg.Z29, bc[v])
			VADDPS(bc[v], accReg(i, v), accReg(i, v))
			VMOVUPS(accReg(i, v), Mem{Base: c, Disp: 64 * v})
		}
		ADDQ(ldc, c)
	}
	VZEROUPPER()
	RET()
	Label(name + "_nobeta")
	for i := 0; i < mr; i++ {
		for v := 0; v < nv; v++ {
			VMOVUPS(accReg(i, v), Mem{Base: c, Disp: 64 * v})
		}
		ADDQ(ldc, c)
	}
	VZEROUPPER()
	RET()
}

// packRows generates a packer of rows along k: for r < rows and the
// first 32·blocks floats x of row r (src + r*lds floats), it writes
// 16·blocks words at dst + r*ldd words, word q holding bf16(x[2q]) |
// bf16(x[2q+1])<<16, or with halves, word 16g+d of block g holding
// bf16(x[32g+d]) | bf16(x[32g+16+d])<<16 (lowbit.BF16's order).
func packRows(name string, halves bool) {
	order := "x[2q] | x[2q+1]<<16"
	if halves {
		order = "x[32g+d] | x[32g+16+d]<<16 for q = 16g+d"
	}
	x86.Func(name, "bf16PackRows",
		name+" writes, for r < rows (>= 1) and q < 16*blocks (blocks >= 1), the word dst[r*ldd+q]",
		"= "+order+" of the bfloat16 (VCVTNE2PS2BF16: to nearest even, denormals counted as 0) of",
		"the floats x = src[r*lds:]. Requires AVX-512F, AVX512BW and AVX512_BF16. Arguments are not checked.")
	dst := x86.Arg("dst")
	src := x86.Arg("src")
	lds := x86.Arg("lds")
	SHLQ(U8(2), lds)
	ldd := x86.Arg("ldd")
	SHLQ(U8(2), ldd)
	rows := x86.Arg("rows")
	blocks := x86.Arg("blocks")
	if halves {
		VMOVDQU64(interleave, reg.Z31)
	}
	s, d, n := GP64(), GP64(), GP64()
	Label(name + "_row")
	MOVQ(src, s)
	MOVQ(dst, d)
	MOVQ(blocks, n)
	Label(name + "_block")
	VMOVUPS(Mem{Base: s}, reg.Z0)
	VMOVUPS(Mem{Base: s, Disp: 64}, reg.Z1)
	x86.VCVTNE2PS2BF16(reg.Z0, reg.Z1, reg.Z2)
	if halves {
		VPERMW(reg.Z2, reg.Z31, reg.Z2)
	}
	VMOVDQU32(reg.Z2, Mem{Base: d})
	ADDQ(U8(128), s)
	ADDQ(U8(64), d)
	DECQ(n)
	JNZ(LabelRef(name + "_block"))
	ADDQ(lds, src)
	ADDQ(ldd, dst)
	DECQ(rows)
	JNZ(LabelRef(name + "_row"))
	VZEROUPPER()
	RET()
}

// packPairs generates bf16PackPairsAVX512, the packer of a matrix whose
// rows are steps of k: it pairs rows 2q and 2q+1.
func packPairs() {
	name := "bf16PackPairsAVX512"
	x86.Func(name, "bf16PackPairs",
		name+" writes, for q < kp (>= 1) and j < 16*chunks (chunks >= 1), the word dst[q*ldd+j] =",
		"bf16(src[2q*lds+j]) | bf16(src[(2q+1)*lds+j])<<16 (VCVTNE2PS2BF16: to nearest even, denormals",
		"counted as 0). Requires AVX-512F, AVX512BW and AVX512_BF16. Arguments are not checked.")
	dst := x86.Arg("dst")
	src := x86.Arg("src")
	lds := x86.Arg("lds")
	SHLQ(U8(2), lds)
	ldd := x86.Arg("ldd")
	SHLQ(U8(2), ldd)
	kp := x86.Arg("kp")
	chunks := x86.Arg("chunks")
	VMOVDQU64(interleave, reg.Z31)
	s, d, n := GP64(), GP64(), GP64()
	Label(name + "_pair")
	MOVQ(src, s)
	MOVQ(dst, d)
	MOVQ(chunks, n)
	Label(name + "_chunk")
	VMOVUPS(Mem{Base: s}, reg.Z0)
	VMOVUPS(Mem{Base: s, Index: lds, Scale: 1}, reg.Z1)
	x86.VCVTNE2PS2BF16(reg.Z0, reg.Z1, reg.Z2)
	VPERMW(reg.Z2, reg.Z31, reg.Z2)
	VMOVDQU32(reg.Z2, Mem{Base: d})
	ADDQ(U8(64), s)
	ADDQ(U8(64), d)
	DECQ(n)
	JNZ(LabelRef(name + "_chunk"))
	LEAQ(Mem{Base: src, Index: lds, Scale: 2}, src)
	ADDQ(ldd, dst)
	DECQ(kp)
	JNZ(LabelRef(name + "_pair"))
	VZEROUPPER()
	RET()
}

// transpose generates bf16TransposeAVX512, the packer of B's panels from
// rows along k already in pairs (a transposed B converted by a row
// packer, or lowbit.BF16 weights), and of a transposed A's rows of pairs
// from its pairs of rows: a 16×16 transpose of 32-bit words in
// registers (unpack, shuffle within 128-bit lanes, then twice across
// them), 64 shuffles a block.
func transpose() {
	name := "bf16TransposeAVX512"
	x86.Func(name, "bf16Transpose",
		name+" sets dst[q*ldd+r] = src[r*lds+q] for r < 16 and q < 16*blocks (blocks >= 1): 16 rows",
		"of words into 16 columns of a matrix of rows ldd words apart (a 32-word B panel, or A's rows of",
		"pairs). Requires AVX-512F. Arguments are not checked.")
	dst := x86.Arg("dst")
	src := x86.Arg("src")
	lds := x86.Arg("lds")
	SHLQ(U8(2), lds)
	n := x86.Arg("blocks")
	ldd := x86.Arg("ldd")
	SHLQ(U8(2), ldd)
	lds3 := GP64()
	LEAQ(Mem{Base: lds, Index: lds, Scale: 2}, lds3)
	r := make([]reg.VecPhysical, 16)
	t := make([]reg.VecPhysical, 16)
	for i := range r {
		r[i], t[i] = zmm(i), zmm(16+i)
	}
	s0, s4, s8, s12 := GP64(), GP64(), GP64(), GP64()
	Label(name + "_block")
	MOVQ(src, s0)
	LEAQ(Mem{Base: s0, Index: lds, Scale: 4}, s4)
	LEAQ(Mem{Base: s4, Index: lds, Scale: 4}, s8)
	LEAQ(Mem{Base: s8, Index: lds, Scale: 4}, s12)
	for i, base := range []reg.GPVirtual{s0, s4, s8, s12} {
		VMOVDQU32(Mem{Base: base}, r[4*i])
		VMOVDQU32(Mem{Base: base, Index: lds, Scale: 1}, r[4*i+1])
		VMOVDQU32(Mem{Base: base, Index: lds, Scale: 2}, r[4*i+2])
		VMOVDQU32(Mem{Base: base, Index: lds3, Scale: 1}, r[4*i+3])
	}
	// t = unpack(r2i, r2i+1): within each 128-bit lane, (a0 b0 a1 b1), (a2 b2 a3 b3).
	for i := 0; i < 8; i++ {
		VUNPCKLPS(r[2*i+1], r[2*i], t[2*i])
		VUNPCKHPS(r[2*i+1], r[2*i], t[2*i+1])
	}
	// r: 4×4 blocks transposed within each 128-bit lane.
	for g := 0; g < 4; g++ {
		b := 4 * g
		VSHUFPS(U8(0x44), t[b+2], t[b], r[b])
		VSHUFPS(U8(0xee), t[b+2], t[b], r[b+1])
		VSHUFPS(U8(0x44), t[b+3], t[b+1], r[b+2])
		VSHUFPS(U8(0xee), t[b+3], t[b+1], r[b+3])
	}
	// Across the 128-bit lanes, twice.
	for h := 0; h < 2; h++ {
		o := 8 * h
		for i := 0; i < 4; i++ {
			VSHUFI32X4(U8(0x88), r[o+4+i], r[o+i], t[o+i])
			VSHUFI32X4(U8(0xdd), r[o+4+i], r[o+i], t[o+4+i])
		}
	}
	for i := 0; i < 8; i++ {
		VSHUFI32X4(U8(0x88), t[8+i], t[i], r[i])
		VSHUFI32X4(U8(0xdd), t[8+i], t[i], r[8+i])
	}
	for q := 0; q < 16; q++ {
		VMOVDQU32(r[q], Mem{Base: dst})
		ADDQ(ldd, dst)
	}
	ADDQ(U8(64), src)
	DECQ(n)
	JNZ(LabelRef(name + "_block"))
	VZEROUPPER()
	RET()
}
