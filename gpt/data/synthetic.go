package data

import "github.com/simdgpt/simdgpt/gpt/rng"

// The built-in task. Its 27 symbols each stand for three base-3 digits
// (d0, d1, d2). Symbol t is, with probability 1-SyntheticNoise, the symbol
// whose digit d0 is d0 of symbol t-2, d1 is d1 of symbol t-4 and d2 is d2
// of symbol t-8; otherwise it is uniformly random (so the stream never
// settles into a cycle).
//
// Predicting the next symbol thus needs three attention patterns at once,
// at distances 1, 3 and 7 from the last symbol seen. One head can look
// only one way per layer, and a second layer can reach only distances of
// the form d, k and k+d, which {1, 3, 7} is not; so a one-head model of two
// layers cannot find all three digits, while a model with several heads
// can read each digit with its own head. The best achievable loss is the
// entropy the noise leaves, SyntheticEntropy nats per symbol.
const (
	SyntheticSymbols = "abcdefghijklmnopqrstuvwxyz."
	SyntheticNoise   = 0.1
	// SyntheticEntropy is the entropy of the next symbol given the past
	// (nats): -(q ln q + 26 r ln r), r = noise/27, q = 1-noise+r.
	SyntheticEntropy = 0.6306
)

// syntheticOffsets are the distances of the symbols whose digits d0, d1, d2
// a symbol copies.
var syntheticOffsets = [3]int{2, 4, 8}

// Synthetic returns n symbols of the built-in task generated from seed.
func Synthetic(n int, seed uint64) string {
	r := rng.New(seed)
	syms := []byte(SyntheticSymbols)
	s := make([]int, n)
	out := make([]byte, n)
	pow := [3]int{9, 3, 1}
	for t := 0; t < n; t++ {
		if t < syntheticOffsets[2] || r.Float64() < SyntheticNoise {
			s[t] = r.Intn(27)
		} else {
			v := 0
			for k, off := range syntheticOffsets {
				v += (s[t-off] / pow[k] % 3) * pow[k]
			}
			s[t] = v
		}
		out[t] = syms[s[t]]
	}
	return string(out)
}
