package attention

// ForwardFlops is the floating-point operations of one Layer.Forward (or
// Fused.Forward) of a layer of width c on b sequences of t positions,
// counting a multiply and an add as two and only the work the causal mask
// leaves: per sequence and head, t(t+1)/2 query-key pairs, each costing
// 2·D for its score and 2·D for its share of P·V, so the heads together
// cost
//
//	2·b·c·t(t+1)
//
// whatever their number. The caller's projections around the heads are
// not part of it (2·b·t·c·4c more for a transformer block's QKV and
// output projections), nor are the softmax and the online-softmax
// rescaling. It is the count benchmarks report GFLOP/s with (attention's
// own and kernelbench's).
func ForwardFlops(b, t, c int) float64 {
	B, T, C := float64(b), float64(t), float64(c)
	return 2 * B * C * T * (T + 1)
}

// BackwardFlops is the floating-point operations of one Backward after a
// Forward of the same sizes: the gradient of each operand of every
// matrix product of the forward pass costs as much as the product, so it
// is 2·ForwardFlops (the softmax backward is not counted).
func BackwardFlops(b, t, c int) float64 { return 2 * ForwardFlops(b, t, c) }
