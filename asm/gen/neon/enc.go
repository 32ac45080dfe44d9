package main

import "fmt"

// Encodings of the A64 Advanced SIMD instructions that Go's arm64
// assembler does not know. Each is emitted as
//
//	WORD $0x4e22d423 // fadd v3.4s, v1.4s, v2.4s
//
// with the word computed here from the instruction's fields, as laid out
// in the Arm Architecture Reference Manual (section C4.1, "A64 instruction
// set encoding"):
//
//   - three registers, same type (fadd, fsub, fmul, fdiv, fmax, fmin,
//     fcmge, faddp, bfdot) or different types (smull, smlal, smlal2):
//     base | Rm<<16 | Rn<<5 | Rd, where base fixes Q (bit 30, 1 = 128-bit
//     or the upper halves), U (bit 29), the size (bits 22-23) and the
//     opcode;
//   - vector by element, single precision (fmla, fmul) and bfloat16
//     pairs (bfdot, whose element is a pair of halfwords):
//     base | L<<21 | Rm<<16 | H<<11 | Rn<<5 | Rd, where the lane index is
//     H:L and Rm is five bits (M, bit 20, is its high bit);
//   - two registers, miscellaneous, and across lanes (fsqrt, fcvtl,
//     fcvtl2, faddp scalar, fmaxv): base | Rn<<5 | Rd.
//
// Registers are V0..V31 (numbers 0..31). The bases are the words of the
// instruction with every register field 0; enc_test.go checks every
// constructor against words produced by the GNU assembler.

// inst is one encoded instruction and its ARM syntax.
type inst struct {
	word uint32
	text string
}

// Base words (register fields zero).
const (
	baseFADD4S   = 0x4e20d400 // FADD Vd.4S, Vn.4S, Vm.4S
	baseFSUB4S   = 0x4ea0d400 // FSUB Vd.4S, Vn.4S, Vm.4S
	baseFMUL4S   = 0x6e20dc00 // FMUL Vd.4S, Vn.4S, Vm.4S
	baseFDIV4S   = 0x6e20fc00 // FDIV Vd.4S, Vn.4S, Vm.4S
	baseFMAX4S   = 0x4e20f400 // FMAX Vd.4S, Vn.4S, Vm.4S
	baseFMIN4S   = 0x4ea0f400 // FMIN Vd.4S, Vn.4S, Vm.4S
	baseFCMGE4S  = 0x6e20e400 // FCMGE Vd.4S, Vn.4S, Vm.4S (register)
	baseFADDP4S  = 0x6e20d400 // FADDP Vd.4S, Vn.4S, Vm.4S
	baseFADD2D   = 0x4e60d400 // FADD Vd.2D, Vn.2D, Vm.2D
	baseFMLAElem = 0x4f801000 // FMLA Vd.4S, Vn.4S, Vm.S[i]
	baseFMULElem = 0x4f809000 // FMUL Vd.4S, Vn.4S, Vm.S[i]
	baseFSQRT4S  = 0x6ea1f800 // FSQRT Vd.4S, Vn.4S
	baseFCVTL    = 0x0e617800 // FCVTL Vd.2D, Vn.2S
	baseFCVTL2   = 0x4e617800 // FCVTL2 Vd.2D, Vn.4S
	baseFADDPS   = 0x7e30d800 // FADDP Sd, Vn.2S
	baseFADDPD   = 0x7e70d800 // FADDP Dd, Vn.2D
	baseFMAXV    = 0x6e30f800 // FMAXV Sd, Vn.4S
	baseSXTL8H   = 0x0f08a400 // SXTL Vd.8H, Vn.8B (SSHLL #0)
	baseSXTL4S   = 0x0f10a400 // SXTL Vd.4S, Vn.4H (SSHLL #0)
	baseSXTL24S  = 0x4f10a400 // SXTL2 Vd.4S, Vn.8H (SSHLL2 #0)
	baseSCVTF4S  = 0x4e21d800 // SCVTF Vd.4S, Vn.4S
	baseSXTL28H  = 0x4f08a400 // SXTL2 Vd.8H, Vn.16B (SSHLL2 #0)
	baseSMULL4S  = 0x0e60c000 // SMULL Vd.4S, Vn.4H, Vm.4H
	baseSMLAL4S  = 0x0e608000 // SMLAL Vd.4S, Vn.4H, Vm.4H
	baseSMLAL24S = 0x4e608000 // SMLAL2 Vd.4S, Vn.8H, Vm.8H
	baseBFDOT4S  = 0x6e40fc00 // BFDOT Vd.4S, Vn.8H, Vm.8H (FEAT_BF16)
	baseBFDOTEl  = 0x4f40f000 // BFDOT Vd.4S, Vn.8H, Vm.2H[i] (FEAT_BF16)
)

