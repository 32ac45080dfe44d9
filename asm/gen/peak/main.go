// Command peak generates FMA-throughput loops for AVX2 (YMM) and AVX-512
// (ZMM). They do no useful work: their only purpose is to measure this
// CPU's peak float32 FMA rate, so that every GEMM figure can be read as a
// fraction of it.
package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// accumulators is the number of independent FMA chains: enough to cover
// FMA latency (4 cycles) times two FMA ports with room to spare.
const accumulators = 12

func main() {
	ConstraintExpr("amd64,!purego")
	loop("fmaPeakAVX2", "AVX2 and FMA", 8, func() reg.VecVirtual { return YMM() })
	loop("fmaPeakAVX512", "AVX-512F", 16, func() reg.VecVirtual { return ZMM() })
	Generate()
}

func loop(name, req string, lanes int, newReg func() reg.VecVirtual) {
	TEXT(name, NOSPLIT, "func(n int)")
	Pragma("noescape")
	Doc(name+" runs n iterations of "+itoa(accumulators)+" independent float32 FMAs on "+itoa(lanes)+"-lane registers.",
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
