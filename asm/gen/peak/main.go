// Command peak generates FMA-throughput loops for AVX2 (YMM) and AVX-512
// (ZMM), and loops that read memory as fast as a core can. They do no
// useful work: their only purpose is to measure this CPU's peak float32
// FMA rate, so that every GEMM figure can be read as a fraction of it,
// and its peak read bandwidth, for the memory-bound kernels.
package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/simdgpt/simdgpt/asm/gen/internal/x86"
)

// readBlock is the bytes a read loop reads per iteration.
const readBlock = 1024

// streamBlock is the bytes the streams loop reads from each stream in
// turn.
const streamBlock = 256

// accumulators is the number of independent FMA chains: enough to cover
// FMA latency (4 cycles) times two FMA ports with room to spare.
const accumulators = 12

func main() {
	ConstraintExpr("amd64,!purego")
	loop("fmaPeakAVX2", "AVX2 and FMA", 8, func() reg.VecVirtual { return YMM() })
	loop("fmaPeakAVX512", "AVX-512F", 16, func() reg.VecVirtual { return ZMM() })
	bf16Loop()
	read(x86.AVX2)
	read(x86.AVX512)
	readStreams(x86.AVX2)
	readStreams(x86.AVX512)
	x86.Finish()
}

func loop(name, req string, lanes int, newReg func() reg.VecVirtual) {
	x86.Func(name, "fmaPeak", name+" runs n iterations of "+itoa(accumulators)+" independent float32 FMAs on "+itoa(lanes)+"-lane registers.",
		"Each iteration performs "+itoa(accumulators*lanes*2)+" floating-point operations. Requires "+req+".")
	n := Load(Param("n"), GP64())
	acc := make([]reg.VecVirtual, accumulators)
	for i := range acc {
		acc[i] = newReg()
		VXORPS(acc[i], acc[i], acc[i])
	}
	x, y := newReg(), newReg()
	VXORPS(x, x, x)
	VXORPS(y, y, y)
	Label(name + "_loop")
	TESTQ(n, n)
	JZ(LabelRef(name + "_done"))
	for i := range acc {
		VFMADD231PS(x, y, acc[i])
	}
	DECQ(n)
	JMP(LabelRef(name + "_loop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// bf16Accumulators is the number of independent VDPBF16PS chains of
// bf16Loop: its latency (6 cycles on Zen 4) times two pipes with room to
// spare.
const bf16Accumulators = 24

// bf16Loop generates bf16PeakAVX512, the bfloat16 counterpart of the FMA
// loops: VDPBF16PS on ZMM, whose 16 lanes each add two products (64
// floating-point operations an instruction). Go's assembler lacks the
// instruction, so it is emitted as bytes on physical registers.
func bf16Loop() {
	name := "bf16PeakAVX512"
	x86.Func(name, "bf16Peak", name+" runs n iterations of "+itoa(bf16Accumulators)+" independent VDPBF16PS on 16-lane registers.",
		"Each iteration performs "+itoa(bf16Accumulators*16*4)+" floating-point operations. Requires AVX-512F and AVX512_BF16.")
	n := Load(Param("n"), GP64())
	zs := []reg.VecPhysical{reg.Z0, reg.Z1, reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7,
		reg.Z8, reg.Z9, reg.Z10, reg.Z11, reg.Z12, reg.Z13, reg.Z14, reg.Z15,
		reg.Z16, reg.Z17, reg.Z18, reg.Z19, reg.Z20, reg.Z21, reg.Z22, reg.Z23}
	for _, z := range zs[:bf16Accumulators] {
		VPXORD(z, z, z)
	}
	VPXORD(reg.Z30, reg.Z30, reg.Z30)
	VPXORD(reg.Z31, reg.Z31, reg.Z31)
	Label(name + "_loop")
	TESTQ(n, n)
	JZ(LabelRef(name + "_done"))
	for _, z := range zs[:bf16Accumulators] {
		x86.VDPBF16PS(reg.Z30, reg.Z31, z)
	}
	DECQ(n)
	JMP(LabelRef(name + "_loop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

var _ Op = nil

// read generates readAhead<ISA>: the sum of n floats from p (n a
// multiple of readBlock/4), read a block of readBlock bytes at a time
// into 8 accumulators, each cache line of the block dist bytes further
// on prefetched as the block is read.
func read(s *x86.ISA) {
	name := "readAhead" + s.Name
	x86.Func(name, "readAhead", name+" returns the sum of the n floats from p (n >= 1, a multiple of "+itoa(readBlock/4)+"), read "+itoa(readBlock)+" bytes",
		"at a time, each line dist bytes further on prefetched (PREFETCHT0) as they are read. Requires "+s.Req+".")
	p := x86.Arg("p")
	n := x86.Arg("n")
	dist := x86.Arg("dist")
	acc := s.Zeros(8)
	Label(name + "_loop")
	for q := 0; q < readBlock/64; q++ {
		PREFETCHT0(Mem{Base: p, Index: dist, Scale: 1, Disp: 64 * q})
	}
	for v := 0; v < readBlock/s.Bytes(); v++ {
		VADDPS(s.At(p, v), acc[v%len(acc)], acc[v%len(acc)])
	}
	ADDQ(U32(readBlock), p)
	SUBQ(U32(readBlock/4), n)
	JNZ(LabelRef(name + "_loop"))
	x86.Tree(VADDPS, acc)
	s.SumToLane0(acc[0])
	Store(acc[0].AsX(), ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// readStreams generates readStreams<ISA>: the sum of streams runs of n
// floats (n a multiple of streamBlock/4), the first at p and each stride
// floats after the one before, reading streamBlock bytes of each run in
// turn into 4 accumulators (AVX2: 8), with no software prefetch: a core's
// hardware prefetchers follow several streams at once, and on some CPUs
// read faster so than one stream.
func readStreams(s *x86.ISA) {
	name := "readStreams" + s.Name
	x86.Func(name, "readStreams", name+" returns the sum of streams runs of n floats (n >= 1, a multiple of "+itoa(streamBlock/4)+"; streams >= 1),",
		"the first at p and each stride floats after the one before, read "+itoa(streamBlock)+" bytes of each run in turn. Requires "+s.Req+".")
	p := x86.Arg("p")
	n := x86.Arg("n")
	streams := x86.Arg("streams")
	stride := x86.Arg("stride")
	SHLQ(U8(2), stride)
	acc := s.Zeros(streamBlock / s.Bytes())
	q, t := GP64(), GP64()
	Label(name + "_loop")
	MOVQ(p, q)
	MOVQ(streams, t)
	Label(name + "_stream")
	for v := range acc {
		VADDPS(s.At(q, v), acc[v], acc[v])
	}
	ADDQ(stride, q)
	DECQ(t)
	JNZ(LabelRef(name + "_stream"))
	ADDQ(U32(streamBlock), p)
	SUBQ(U32(streamBlock/4), n)
	JNZ(LabelRef(name + "_loop"))
	x86.Tree(VADDPS, acc)
	s.SumToLane0(acc[0])
	Store(acc[0].AsX(), ReturnIndex(0))
	VZEROUPPER()
	RET()
}