func reg5(r int) uint32 {
	if r < 0 || r > 31 {
		panic(fmt.Sprintf("neon: register V%d out of range", r))
	}
	return uint32(r)
}

// same3 encodes a three-register same-type instruction.
func same3(base uint32, name, arr string, d, n, m int) inst {
	return inst{
		word: base | reg5(m)<<16 | reg5(n)<<5 | reg5(d),
		text: fmt.Sprintf("%s v%d.%s, v%d.%s, v%d.%s", name, d, arr, n, arr, m, arr),
	}
}

// byElem encodes a single-precision vector-by-element instruction.
func byElem(base uint32, name string, d, n, m, lane int) inst {
	if lane < 0 || lane > 3 {
		panic(fmt.Sprintf("neon: lane %d out of range", lane))
	}
	h, l := uint32(lane>>1), uint32(lane&1)
	return inst{
		word: base | l<<21 | reg5(m)<<16 | h<<11 | reg5(n)<<5 | reg5(d),
		text: fmt.Sprintf("%s v%d.4s, v%d.4s, v%d.s[%d]", name, d, n, m, lane),
	}
}

// two encodes an instruction with register fields Rn and Rd only.
func two(base uint32, text string, d, n int) inst {
	return inst{word: base | reg5(n)<<5 | reg5(d), text: text}
}

func fadd4s(d, n, m int) inst  { return same3(baseFADD4S, "fadd", "4s", d, n, m) }
func fsub4s(d, n, m int) inst  { return same3(baseFSUB4S, "fsub", "4s", d, n, m) }
func fmul4s(d, n, m int) inst  { return same3(baseFMUL4S, "fmul", "4s", d, n, m) }
func fdiv4s(d, n, m int) inst  { return same3(baseFDIV4S, "fdiv", "4s", d, n, m) }
func fmax4s(d, n, m int) inst  { return same3(baseFMAX4S, "fmax", "4s", d, n, m) }
func fmin4s(d, n, m int) inst  { return same3(baseFMIN4S, "fmin", "4s", d, n, m) }
func fcmge4s(d, n, m int) inst { return same3(baseFCMGE4S, "fcmge", "4s", d, n, m) }
func faddp4s(d, n, m int) inst { return same3(baseFADDP4S, "faddp", "4s", d, n, m) }
func fadd2d(d, n, m int) inst  { return same3(baseFADD2D, "fadd", "2d", d, n, m) }

// fmlaElem is Vd.4S += Vn.4S * Vm.S[lane].
func fmlaElem(d, n, m, lane int) inst { return byElem(baseFMLAElem, "fmla", d, n, m, lane) }

// fmulElem is Vd.4S = Vn.4S * Vm.S[lane].
func fmulElem(d, n, m, lane int) inst { return byElem(baseFMULElem, "fmul", d, n, m, lane) }

// fsqrt4s is Vd.4S = the correctly rounded square roots of Vn.4S.
func fsqrt4s(d, n int) inst {
	return two(baseFSQRT4S, fmt.Sprintf("fsqrt v%d.4s, v%d.4s", d, n), d, n)
}

// fcvtl widens the low two singles of Vn to doubles.
func fcvtl(d, n int) inst {
	return two(baseFCVTL, fmt.Sprintf("fcvtl v%d.2d, v%d.2s", d, n), d, n)
}

