package main

import "fmt"

// The bfloat16 products' micro-kernel and peak loop on BFDOT (FEAT_BF16,
// ARMv8.6-A), for the driver of package kernels/internal/bf16compute.
//
// gemmBF16Kernel8x8NEON computes one 8×8 tile with the contract of
// bf16compute.Kernels.Micro: C = float32(alpha*S) + float32(beta*C),
// S[i][j] the float32 sum over q < kp of the products of the bfloat16
// pairs A(i, q) = a[i*rsa + q] (csa = 1, as the driver passes it) and
// B(q, j) = b[8*q + j] (a panel row of 8 words, two vectors). The
// accumulators are V16-V31 (acc(i, j) = V(16+2i+j), columns 4j..4j+3 of
// row i). Four k pairs at a time, each row of A loads four pairs into
// V(i) (V0-V7) and the four panel rows load into V8-V15; then 64
// by-element BFDOTs, acc(i, j) += B(q, 4j..4j+3) · A(i, q) (the pair
// V(i).2H[q]). The last kp%4 pairs load one word of each row (FMOVS)
// and one panel row. No word of A past pair kp-1 is read: the driver's
// blocks of k continue the rows with other data.
//
// BFDOT without FEAT_EBF16 (or with FPCR.EBF 0, as Go leaves it) sums
// each lane as acc + (a0·b0 + a1·b1): the products and both sums rounded
// to odd, subnormal inputs and results flushed to zero, overflow to ±Inf
// and NaN results the default NaN (Arm ARM, BFDOT and BFDotAdd); the
// package kernels' error contract covers it (see kernels/bf16compute.go).
// The epilogue then multiplies by alpha and adds beta*C with separate
// FMULs and FADD (round to nearest), so that C gets the two roundings
// the contract's float32(alpha*S) + float32(beta*C) names.
//
// BFDOT rather than BFMMLA: BFDOT reads the driver's pair words as they
// are (a row of A along k, a panel row of B across columns), while
// BFMMLA's 2×4 by 4×2 blocks would need A's rows and B's columns
// interleaved in pairs, another packing; both do the same sums in the
// same order per lane (BFMMLA is two BFDotAdds), and the 8×8 tile keeps
// 16 accumulators, 8 rows of A and 8 panel rows in the 32 registers.
// Neither has been timed on hardware.
func init() { emitters = append(emitters, bf16compute) }

// bf16MR and bf16NR are the NEON bfloat16 tile: 8 rows × 8 columns.
const bf16MR, bf16NR = 8, 8

func bf16compute() *file {
	f := newFile("bf16compute_arm64.s")
	f.stubHeader = "The bfloat16 products' BFDOT kernels: they require FEAT_BF16 (ARMv8.6-A; Linux's HWCAP2_BF16)."
	bf16Kernel(f)
	bf16Peak(f)
	return f
}

func bf16Kernel(f *file) {
	const mr, nr = bf16MR, bf16NR
	name := fmt.Sprintf("gemmBF16Kernel%dx%dNEON", mr, nr)
	acc := func(i, j int) int { return 16 + 2*i + j }
	doc := fmt.Sprintf("%s sets the %d×%d tile C = float32(alpha*S) + float32(beta*C) (leading dimension ldc; C not read when beta is ±0), S[i][j] the float32 sum over q < kp (>= 1) of the BFDOT products of the bfloat16 pairs A(i, q) = a[i*rsa + q] and B(q, j) = b[%d*q + j]: the contract of bf16compute.Kernels.Micro with csa = 1 (csa is not read). Requires FEAT_BF16. Arguments are not checked.", name, mr, nr, nr)
	f.fn(name, "gemmBF16Kernel", doc)
	f.op("MOVD kp+0(FP), R0")
	f.op("MOVD a+8(FP), R1")
	f.op("MOVD rsa+16(FP), R9")
	f.op("LSL $2, R9")
	for i := 1; i < mr; i++ {
		f.op("ADD R9, R%d, R%d", i, i+1) // R(i+1) = row i of A
	}
	f.op("MOVD b+32(FP), R10")
	f.op("MOVD c+40(FP), R11")
	f.op("MOVD ldc+48(FP), R12")
	f.op("LSL $2, R12")
	f.zero(16, 2*mr)
	f.op("SUBS $4, R0")
	f.op("BLT pairs_tail")
	f.label("pairs4")
	for i := 0; i < mr; i++ {
		f.op("VLD1.P 16(R%d), [V%d.S4]", i+1, i)
	}
	f.op("VLD1.P 64(R10), %s", vlist(8, 4))
	f.op("VLD1.P 64(R10), %s", vlist(12, 4))
	for q := 0; q < 4; q++ {
		for i := 0; i < mr; i++ {
			for j := 0; j < 2; j++ {
				f.w(bfdotElem(acc(i, j), 8+2*q+j, i, q))
			}
		}
	}
	f.op("SUBS $4, R0")
	f.op("BGE pairs4")
	f.label("pairs_tail")
	f.op("ADDS $4, R0") // the kp%4 pairs left
	f.op("BEQ epilogue")
	f.label("pairs1")
	for i := 0; i < mr; i++ {
		f.op("FMOVS.P 4(R%d), F%d", i+1, i)
	}
	f.op("VLD1.P 32(R10), %s", vlist(8, 2))
	for i := 0; i < mr; i++ {
		for j := 0; j < 2; j++ {
			f.w(bfdotElem(acc(i, j), 8+j, i, 0))
		}
	}
	f.op("SUBS $1, R0")
	f.op("BNE pairs1")

	f.label("epilogue")
	f.op("FMOVS alpha+56(FP), F0")
	f.op("FMOVS beta+60(FP), F1")
	for i := 0; i < mr; i++ {
		for j := 0; j < 2; j++ {
			f.w(fmulElem(acc(i, j), acc(i, j), 0, 0))
		}
	}
	f.op("FCMPS $(0.0), F1")
	f.op("BEQ store")
	// beta != 0: C = float32(alpha*S) + float32(beta*C).
	for i := 0; i < mr; i++ {
		f.op("VLD1 (R11), %s", vlist(2, 2))
		for j := 0; j < 2; j++ {
			f.w(fmulElem(2+j, 2+j, 1, 0))
			f.w(fadd4s(acc(i, j), acc(i, j), 2+j))
		}
		f.op("VST1 %s, (R11)", vlist(acc(i, 0), 2))
		f.op("ADD R12, R11")
	}
	f.op("RET")
	f.label("store")
	for i := 0; i < mr; i++ {
		f.op("VST1 %s, (R11)", vlist(acc(i, 0), 2))
		f.op("ADD R12, R11")
	}
	f.op("RET")
}

// bf16Peak emits bf16PeakNEON(n): n iterations of 24 independent vector
// BFDOTs, each lane of each two products and their sum with the
// accumulator (24*4*4 flops per iteration).
func bf16Peak(f *file) {
	f.fn("bf16PeakNEON", "bf16Peak",
		"bf16PeakNEON runs n iterations of 24 independent vector BFDOTs (384 flops per iteration: per lane two bfloat16 products and their sum with the accumulator), for measuring the peak bfloat16 rate. Requires FEAT_BF16.")
	f.op("MOVD n+0(FP), R0")
	f.zero(0, 32)
	f.op("CMP $0, R0")
	f.op("BLE done")
	f.label("loop")
	for i := 8; i < 32; i++ {
		f.w(bfdot4s(i, 0, 1))
	}
	f.op("SUBS $1, R0")
	f.op("BNE loop")
	f.label("done")
	f.op("RET")
}
