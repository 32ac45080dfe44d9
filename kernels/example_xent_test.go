package kernels_test

import (
	"fmt"

	"github.com/simdgpt/simdgpt/kernels"
)

func ExampleSoftmaxCrossEntropy() {
	// Two rows of logits over three classes, and their classes.
	logits := []float32{
		2, 1, 0,
		0, 0, 0,
	}
	targets := []int32{0, 2}
	losses := make([]float32, 2)
	// The gradient of the mean loss (scale 1/2), written over the logits.
	kernels.SoftmaxCrossEntropy(2, 3, logits, 3, targets, 0.5, logits, 3, losses)
	fmt.Printf("losses %.4f\n", losses)
	fmt.Printf("dlogits %.4f\n", logits)
	// Output:
	// losses [0.4076 1.0986]
	// dlogits [-0.1674 0.1224 0.0450 0.1667 0.1667 -0.3333]
}
