package main

import "fmt"

// GEMM micro-kernels. gemmKernel8x{4*nv}NEON computes one tile of 8 rows
// and 4*nv columns with the contract of every micro-kernel of the blocked
// driver (kernels/internal/gemm, KernelFunc; the same as amd64's):
//
//	C = alpha*A*B + beta*C   for the first rows×cols corner only
//
// A is a packed panel, A(i,p) at a[8*p+i] (panelStride floats per k step,
// two vectors; rsa and csa are unused); B is k rows of 4*nv floats at a
// stride of ldb floats (nv vectors per row, all read); only the rows×cols
// corner of C (leading dimension ldc, 1 <= rows <= 8, 1 <= cols <= 4*nv)
// is read or written, and C is read only when beta is not ±0. The
// accumulators are V8.. (acc(i,j) = V(8+i*nv+j)); each k step loads A into
// V0-V1 and B into V2..V(1+nv) and issues 8*nv by-element FMLAs,
// acc(i,j) += B_j * A.S[i]. A full tile is stored from the registers; an
// edge tile (rows < 8 or cols < 4*nv) goes to a scratch tile on the stack
// and its corner is merged into C one element at a time.
//
// Per two k steps the 8×12 kernel issues 4 load instructions (10
// vectors), 48 FMLAs (384 flops) and 2 loop instructions (SUBS, BGE).
func init() { emitters = append(emitters, gemm) }

func gemm() *file {
	f := newFile("gemm_arm64.s")
	for _, nv := range gemmNVs {
		gemmKernel(f, nv)
	}
	return f
}

// gemmMR is the rows of every NEON micro-kernel, and panelStride the
// floats per k step of the packed A panels they read (written into the
// kernel table for the driver, which packs the panels).
const (
	gemmMR      = 8
	panelStride = 8
)

// gemmNVs are the vectors per row of B of the wide and narrow kernels.
var gemmNVs = [2]int{3, 1}

func gemmName(nv int) string { return fmt.Sprintf("gemmKernel%dx%dNEON", gemmMR, 4*nv) }

func gemmKernel(f *file, nv int) {
	const mr = gemmMR
	nr := 4 * nv
	name := gemmName(nv)
	acc := func(i, j int) int { return 8 + i*nv + j }
	tile := mr * nr * 4 // bytes of the scratch tile
	doc := fmt.Sprintf("%s computes one %d×%d tile, C = alpha*A*B + beta*C, with A a packed panel, A(i,p) at a[%d*p+i] for all %d rows and p < k (rsa, csa unused); B k rows of %d floats at a stride of ldb floats (all %d read); and only the first rows×cols corner of C (leading dimension ldc, 1 <= rows <= %d, 1 <= cols <= %d) read or written; C is not read when beta is ±0 (the contract of gemm.KernelFunc). Requires ASIMD. Arguments are not checked.", name, mr, nr, mr, mr, nr, nr, mr, nr)
	f.fnFrame(name, "gemmKernel", tile, doc)
	f.op("MOVD k+0(FP), R0")
	f.op("MOVD a+8(FP), R1")
	f.op("MOVD b+32(FP), R2")
	f.op("MOVD ldb+40(FP), R3")
	f.op("LSL $2, R3")
	f.op("MOVD c+48(FP), R4")
	f.op("MOVD ldc+56(FP), R5")
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
	f.op("FMOVS alpha+80(FP), F5")
	f.op("FMOVS beta+84(FP), F6")
	for i := 0; i < mr; i++ {
		for j := 0; j < nv; j++ {
			f.w(fmulElem(acc(i, j), acc(i, j), 5, 0))
		}
	}
	f.op("MOVD rows+64(FP), R6")
	f.op("MOVD cols+72(FP), R7")
	f.op("CMP $%d, R6", mr)
	f.op("BNE edge")
	f.op("CMP $%d, R7", nr)
	f.op("BNE edge")
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

	// Edge tile: alpha*acc to the scratch tile (rows of nr floats), then
	// C[i,j] = tile[i,j] (+ beta*C[i,j]) for i < rows, j < cols. R6 counts
	// rows, R9 columns; R8 walks the tile, R10 a row of C.
	f.label("edge")
	f.op("MOVD $tile-%d(SP), R8", tile)
	for i := 0; i < mr; i++ {
		f.op("VST1.P %s, %d(R8)", vlist(acc(i, 0), nv), 16*nv)
	}
	f.op("MOVD $tile-%d(SP), R8", tile)
	f.op("FCMPS $(0.0), F6")
	f.op("BEQ edge_b0")
	for _, b0 := range []bool{false, true} {
		row := "edge_row"
		if b0 {
			row = "edge_b0"
		}
		f.label(row)
		f.op("MOVD R7, R9")
		f.op("MOVD R8, R11")
		f.op("MOVD R4, R10")
		f.label(row + "_col")
		f.op("FMOVS.P 4(R11), F0")
		if !b0 {
			f.op("FMOVS (R10), F1")
			f.op("FMADDS F6, F0, F1, F0") // F0 += F1*beta, one rounding as the full tile's FMLA
		}
		f.op("FMOVS.P F0, 4(R10)")
		f.op("SUBS $1, R9")
		f.op("BNE %s_col", row)
		f.op("ADD $%d, R8", 4*nr)
		f.op("ADD R5, R4")
		f.op("SUBS $1, R6")
		f.op("BNE %s", row)
		f.op("RET")
	}
}

func init() { goFiles["gemm_kernels_arm64.go"] = gemmTable }

// gemmTable is the Go source of the driver's kernel table for the kernels
// above (written to kernels/arm64/gemm_kernels_arm64.go).
func gemmTable() string {
	micro := func(nv int) string {
		return fmt.Sprintf("gemm.MicroKernel{MR: %d, NR: %d, Packed: %s}", gemmMR, 4*nv, gemmName(nv))
	}
	return fmt.Sprintf(`package arm64

import "github.com/simdgpt/simdgpt/kernels/internal/gemm"

// kernelsNEON are the NEON GEMM kernels, for the blocked driver. They read
// only packed A panels (no strided kernel: the driver packs A) and have no
// dot or column kernels.
var kernelsNEON = gemm.Kernels{
	Wide:        %s,
	Narrow:      %s,
	PanelStride: %d,
}
`, micro(gemmNVs[0]), micro(gemmNVs[1]), panelStride)
}

// peak generates fmaPeakNEON(n): n iterations of 24 independent vector
// FMAs (24*4*2 flops), for measuring the peak FMA rate.
func init() { emitters = append(emitters, peak) }

func peak() *file {
	f := newFile("peak_arm64.s")
	f.fn("fmaPeakNEON", "fmaPeak",
		"fmaPeakNEON runs n iterations of 24 independent vector FMAs (192 float32 flops per iteration), for measuring the peak FMA rate. Requires ASIMD.")
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
