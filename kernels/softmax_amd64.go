//go:build amd64 && !purego

package kernels

import "github.com/simdgpt/simdgpt/kernels/amd64"

// The softmax adapters loop over the rows of a checked matrix and hand each
// row to a per-row assembly kernel; the kernels read n from len(src) (or
// len(y)) and only the first n elements of the other slices.

func softmaxAVX2(m, n int, x []float32, ldx int, y []float32, ldy int) {
	for i := 0; i < m; i++ {
		amd64.SoftmaxRowAVX2(y[i*ldy:i*ldy+n], x[i*ldx:i*ldx+n])
	}
}

// softmaxAVX512 takes the rows in pairs: SoftmaxRows2AVX512 overlaps the
// latency of one row's reductions (max, sum, reciprocal) with the other
// row's work, which matters most for short rows.
func softmaxAVX512(m, n int, x []float32, ldx int, y []float32, ldy int) {
	i := 0
	for ; i+1 < m; i += 2 {
		amd64.SoftmaxRows2AVX512(y[i*ldy:i*ldy+n], x[i*ldx:i*ldx+n], y[(i+1)*ldy:(i+1)*ldy+n], x[(i+1)*ldx:(i+1)*ldx+n])
	}
	if i < m {
		amd64.SoftmaxRowAVX512(y[i*ldy:i*ldy+n], x[i*ldx:i*ldx+n])
	}
}

func softmaxBackwardAVX2(m, n int, y []float32, ldy int, dy []float32, lddy int, dx []float32, lddx int) {
	for i := 0; i < m; i++ {
		amd64.SoftmaxBackwardRowAVX2(dx[i*lddx:i*lddx+n], y[i*ldy:i*ldy+n], dy[i*lddy:i*lddy+n])
	}
}

func softmaxBackwardAVX512(m, n int, y []float32, ldy int, dy []float32, lddy int, dx []float32, lddx int) {
	for i := 0; i < m; i++ {
		amd64.SoftmaxBackwardRowAVX512(dx[i*lddx:i*lddx+n], y[i*ldy:i*ldy+n], dy[i*lddy:i*lddy+n])
	}
}
