package viz_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/simdgpt/simdgpt/viz"
)

// A causal attention map over three tokens: each query attends to itself
// and the tokens before it.
func ExampleRenderAttention() {
	m := viz.AttentionMap{
		Title:  "layer 0 head 0",
		N:      3,
		Tokens: []string{"a", " ", "b"},
		Probs: []float32{
			1, 0, 0,
			0.25, 0.75, 0,
			0.5, 0.25, 0.25,
		},
	}
	img, err := viz.RenderAttention(m)
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "viz")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := viz.WritePNG(filepath.Join(dir, "head0.png"), img); err != nil {
		log.Fatal(err)
	}
	fmt.Println(img.Bounds().Dx() > 0, viz.TokenLabel(" "))
	// Output: true ·
}

// Two loss curves on one chart.
func ExampleChart() {
	ch := viz.Chart{
		Title: "validation loss", XLabel: "step", YLabel: "loss",
		Curves: []viz.Curve{
			{Name: "1 head", X: []float64{0, 100, 200}, Y: []float64{4.2, 2.9, 2.6}},
			{Name: "4 heads", X: []float64{0, 100, 200}, Y: []float64{4.2, 2.5, 2.1}},
		},
	}
	img, err := ch.Render()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(img.Bounds().Dx(), img.Bounds().Dy())
	// Output: 576 384
}
