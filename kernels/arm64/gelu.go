//go:build arm64 && !purego

package arm64

// The GELU kernels run whole vectors of 4; the last 1-3 elements go
// through a 4-element buffer on the stack (padded with zeros, whose
// results are discarded), so that every element takes the same
// arithmetic and nothing outside the slices is read or written.

func geluNEON(dst, x []float32) {
	n4 := len(x) &^ 3
	if n4 > 0 {
		geluRowNEON(dst[:n4], x[:n4])
	}
	if n4 < len(x) {
		var buf [4]float32
		copy(buf[:], x[n4:])
		geluRowNEON(buf[:], buf[:])
		copy(dst[n4:len(x)], buf[:])
	}
}

func geluBackwardNEON(dx, dy, x []float32) {
	n4 := len(x) &^ 3
	if n4 > 0 {
		geluBackwardRowNEON(dx[:n4], dy[:n4], x[:n4])
	}
	if n4 < len(x) {
		var bx, bd [4]float32
		copy(bx[:], x[n4:])
		copy(bd[:], dy[n4:len(x)])
		geluBackwardRowNEON(bd[:], bd[:], bx[:])
		copy(dx[n4:len(x)], bd[:])
	}
}

func biasGeluNEON(m, n int, x []float32, ldx int, bias []float32, y []float32, ldy int) {
	for i := 0; i < m; i++ {
		biasGeluRowNEONTail(y[i*ldy:i*ldy+n], x[i*ldx:i*ldx+n], bias[:n])
	}
}

// biasGeluRowNEONTail is biasGeluRowNEON for any length.
func biasGeluRowNEONTail(y, x, bias []float32) {
	n4 := len(x) &^ 3
	if n4 > 0 {
		biasGeluRowNEON(y[:n4], x[:n4], bias[:n4])
	}
	if n4 < len(x) {
		var bx, bb [4]float32
		copy(bx[:], x[n4:])
		copy(bb[:], bias[n4:len(x)])
		biasGeluRowNEON(bx[:], bx[:], bb[:])
		// bx now holds the GELU; the pre-activation is x + bias, one
		// float32 addition, as the kernel computes it.
		for j := n4; j < len(x); j++ {
			x[j] += bias[j]
		}
		copy(y[n4:len(x)], bx[:])
	}
}
