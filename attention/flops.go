package attention

// ForwardFlops is the floating-point operations of one Layer.Forward (or
// Fused.Forward) of a layer of width c on b sequences of t positions,
// counting a multiply and an add as two and only the work the causal mask
// leaves: per sequence and head, t(t+1)/2 query-key pairs, each costing
// 2·D for its score and 2·D for its share of P·V, so the heads together
// cost 2·c·t(t+1) whatever their number:
//
//	qkv projection   2·b·t·c·3c
//	scores and P·V   2·b·c·t(t+1)
//	out projection   2·b·t·c·c
//	total            8·b·t·c² + 2·b·c·t(t+1)
//
// Softmax, biases and the online-softmax rescaling are not counted. It is
// the count benchmarks report GFLOP/s with (attention's own and
// kernelbench's).
func ForwardFlops(b, t, c int) float64 {
	B, T, C := float64(b), float64(t), float64(c)
	return 8*B*T*C*C + 2*B*C*T*(T+1)
}

// BackwardFlops is the floating-point operations of one Backward after a
// Forward of the same sizes: the gradient of each operand of every
// matrix product of the forward pass costs as much as the product, so it
// is 2·ForwardFlops (softmax backward and bias sums are not counted).
func BackwardFlops(b, t, c int) float64 { return 2 * ForwardFlops(b, t, c) }
