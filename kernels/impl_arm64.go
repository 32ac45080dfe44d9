//go:build arm64 && !purego

package kernels

import (
	"math"
	"unsafe"

	"golang.org/x/sys/cpu"

	"github.com/simdgpt/simdgpt/kernels/arm64"
	"github.com/simdgpt/simdgpt/kernels/generic"
)

// hasNEON reports Advanced SIMD (ASIMD), which every arm64 Linux and
// macOS machine has; x/sys/cpu reads it from the OS.
var hasNEON = cpu.ARM64.HasASIMD

func archImpls() []*Impl {
	neon := &Impl{name: "neon", requires: "ASIMD", available: hasNEON, ops: genericImpl.ops}
	neon.ops.fmaLoop, neon.ops.fmaFlops = arm64.FMAPeakNEON, 24*4*2

	gemmNEON.setBlocking(CPU())
	neon.ops.gemm = gemmNEON.gemm
	neon.ops.maskedScores = gemmNEON.maskedScores

	neon.ops.dot = arm64.DotNEON
	neon.ops.axpy = arm64.AxpyNEON
	neon.ops.scale = arm64.ScaleNEON
	neon.ops.add = arm64.AddNEON
	neon.ops.sum = arm64.SumNEON
	neon.ops.max = maxNEON

	neon.ops.softmax = softmaxNEON
	neon.ops.softmaxBackward = softmaxBackwardNEON
	return []*Impl{neon}
}

// maxNEON is arm64.MaxNEON returning, like the other implementations, the
// first NaN element of x when there is one (FMAX returns some NaN).
func maxNEON(x []float32) float32 {
	m := arm64.MaxNEON(x)
	if m != m {
		for _, v := range x {
			if v != v {
				return v
			}
		}
	}
	return m
}

// GEMM blocking for NEON: kc and nc are set from the cache sizes when
// archImpls runs (see blockSizes: kc 256, nc 504 on a 64 KiB L1 and 1 MiB
// L2); mc is how many rows of A are packed at once. Not tuned on hardware
// (see PERF.md).
var gemmNEON = &blockedGemm{
	wide:   microKernel{8, 12, gemmStrided8x12NEON, gemmPacked8x12NEON, nil},
	narrow: microKernel{8, 4, gemmStrided8x4NEON, gemmPacked8x4NEON, nil},
	kc:     neonKC, mc: 8 * 48, nc: 504,
	// A is packed once per row of tiles, never read in place: the
	// strided kernelFuncs above exist for the driver's interface but would
	// pack a local panel for every tile.
	alwaysPackA: true,
}

// neonKC is the largest kc blockSizes gives: the strided wrappers pack an
// A sliver of up to neonKC steps on the stack.
const neonKC = 256

// The NEON micro-kernels compute whole 8×12 or 8×4 tiles from a packed A
// panel. The kernelFuncs below adapt them to the driver's interface: a
// tile at the bottom or right edge (rows < 8 or cols < nr) is computed into
// a local tile and its rows×cols corner merged into C; a strided A (read
// in place) is first packed into a local panel (the driver does not call
// them with alwaysPackA set, but they are complete kernelFuncs). The calls are direct, not
// through function values, so the local arrays stay on the stack.

// tileNEON computes the 8×nr tile of kernel nr (12 or 4) for a packed A.
func tileNEON(nr, k int, a, b *float32, ldb int, c *float32, ldc int, rows, cols int, alpha, beta float32) {
	if rows == 8 && cols == nr {
		if nr == 12 {
			arm64.GemmKernel8x12NEON(k, a, b, ldb, c, ldc, alpha, beta)
		} else {
			arm64.GemmKernel8x4NEON(k, a, b, ldb, c, ldc, alpha, beta)
		}
		return
	}
	var tile [8 * 12]float32
	if nr == 12 {
		arm64.GemmKernel8x12NEON(k, a, b, ldb, &tile[0], nr, alpha, 0)
	} else {
		arm64.GemmKernel8x4NEON(k, a, b, ldb, &tile[0], nr, alpha, 0)
	}
	cs := unsafe.Slice(c, (rows-1)*ldc+cols)
	for i := 0; i < rows; i++ {
		row := cs[i*ldc : i*ldc+cols]
		t := tile[i*nr : i*nr+cols]
		if beta == 0 {
			copy(row, t)
			continue
		}
		for j := range row {
			row[j] = t[j] + float32(beta*row[j])
		}
	}
}

