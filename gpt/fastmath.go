package gpt

import "math"

// expf is a float32 e^x: range reduction x = n·ln2 + r, |r| <= ln2/2, and a
// degree-6 Taylor polynomial for e^r (relative error below 2e-7 before
// rounding). Inputs below -87 give 0, above 88 +Inf.
func expf(x float32) float32 {
	if x < -87 {
		return 0
	}
	if x > 88 {
		return float32(math.Inf(1))
	}
	const (
		log2e = 1.44269504088896341
		ln2hi = 0.693359375
		ln2lo = -2.12194440e-4
	)
	k := x*log2e + 0.5
	n := float32(int32(k))
	if k < 0 && n != k {
		n-- // floor for negative k
	}
	r := x - n*ln2hi - n*ln2lo
	p := 1 + r*(1+r*(1.0/2+r*(1.0/6+r*(1.0/24+r*(1.0/120+r*(1.0/720))))))
	return p * math.Float32frombits(uint32(int32(n)+127)<<23)
}

// tanhf is a float32 tanh through expf: (1-e)/(1+e) with e = exp(-2|x|).
func tanhf(x float32) float32 {
	a := x
	if a < 0 {
		a = -a
	}
	if a > 9 {
		a = 1
	} else {
		e := expf(-2 * a)
		a = (1 - e) / (1 + e)
	}
	if x < 0 {
		return -a
	}
	return a
}
