package attention

// The explicit reference: float64, plain Go loops, no kernels, no fusion.
// Multi-head attention's heads are written out as the graph they are:
// split qkv into Q, K, V, reshape each to [B,T,H,D] and transpose to
// [B,H,T,D], take each head's slice, compute masked scores and a stable
// softmax, multiply by V, transpose back and concatenate the heads to
// [B,T,C]. Its backward is written the same way, and the two are
// checked against central finite differences (TestReferenceGradients), so
// the fast path can be held to them at sizes where finite differences
// would be slow.

import "math"

func to64(s []float32) []float64 {
	d := make([]float64, len(s))
	for i, v := range s {
		d[i] = float64(v)
	}
	return d
}

// refShape is one reference problem.
type refShape struct{ b, t, c, h int }

func (s refShape) d() int { return s.c / s.h }

// columns returns columns c0..c0+w-1 of an [n,ld] matrix as [n,w].
func columns(n, ld, c0, w int, m []float64) []float64 {
	out := make([]float64, n*w)
	for r := 0; r < n; r++ {
		copy(out[r*w:(r+1)*w], m[r*ld+c0:r*ld+c0+w])
	}
	return out
}

// transpose12 swaps the middle two axes of a [d0,d1,d2,d3] tensor.
func transpose12(d0, d1, d2, d3 int, x []float64) []float64 {
	out := make([]float64, len(x))
	for a := 0; a < d0; a++ {
		for b := 0; b < d1; b++ {
			for c := 0; c < d2; c++ {
				for e := 0; e < d3; e++ {
					out[((a*d2+c)*d1+b)*d3+e] = x[((a*d1+b)*d2+c)*d3+e]
				}
			}
		}
	}
	return out
}

// refTrace is everything the reference forward computes.
type refTrace struct {
	s       refShape
	scale   float64
	q, k, v []float64 // [B,H,T,D]
	probs   []float64 // [B,H,T,T]
	yh      []float64 // [B,H,T,D]
	y       []float64 // [B,T,C]
}

// refForward runs the reference forward pass over qkv [B,T,3C].
func refForward(s refShape, scale float64, qkv []float64) *refTrace {
	B, T, C, H, D := s.b, s.t, s.c, s.h, s.d()
	n := B * T
	tr := &refTrace{s: s, scale: scale}
	// split, reshape [B,T,H,D], transpose to [B,H,T,D]
	tr.q = transpose12(B, T, H, D, columns(n, 3*C, 0, C, qkv))
	tr.k = transpose12(B, T, H, D, columns(n, 3*C, C, C, qkv))
	tr.v = transpose12(B, T, H, D, columns(n, 3*C, 2*C, C, qkv))
	tr.probs = make([]float64, B*H*T*T)
	tr.yh = make([]float64, B*H*T*D)
	for bh := 0; bh < B*H; bh++ {
		q := tr.q[bh*T*D : (bh+1)*T*D]
		k := tr.k[bh*T*D : (bh+1)*T*D]
		v := tr.v[bh*T*D : (bh+1)*T*D]
		pr := tr.probs[bh*T*T : (bh+1)*T*T]
		yh := tr.yh[bh*T*D : (bh+1)*T*D]
		for i := 0; i < T; i++ {
			row := pr[i*T : (i+1)*T]
			mx := math.Inf(-1)
			for j := 0; j < T; j++ {
				if j > i {
					row[j] = math.Inf(-1)
					continue
				}
				acc := 0.0
				for e := 0; e < D; e++ {
					acc += q[i*D+e] * k[j*D+e]
				}
				row[j] = scale * acc
				mx = math.Max(mx, row[j])
			}
			sum := 0.0
			for j := range row {
				row[j] = math.Exp(row[j] - mx) // exp(-Inf) = 0
				sum += row[j]
			}
			for j := range row {
				row[j] /= sum
			}
			for e := 0; e < D; e++ {
				acc := 0.0
				for j := 0; j < T; j++ {
					acc += row[j] * v[j*D+e]
				}
				yh[i*D+e] = acc
			}
		}
	}
	// transpose back to [B,T,H,D] = concatenated heads [B,T,C]
	tr.y = transpose12(B, H, T, D, tr.yh)
	return tr
}

// refBackward returns dL/dqkv [B,T,3C] of a loss whose gradient with
// respect to y is dy.
func refBackward(tr *refTrace, dy []float64) []float64 {
	s := tr.s
	B, T, C, H, D := s.b, s.t, s.c, s.h, s.d()
	n := B * T
	dyh := transpose12(B, T, H, D, dy) // [B,H,T,D]
	dq := make([]float64, B*H*T*D)
	dk := make([]float64, B*H*T*D)
	dv := make([]float64, B*H*T*D)
	for bh := 0; bh < B*H; bh++ {
		o := bh * T * D
		pr := tr.probs[bh*T*T : (bh+1)*T*T]
		for i := 0; i < T; i++ {
			dp := make([]float64, T)
			dot := 0.0
			for j := 0; j < T; j++ {
				for e := 0; e < D; e++ {
					dp[j] += dyh[o+i*D+e] * tr.v[o+j*D+e]
					dv[o+j*D+e] += pr[i*T+j] * dyh[o+i*D+e]
				}
				dot += pr[i*T+j] * dp[j]
			}
			for j := 0; j < T; j++ {
				ds := pr[i*T+j] * (dp[j] - dot) * tr.scale
				for e := 0; e < D; e++ {
					dq[o+i*D+e] += ds * tr.k[o+j*D+e]
					dk[o+j*D+e] += ds * tr.q[o+i*D+e]
				}
			}
		}
	}
	// back to [B,T,C] and concatenated into dqkv [B,T,3C]
	dqkv := make([]float64, n*3*C)
	for part, d := range [][]float64{dq, dk, dv} {
		m := transpose12(B, H, T, D, d)
		for r := 0; r < n; r++ {
			copy(dqkv[r*3*C+part*C:r*3*C+part*C+C], m[r*C:(r+1)*C])
		}
	}
	return dqkv
}

// crossEntropy is the scalar test loss: every row of out [n,C] (the
// heads' output y) is a row of logits and targets[r] its class; the loss
// is the mean over rows of -log softmax(row)[target]. It returns the
// loss and dL/dout.
func crossEntropy(n, c int, out []float64, targets []int) (float64, []float64) {
	loss := 0.0
	d := make([]float64, len(out))
	for r := 0; r < n; r++ {
		row := out[r*c : (r+1)*c]
		mx := math.Inf(-1)
		for _, v := range row {
			mx = math.Max(mx, v)
		}
		sum := 0.0
		for _, v := range row {
			sum += math.Exp(v - mx)
		}
		loss += -(row[targets[r]] - mx - math.Log(sum))
		for j, v := range row {
			d[r*c+j] = math.Exp(v-mx) / sum / float64(n)
		}
		d[r*c+targets[r]] -= 1 / float64(n)
	}
	return loss / float64(n), d
}