// stridedNEON packs the 8 rows of A(i,p) = a[i*rsa+p*csa], p < k, into a
// local panel and computes the tile from it.
func stridedNEON(nr, k int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, rows, cols int, alpha, beta float32) {
	if k > neonKC {
		panic("kernels: NEON strided kernel called with k > kc")
	}
	var panel [8 * neonKC]float32
	if k > 0 {
		as := unsafe.Slice(a, 7*rsa+(k-1)*csa+1)
		for i := 0; i < 8; i++ {
			for p := 0; p < k; p++ {
				panel[8*p+i] = as[i*rsa+p*csa]
			}
		}
	}
	tileNEON(nr, k, &panel[0], b, ldb, c, ldc, rows, cols, alpha, beta)
}

func gemmPacked8x12NEON(k int, a *float32, _, _ int, b *float32, ldb int, c *float32, ldc int, rows, cols int, alpha, beta float32) {
	tileNEON(12, k, a, b, ldb, c, ldc, rows, cols, alpha, beta)
}

func gemmPacked8x4NEON(k int, a *float32, _, _ int, b *float32, ldb int, c *float32, ldc int, rows, cols int, alpha, beta float32) {
	tileNEON(4, k, a, b, ldb, c, ldc, rows, cols, alpha, beta)
}

func gemmStrided8x12NEON(k int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, rows, cols int, alpha, beta float32) {
	stridedNEON(12, k, a, rsa, csa, b, ldb, c, ldc, rows, cols, alpha, beta)
}

func gemmStrided8x4NEON(k int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, rows, cols int, alpha, beta float32) {
	stridedNEON(4, k, a, rsa, csa, b, ldb, c, ldc, rows, cols, alpha, beta)
}

// Constants of the softmax's argument reduction; they must match
// asm/gen/neon/softmax.go (see there and asm/gen/softmax).
const (
	expShifter = 12582912 // 1.5*2^23
	expMin     = -87.3    // exp is flushed to 0 below this
	expNearMax = 4096     // rows with |max| below this take the near reduction
)

// softmaxNEON computes each row in three passes: the maximum m
// (arm64.MaxNEON), the exponentials and their sum (arm64.ExpRowNEON, or
// arm64.ExpRowFarNEON when |m| >= 4096) and the scaling by 1/sum
// (arm64.ScaleNEON). A row whose maximum is NaN or ±Inf (a row holding NaN
// or +Inf, or only -Inf) is left to generic.SoftmaxRow, which gives it its
// defined result.
func softmaxNEON(m, n int, x []float32, ldx int, y []float32, ldy int) {
	for i := 0; i < m; i++ {
		softmaxRowNEON(y[i*ldy:i*ldy+n], x[i*ldx:i*ldx+n])
	}
}

func softmaxRowNEON(dst, src []float32) {
	mx := arm64.MaxNEON(src)
	if math.IsNaN(float64(mx)) || math.IsInf(float64(mx), 0) {
		generic.SoftmaxRow(dst, src)
		return
	}
	far := !(math.Abs(float64(mx)) < expNearMax)
	var c, b, thr float32
	if far {
		c, b, thr = mx, expShifter, expMin
	} else {
		// j = round(m*log2(e)); c = j*ln2 rounded to a multiple of 2^-9,
		// so that c + k*ln2Hi is exact in the kernel.
		j := math.RoundToEven(float64(mx) * math.Log2E)
		c = float32(math.RoundToEven(j*math.Ln2*512) / 512)
		b = float32(expShifter - j)
		thr = c + expMin
	}
	n4 := len(src) &^ 3
	sum := expRowNEON(far, dst[:n4], src[:n4], c, b, thr)
	if n4 < len(src) {
		// The last 1-3 entries, padded with -Inf (whose exponentials are
		// 0), so the kernel reads and writes only whole vectors.
		var buf [4]float32
		for k := range buf {
			buf[k] = float32(math.Inf(-1))
		}
		copy(buf[:], src[n4:])
		sum += expRowNEON(far, buf[:], buf[:], c, b, thr)
		copy(dst[n4:], buf[:len(src)-n4])
	}
	// sum >= exp(-0.35): the maximum's own exponential.
	arm64.ScaleNEON(float32(1/sum), dst[:len(src)])
}

// expRowNEON calls the near or far exponential kernel (directly, so that
// a local buffer passed to it stays on the stack).
func expRowNEON(far bool, dst, src []float32, c, b, thr float32) float64 {
	if far {
		return arm64.ExpRowFarNEON(dst, src, c, b, thr)
	}
	return arm64.ExpRowNEON(dst, src, c, b, thr)
}

func softmaxBackwardNEON(m, n int, y []float32, ldy int, dy []float32, lddy int, dx []float32, lddx int) {
	for i := 0; i < m; i++ {
		arm64.SoftmaxBackwardRowNEON(dx[i*lddx:i*lddx+n], y[i*ldy:i*ldy+n], dy[i*lddy:i*lddy+n])
	}
}
