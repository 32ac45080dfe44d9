package main

import "fmt"

// GEMM micro-kernels. GemmKernel8x{4*nv}NEON computes one full tile of 8
// rows and 4*nv columns:
//
//	C = alpha*A*B + beta*C
//
// A is a packed panel, A(i,p) at a[8*p+i] (8 floats per k step, two
// vectors); B is k rows of 4*nv floats at a stride of ldb floats (nv
// vectors per row, all read); C is read only when beta is not ±0. The
// accumulators are V8.. (acc(i,j) = V(8+i*nv+j)); each k step loads A into
// V0-V1 and B into V2..V(1+nv) and issues 8*nv by-element FMLAs,
// acc(i,j) += B_j * A.S[i]. The driver (kernels/gemm_blocked.go) and the
// Go wrappers in package kernels handle edge tiles and strided A.
//
// Per two k steps the 8×12 kernel issues 4 load instructions (10
// vectors), 48 FMLAs (384 flops) and 2 loop instructions (SUBS, BGE).
func gemm() *file {
	f := newFile("gemm_arm64.s")
	for _, nv := range []int{3, 1} {
		gemmKernel(f, nv)
	}
	return f
}

func gemmKernel(f *file, nv int) {
	const mr = 8
	name := fmt.Sprintf("GemmKernel%dx%dNEON", mr, 4*nv)
	acc := func(i, j int) int { return 8 + i*nv + j }
	f.text(name, 56, fmt.Sprintf("func %s(k int, a, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)", name))
	f.op("MOVD k+0(FP), R0")
	f.op("MOVD a+8(FP), R1")
	f.op("MOVD b+16(FP), R2")
	f.op("MOVD ldb+24(FP), R3")
	f.op("LSL $2, R3")
	f.op("MOVD c+32(FP), R4")
	f.op("MOVD ldc+40(FP), R5")
	f.op("LSL $2, R5")
	f.zero(8, mr*nv)
	// k steps in pairs (SUBS and BGE once per two steps), then one more
	// step when k is odd: after the loop R0 = k%2 - 2, whose bit 0 is k%2.
	step := func() {
		f.op("VLD1.P 32(R1), %s", vlist(0, 2))
		f.op("VLD1.P (R2)(R3), %s", vlist(2, nv))
		for i := 0; i < mr; i++ {
			for j := 0; j < nv; j++ {
				f.w(fmlaElem(acc(i, j), 2+j, i/4, i%4))
			}
		}
	}
	f.op("SUBS $2, R0")
	f.op("BLT k_last")
	f.label("k_pair")
	step()
	step()
	f.op("SUBS $2, R0")
	f.op("BGE k_pair")
	f.label("k_last")
	f.op("TBZ $0, R0, k_done")
	step()
	f.label("k_done")
	f.op("FMOVS alpha+48(FP), F5")
	f.op("FMOVS beta+52(FP), F6")
	for i := 0; i < mr; i++ {
		for j := 0; j < nv; j++ {
			f.w(fmulElem(acc(i, j), acc(i, j), 5, 0))
		}
	}
	f.op("FCMPS $(0.0), F6")
	f.op("BEQ store")
	// beta != 0: C = alpha*acc + beta*C.
	for i := 0; i < mr; i++ {
		f.op("VLD1 (R4), %s", vlist(0, nv))
		for j := 0; j < nv; j++ {
			f.w(fmlaElem(acc(i, j), j, 6, 0))
		}
		f.op("VST1 %s, (R4)", vlist(acc(i, 0), nv))
		f.op("ADD R5, R4")
	}
	f.op("RET")
	f.label("store")
	for i := 0; i < mr; i++ {
		f.op("VST1 %s, (R4)", vlist(acc(i, 0), nv))
		f.op("ADD R5, R4")
	}
	f.op("RET")
}

// peak generates FMAPeakNEON(n): n iterations of 24 independent vector
// FMAs (24*4*2 flops), for measuring the peak FMA rate.
func peak() *file {
	f := newFile("peak_arm64.s")
	f.text("FMAPeakNEON", 8, "func FMAPeakNEON(n int)")
	f.op("MOVD n+0(FP), R0")
	f.zero(0, 32)
	f.op("CMP $0, R0")
	f.op("BLE done")
	f.label("loop")
	for i := 8; i < 32; i++ {
		f.op("VFMLA V0.S4, V1.S4, V%d.S4", i)
	}
	f.op("SUBS $1, R0")
	f.op("BNE loop")
	f.label("done")
	f.op("RET")
	return f
}
