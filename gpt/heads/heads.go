// Package heads shows what the attention heads of a TinyGPT look at: it
// runs the model's own forward pass over a prompt, collects every head's
// attention probabilities and draws them as heatmaps (package viz).
package heads

import (
	"context"
	"fmt"
	"math"
	"path/filepath"

	"github.com/simdgpt/simdgpt/gpt"
	"github.com/simdgpt/simdgpt/viz"
)

// Maps runs m over one sequence of tokens and returns the attention
// probabilities of every head of every layer, indexed [layer][head], each
// a len(tokens)×len(tokens) map (row = query, column = key) labelled with
// labels (one per token, e.g. the token's characters). The sequence must
// fit the model's block size.
func Maps(m *gpt.Model, tokens []int32, labels []string) ([][]viz.AttentionMap, error) {
	t := len(tokens)
	switch {
	case t == 0:
		return nil, fmt.Errorf("heads.Maps: empty prompt")
	case t > m.Config.BlockSize:
		return nil, fmt.Errorf("heads.Maps: prompt of %d tokens is longer than the model's block size %d", t, m.Config.BlockSize)
	case len(labels) != t:
		return nil, fmt.Errorf("heads.Maps: %d labels for %d tokens", len(labels), t)
	}
	for i, tok := range tokens {
		if tok < 0 || int(tok) >= m.Config.Vocab {
			return nil, fmt.Errorf("heads.Maps: token %d at position %d is outside the vocabulary of %d", tok, i, m.Config.Vocab)
		}
	}
	m.Forward(tokens, nil, 1, t)
	layers := m.AttentionLayers()
	out := make([][]viz.AttentionMap, len(layers))
	for l, layer := range layers {
		h := layer.Heads()
		probs := layer.Probs()
		if len(probs) != h*t*t {
			return nil, fmt.Errorf("heads.Maps: layer %d holds %d probabilities, want H*T*T = %d*%d*%d", l, len(probs), h, t, t)
		}
		out[l] = make([]viz.AttentionMap, h)
		for hd := range h {
			p := make([]float32, t*t)
			copy(p, probs[hd*t*t:(hd+1)*t*t])
			out[l][hd] = viz.AttentionMap{
				Title:  fmt.Sprintf("layer %d head %d", l, hd),
				N:      t,
				Probs:  p,
				Tokens: append([]string(nil), labels...),
			}
		}
	}
	return out, nil
}

// WriteBytes estimates the memory Write takes for the maps of layers
// layers of heads heads over n tokens: the largest image it draws at a
// time (one head's, or the grid of a layer's heads).
func WriteBytes(layers, heads, n int) int64 {
	if layers < 1 || heads < 1 {
		return 0
	}
	cols := int(math.Ceil(math.Sqrt(float64(heads))))
	return max(viz.AttentionImageBytes(n, 1, 1), viz.AttentionImageBytes(n, heads, cols))
}

// Write draws maps (as returned by Maps) into dir: one image per head,
// layer<L>_head<H>.png, and one grid of all the heads of a layer,
// layer<L>.png, on a common colour scale. It returns the paths written, in
// order. Existing files of those names are replaced atomically.
func Write(dir string, maps [][]viz.AttentionMap) ([]string, error) {
	return WriteContext(context.Background(), dir, maps)
}

// WriteContext is Write that checks ctx before each image: once ctx is
// done it returns the paths written so far (each file complete) and ctx's
// error.
func WriteContext(ctx context.Context, dir string, maps [][]viz.AttentionMap) ([]string, error) {
	var paths []string
	for l, layer := range maps {
		for h, m := range layer {
			if err := ctx.Err(); err != nil {
				return paths, err
			}
			img, err := viz.RenderAttention(m)
			if err != nil {
				return paths, err
			}
			path := filepath.Join(dir, fmt.Sprintf("layer%d_head%d.png", l, h))
			if err := viz.WritePNG(path, img); err != nil {
				return paths, err
			}
			paths = append(paths, path)
		}
		if err := ctx.Err(); err != nil {
			return paths, err
		}
		cols := int(math.Ceil(math.Sqrt(float64(len(layer)))))
		img, err := viz.RenderAttentionGrid(fmt.Sprintf("layer %d: %d heads", l, len(layer)), layer, cols)
		if err != nil {
			return paths, err
		}
		path := filepath.Join(dir, fmt.Sprintf("layer%d.png", l))
		if err := viz.WritePNG(path, img); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}
