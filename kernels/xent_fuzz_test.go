package kernels

import (
	"fmt"
	"testing"
)

// FuzzXent decodes a matrix of logits and its targets from the fuzz bytes
// and checks SoftmaxCrossEntropy of every implementation against the
// float64 reference, with the accuracy model of xent_test.go (the SIMD
// tolerances for every implementation):
//
//	data[0]   bits 0-1: rows m = 1 + b%3; bit 2: in place; bit 3:
//	          leading dimensions n+1 (logits) and n+3 (dlogits)
//	data[1]   the scale: xeScales[b%3]
//	data[2:]  m rows of 1 + n bytes each (n = len/m - 1 >= 1): the target
//	          (mod n), then n logits decoded by smFuzzValue (moderate
//	          values, ±Inf, NaN, ±3e38, subnormals, 5000)
func FuzzXent(f *testing.F) {
	f.Add([]byte{0, 0, 1, 128, 132, 136})
	f.Add([]byte{1, 1, 0, 0xff, 130, 1, 0xff, 0xff})
	f.Add([]byte{2, 2, 5, 0xfe, 120, 130, 1, 0xfd, 128, 9, 1, 2, 3})
	f.Add([]byte{4, 0, 2, 0xfc, 0xfb, 128, 0xfc})
	f.Add([]byte{8, 1, 3, 0xf9, 0xf9, 10, 20, 0xff, 30})
	f.Add([]byte{12, 2, 0, 0xfa, 128, 128, 1, 0xf8, 0xf8, 0xf8})
	f.Add([]byte{0, 0, 7, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	long := []byte{5, 0}
	for i := 0; i < 2*101; i++ {
		long = append(long, byte(i*37))
	}
	f.Add(long)

	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 4 {
			return
		}
		m := 1 + int(data[0]&3)%3
		inplace := data[0]&4 != 0
		scale := xeScales[int(data[1])%len(xeScales)]
		rest := data[2:]
		n := len(rest)/m - 1
		if n < 1 {
			return
		}
		ldl, ldd := n, n
		if data[0]&8 != 0 {
			ldl, ldd = n+1, n+3
		}
		if inplace {
			ldd = ldl
		}
		rows := make([][]float32, m)
		targets := make([]int32, m)
		refs := make([]xeRef, m)
		for i := range rows {
			b := rest[i*(n+1) : (i+1)*(n+1)]
			targets[i] = int32(int(b[0]) % n)
			rows[i] = make([]float32, n)
			for j := range rows[i] {
				rows[i][j] = smFuzzValue(b[1+j])
			}
			refs[i] = xeReference(rows[i], int(targets[i]), scale)
		}
		forEachImpl(t, func(t *testing.T, p *Impl) {
			x, _ := smLayout(rows, n, ldl, 1)
			dl := x
			if !inplace {
				dl, _ = smLayout(make([][]float32, m), n, ldd, 2)
			}
			losses := make([]float32, m)
			p.SoftmaxCrossEntropy(m, n, x, ldl, targets, scale, dl, ldd, losses)
			xeCheck(t, fmt.Sprintf("m=%d n=%d inplace=%v", m, n, inplace), refs, targets, scale, losses, dl, ldd, true)
		})
	})
}