// fcvtl2 widens the high two singles of Vn to doubles.
func fcvtl2(d, n int) inst {
	return two(baseFCVTL2, fmt.Sprintf("fcvtl2 v%d.2d, v%d.4s", d, n), d, n)
}

// faddpS is Sd = Vn.S[0] + Vn.S[1].
func faddpS(d, n int) inst { return two(baseFADDPS, fmt.Sprintf("faddp s%d, v%d.2s", d, n), d, n) }

// faddpD is Dd = Vn.D[0] + Vn.D[1].
func faddpD(d, n int) inst { return two(baseFADDPD, fmt.Sprintf("faddp d%d, v%d.2d", d, n), d, n) }

// fmaxv is Sd = the largest of the four lanes of Vn (NaN if any is NaN).
func fmaxv(d, n int) inst { return two(baseFMAXV, fmt.Sprintf("fmaxv s%d, v%d.4s", d, n), d, n) }

// sxtl8h sign-extends the eight bytes of Vn's low half to halfwords.
func sxtl8h(d, n int) inst { return two(baseSXTL8H, fmt.Sprintf("sxtl v%d.8h, v%d.8b", d, n), d, n) }

// sxtl4s sign-extends the four halfwords of Vn's low half to words.
func sxtl4s(d, n int) inst { return two(baseSXTL4S, fmt.Sprintf("sxtl v%d.4s, v%d.4h", d, n), d, n) }

// sxtl24s sign-extends the four halfwords of Vn's high half to words.
func sxtl24s(d, n int) inst {
	return two(baseSXTL24S, fmt.Sprintf("sxtl2 v%d.4s, v%d.8h", d, n), d, n)
}

// sxtl28h sign-extends the eight bytes of Vn's high half to halfwords.
func sxtl28h(d, n int) inst {
	return two(baseSXTL28H, fmt.Sprintf("sxtl2 v%d.8h, v%d.16b", d, n), d, n)
}

// smull4s is Vd.4S = Vn.4H * Vm.4H, the low halfwords widened to words.
func smull4s(d, n, m int) inst { return widen3(baseSMULL4S, "smull", "4h", d, n, m) }

// smlal4s is Vd.4S += Vn.4H * Vm.4H, the low halfwords widened to words.
func smlal4s(d, n, m int) inst { return widen3(baseSMLAL4S, "smlal", "4h", d, n, m) }

// smlal24s is Vd.4S += Vn.8H * Vm.8H of the high halfwords, widened.
func smlal24s(d, n, m int) inst { return widen3(baseSMLAL24S, "smlal2", "8h", d, n, m) }

// widen3 encodes a three-register instruction with 4S results from
// halfword operands of arrangement arr.
func widen3(base uint32, name, arr string, d, n, m int) inst {
	return inst{
		word: base | reg5(m)<<16 | reg5(n)<<5 | reg5(d),
		text: fmt.Sprintf("%s v%d.4s, v%d.%s, v%d.%s", name, d, n, arr, m, arr),
	}
}

// scvtf4s converts four signed words to float32.
func scvtf4s(d, n int) inst { return two(baseSCVTF4S, fmt.Sprintf("scvtf v%d.4s, v%d.4s", d, n), d, n) }

// bfdot4s is Vd.4S += the dot products of the bfloat16 pairs of Vn.8H and
// Vm.8H, lane by lane (FEAT_BF16).
func bfdot4s(d, n, m int) inst {
	in := same3(baseBFDOT4S, "bfdot", "8h", d, n, m)
	in.text = fmt.Sprintf("bfdot v%d.4s, v%d.8h, v%d.8h", d, n, m)
	return in
}

// bfdotElem is Vd.4S += the dot products of the bfloat16 pairs of Vn.8H
// with the pair Vm.2H[lane] (FEAT_BF16).
func bfdotElem(d, n, m, lane int) inst {
	in := byElem(baseBFDOTEl, "bfdot", d, n, m, lane)
	in.text = fmt.Sprintf("bfdot v%d.4s, v%d.8h, v%d.2h[%d]", d, n, m, lane)
	return in
}
