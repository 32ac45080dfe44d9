package kernels

// MaskedScores computes the causally masked attention scores of one head:
//
//	S[i,j] = scale * dot(Q[i,:], K[j,:])   if j <= i+offset
//	S[i,j] = -Inf                          otherwise
//
// Q is tq×d with leading dimension ldq, K is tk×d (ldk) and S is tq×tk
// (lds). offset is the number of cached keys before the first query: with
// a KV cache holding offset earlier positions, query i is position
// i+offset. offset may be negative, and at most MaxInt-tq so that every
// position is an int (it panics otherwise). S must not overlap Q or K in memory
// (it panics if it does). The SIMD implementations compute the
// scores in tiles and skip every tile that is wholly masked.
func (p *Impl) MaskedScores(tq, tk, d int, scale float32, q []float32, ldq int, k []float32, ldk int, offset int, s []float32, lds int) {
	checkDims("MaskedScores", []string{"tq", "tk", "d"}, tq, tk, d)
	checkOffset("MaskedScores", offset, tq)
	checkMatrix("MaskedScores", "q", q, tq, d, ldq)
	checkMatrix("MaskedScores", "k", k, tk, d, ldk)
	checkMatrix("MaskedScores", "s", s, tq, tk, lds)
	if tq == 0 || tk == 0 {
		return
	}
	checkNoOverlap("MaskedScores", "s", s, tq, tk, lds, "q", q, tq, d, ldq)
	checkNoOverlap("MaskedScores", "s", s, tq, tk, lds, "k", k, tk, d, ldk)
	p.set.MaskedScores(tq, tk, d, scale, q, ldq, k, ldk, offset, s, lds)
}
