package generic

import "math"

// MaskedScores computes causally masked attention scores for one head:
//
//	S[i,j] = scale * dot(Q[i,:], K[j,:])   if j <= i+offset
//	S[i,j] = -Inf                          otherwise
//
// Q is tq×d (leading dimension ldq), K is tk×d (ldk) and S is tq×tk (lds).
// offset is the number of keys that precede the first query, as with a KV
// cache: query i sees keys 0..i+offset. Masked dot products are not
// computed.
func MaskedScores(tq, tk, d int, scale float32, q []float32, ldq int, k []float32, ldk int, offset int, s []float32, lds int) {
	negInf := float32(math.Inf(-1))
	for i := 0; i < tq; i++ {
		var qi []float32 // empty when d is 0, where q may be shorter than (tq-1)*ldq
		if d > 0 {
			qi = q[i*ldq : i*ldq+d]
		}
		si := s[i*lds : i*lds+tk]
		for j := range si {
			if j > i+offset {
				si[j] = negInf
				continue
			}
			var kj []float32
			if d > 0 {
				kj = k[j*ldk : j*ldk+d]
			}
			si[j] = scale * Dot(qi, kj)
		}
	}
}
