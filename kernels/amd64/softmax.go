//go:build amd64 && !purego

package amd64

// The softmax kernel sets loop over the rows of a checked matrix and hand
// each row to a per-row assembly kernel (asm/gen/softmax); the kernels
// read n from len(src) (or len(y)) and only the first n elements of the
// other slices.

func softmaxAVX2(m, n int, x []float32, ldx int, y []float32, ldy int) {
	for i := 0; i < m; i++ {
		softmaxRowAVX2(y[i*ldy:i*ldy+n], x[i*ldx:i*ldx+n])
	}
}

// softmaxAVX512 takes rows of up to pairMaxLen floats in pairs:
// softmaxRows2AVX512 overlaps the latency of one row's reductions (max,
// sum, reciprocal) with the other row's work, which matters most for short
// rows. Longer rows go one at a time, so that a row's input and output
// stay in L1 (32 KiB) between the passes: two rows of 4096 would not
// (PERF.md, "Softmax", has the measurement behind pairMaxLen).
func softmaxAVX512(m, n int, x []float32, ldx int, y []float32, ldy int) {
	i := 0
	for ; i+1 < m && n <= pairMaxLen; i += 2 {
		softmaxRows2AVX512(y[i*ldy:i*ldy+n], x[i*ldx:i*ldx+n], y[(i+1)*ldy:(i+1)*ldy+n], x[(i+1)*ldx:(i+1)*ldx+n])
	}
	for ; i < m; i++ {
		softmaxRowAVX512(y[i*ldy:i*ldy+n], x[i*ldx:i*ldx+n])
	}
}

// pairMaxLen is the longest row softmaxAVX512 processes in pairs.
var pairMaxLen = 2048

func softmaxBackwardAVX2(m, n int, y []float32, ldy int, dy []float32, lddy int, dx []float32, lddx int) {
	for i := 0; i < m; i++ {
		softmaxBackwardRowAVX2(dx[i*lddx:i*lddx+n], y[i*ldy:i*ldy+n], dy[i*lddy:i*lddy+n])
	}
}

func softmaxBackwardAVX512(m, n int, y []float32, ldy int, dy []float32, lddy int, dx []float32, lddx int) {
	for i := 0; i < m; i++ {
		softmaxBackwardRowAVX512(dx[i*lddx:i*lddx+n], y[i*ldy:i*ldy+n], dy[i*lddy:i*lddy+n])
	}
}
