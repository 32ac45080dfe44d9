// Command gemm generates the register-blocked GEMM micro-kernels for AVX2
// (YMM, FMA) and AVX-512 (ZMM, opmask edges).
//
// Every micro-kernel computes one tile of C:
//
//	C[i, j] = alpha * sum_p A(i, p) * B[p*ldb + j] + beta * C[i, j]
//
// for i < rows <= MR and j < cols <= NR. A(i, p) is read at
// a[i*rsa + p*csa], so the same kernel serves a row-major A (rsa = lda,
// csa = 1), a transposed one (rsa = 1, csa = lda) and a packed panel; all
// MR rows of A are read, so the caller pads the bottom edge. B is read as
// k rows of NR floats at a stride of ldb floats: a packed panel (ldb = NR)
// or, for a full-width panel, a row-major B in place (all NR floats of
// each row are read). Only the rows×cols corner of C is read or
// written: AVX-512 masks the right edge with opmask registers, AVX2 with
// VMASKMOVPS. When beta is ±0, C is not read.
//
// The accumulators stay in registers for the whole k loop; each step loads
// NR/lanes vectors of B, broadcasts each of the MR values of A once and
// issues MR*NR/lanes FMAs.
package main

import (
	"flag"
	"fmt"
	"go/format"
	"log"
	"os"
	"strings"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/simdgpt/simdgpt/asm/gen/internal/x86"
)

// unroll is how many k steps one iteration of the main loop performs.
const unroll = 4

// configs are the kernel families, each a tile shape of one instruction
// set: MR rows and nv vectors of columns for the wide kernel (NR = nv
// lanes), a narrow kernel of nv-1 vectors for a last panel that fits, and
// the edge kernels of 2, 4, ... rows (fewer rows of the same packed
// panels, for a last row of tiles with fewer than MR rows: about rows/MR
// of the full kernel's time instead of all of it). The first family of an
// instruction set is its default (see kernels/amd64's tile choice).
var configs = []struct {
	s       *x86.ISA
	mr, nv  int
	varName string // of the kernel table in the generated Go file
}{
	{x86.AVX512, 14, 2, "kernelsAVX512"},
	{x86.AVX512, 8, 3, "kernelsAVX512x8x48"},
	{x86.AVX2, 6, 2, "kernelsAVX2"},
	{x86.AVX2, 4, 3, "kernelsAVX2x4x24"},
}

func main() {
	table := flag.String("table", "", "also write the driver's kernel tables (Go) to this file")
	flag.Parse()
	ConstraintExpr("amd64,!purego")
	maskAVX2 := x86.LanesAVX2("gemmMaskAVX2")
	maskAVX512 := x86.OpmasksAVX512("gemmMaskAVX512")
	maskOf := map[string]Mem{"AVX2": maskAVX2, "AVX512": maskAVX512}

	for _, packed := range []bool{false, true} {
		for _, c := range configs {
			kernel(c.s, c.mr, c.nv, maskOf[c.s.Name], packed, c.mr)
			kernel(c.s, c.mr, c.nv-1, maskOf[c.s.Name], packed, c.mr)
		}
	}
	for _, c := range configs {
		for mr := 2; mr < c.mr; mr += 2 {
			kernel(c.s, mr, c.nv, maskOf[c.s.Name], true, c.mr)
			kernel(c.s, mr, c.nv-1, maskOf[c.s.Name], true, c.mr)
		}
	}
	for _, c := range configs {
		dotKernel(c.s, c.mr, maskOf[c.s.Name])
	}
	for _, c := range configs {
		if s, ok := colsISA(c.mr); ok && s == c.s {
			colsKernel(s, c.mr)
		}
	}
	for _, c := range configs {
		if s, ok := colsISA(c.mr); ok && s != c.s && !hasConfig(s, c.mr) {
			colsKernel(s, c.mr)
		}
	}
	for _, t := range transposers(maskAVX2, maskAVX512) {
		packTransposed(t)
	}
	packRows(maskAVX2)
	packers := map[int]bool{}
	for _, c := range configs {
		for _, mr := range []int{c.mr, c.nv * c.s.Lanes} { // A's panels; B's of Wide.NR floats
			if !packers[mr] {
				packers[mr] = true
				packPanels(mr, maskAVX2)
			}
		}
	}
	x86.Finish()
	if *table != "" {
		writeTable(*table)
	}
}

// Names of the generated functions (unexported: only kernels/amd64's
// wiring calls them, through the tables).
func kernelName(s *x86.ISA, mr, nr int, packed bool, panelMR int) string {
	switch {
	case !packed:
		return fmt.Sprintf("gemmKernel%dx%d%s", mr, nr, s.Name)
	case panelMR != mr:
		return fmt.Sprintf("gemmKernel%dx%dPacked%dRows%s", mr, nr, panelMR, s.Name)
	}
	return fmt.Sprintf("gemmKernel%dx%dPacked%s", mr, nr, s.Name)
}

// colsISA is the instruction set whose vector is one row of a packed
// panel of mr rows, the one colsKernel is generated for: an 8-row panel
// of an AVX-512 family uses the AVX2 kernel.
func colsISA(mr int) (*x86.ISA, bool) {
	switch panelStride(mr) {
	case x86.AVX2.Lanes:
		return x86.AVX2, true
	case x86.AVX512.Lanes:
		return x86.AVX512, true
	}
	return nil, false
}

