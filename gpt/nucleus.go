package gpt

// SampleOptions shape the distribution GenerateWith draws each token from.
type SampleOptions struct {
	// Temperature divides the logits; 0 picks the most likely token.
	Temperature float64
	// TopK keeps the TopK most likely tokens only (<= 0: all).
	TopK int
	// TopP is nucleus sampling: of the tokens left by TopK, sorted by
	// probability, only the smallest prefix whose probabilities (at the
	// temperature, renormalised over the TopK kept) sum to at least TopP
	// is kept. It must be in [0, 1]; 0 and 1 keep every token.
	TopP float64
}

// nucleus returns how many of probs (unnormalised, in decreasing order,
// summing to sum) top-p keeps: the length of the smallest prefix whose sum
// reaches p·sum, at least 1; len(probs) when p is 0 or 1 (no cut) or the
// rounding of the running sum never reaches it.
func nucleus(probs []float64, sum, p float64) int {
	if p <= 0 || p >= 1 {
		return len(probs)
	}
	target := p * sum
	var acc float64
	for i, q := range probs {
		acc += q
		if acc >= target {
			return i + 1
		}
	}
	return len(probs)
}