// hasConfig reports whether a family of s has mr rows.
func hasConfig(s *x86.ISA, mr int) bool {
	for _, c := range configs {
		if c.s == s && c.mr == mr {
			return true
		}
	}
	return false
}

func dotName(s *x86.ISA, mr int) string  { return fmt.Sprintf("gemmDotKernel%d%s", mr, s.Name) }
func colsName(s *x86.ISA, mr int) string { return fmt.Sprintf("gemmColsKernel%d%s", mr, s.Name) }
func packPanelsName(mr int) string       { return fmt.Sprintf("packPanels%dAVX2", mr) }

const (
	packTName    = "packBTransAVX2"
	packNName    = "packBAVX2"
	packT512Name = "packBTransAVX512"
)

// writeTable writes the gemm.Kernels tables of the kernels generated
// above, so that the Go side never lists them (or their layout constants)
// by hand.
func writeTable(path string) {
	var b strings.Builder
	b.WriteString("// Code generated by command: go run ./gemm (in asm/gen; see kernels/amd64/gen.go). DO NOT EDIT.\n\n")
	b.WriteString("//go:build amd64 && !purego\n\npackage amd64\n\n")
	b.WriteString("import \"github.com/simdgpt/simdgpt/kernels/internal/gemm\"\n")
	for _, c := range configs {
		micro := func(nv int) string {
			nr := nv * c.s.Lanes
			edge := []string{"nil"}
			for mr := 2; mr < c.mr; mr += 2 {
				e := kernelName(c.s, mr, nr, true, c.mr)
				edge = append(edge, e, e) // rows mr-1 and mr
			}
			return fmt.Sprintf("gemm.MicroKernel{MR: %d, NR: %d, Strided: %s, Packed: %s,\nEdge: []gemm.KernelFunc{%s}}",
				c.mr, nr, kernelName(c.s, c.mr, nr, false, c.mr), kernelName(c.s, c.mr, nr, true, c.mr), strings.Join(edge, ", "))
		}
		cs, _ := colsISA(c.mr)
		fmt.Fprintf(&b, "\n// %s are the %s GEMM kernels of %d rows, for the blocked driver.\n", c.varName, c.s.Name, c.mr)
		fmt.Fprintf(&b, "var %s = gemm.Kernels{\nWide: %s,\nNarrow: %s,\n", c.varName, micro(c.nv), micro(c.nv-1))
		// The ZMM packer takes panels a multiple of 16 floats wide: A's
		// (ps) and B's (NR and the narrow NR, whole ZMM vectors).
		packT := packTName
		if c.s.Is512() && panelStride(c.mr)%16 == 0 {
			packT = packT512Name
		}
		fmt.Fprintf(&b, "PanelStride: %d,\nPackT: %s, PackN: %s, PackPanels: %s, PackBPanels: %s,\n", panelStride(c.mr), packT, packNName, packPanelsName(c.mr), packPanelsName(c.nv*c.s.Lanes))
		fmt.Fprintf(&b, "Dot: %s, Cols: %s, ColsMax: %d,\n}\n", dotName(c.s, c.mr), colsName(cs, c.mr), colsMax)
	}
	b.WriteString("\n// gemmTiles are each set's GEMM kernel families by the shape of their\n// tile (MR×NR), in the order generated.\nvar gemmTiles = map[string][]gemmTile{\n")
	for _, set := range []*x86.ISA{x86.AVX512, x86.AVX2} {
		fmt.Fprintf(&b, "%q: {", strings.ToLower(set.Name))
		for _, c := range configs {
			if c.s == set {
				fmt.Fprintf(&b, "{%q, &%s}, ", fmt.Sprintf("%dx%d", c.mr, c.nv*c.s.Lanes), c.varName)
			}
		}
		b.WriteString("},\n")
	}
	b.WriteString("}\n")
	src, err := format.Source([]byte(b.String()))
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(path, src, 0o644); err != nil {
		log.Fatal(err)
	}
}

// rowAddr returns the address of A(i, p) for the current p, given base
// registers for rows 0, 5, 10, ... and the row stride rs (bytes) and 3*rs.
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

// panelStride is the number of floats per k step of a packed A panel of
// mr rows: mr rounded up to a multiple of 8 (the packer's granule).
func panelStride(mr int) int { return (mr + 7) &^ 7 }

// rowBases loads the matrix argument a and its row stride (in floats)
// and sets up the registers rowAddr needs for mr rows: a base for rows 0,
// 5, 10, ..., the stride rs in bytes and 3*rs.
func rowBases(mr int, a, stride string) (bases []reg.GPVirtual, rs, rs3 reg.GPVirtual) {
	rs = x86.Arg(stride)
	SHLQ(U8(2), rs)
	rs3 = GP64()
	LEAQ(Mem{Base: rs, Index: rs, Scale: 2}, rs3)
	bases = make([]reg.GPVirtual, (mr+4)/5)
	bases[0] = x86.Arg(a)
	five := GP64()
	LEAQ(Mem{Base: rs, Index: rs, Scale: 4}, five) // 5*rs
	for i := 1; i < len(bases); i++ {
		bases[i] = GP64()
		LEAQ(Mem{Base: bases[i-1], Index: five, Scale: 1}, bases[i])
	}
	return bases, rs, rs3
}
