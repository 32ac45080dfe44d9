package heads

import (
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdgpt/simdgpt/gpt"
)

// tinyModel is a small model with weights large enough that attention is
// far from uniform.
func tinyModel(t *testing.T, heads int) *gpt.Model {
	t.Helper()
	m, err := gpt.New(gpt.Config{Vocab: 10, BlockSize: 8, Layers: 2, Heads: heads, Width: 8}, 1)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range m.Params {
		m.Params[i] = float32(r.NormFloat64())
	}
	return m
}

func tensor(t *testing.T, m *gpt.Model, name string) []float64 {
	t.Helper()
	for _, ts := range m.Config.Tensors() {
		if ts.Name == name {
			out := make([]float64, ts.Size())
			for i := range out {
				out[i] = float64(m.Params[ts.Offset+i])
			}
			return out
		}
	}
	t.Fatalf("no tensor %q", name)
	return nil
}

// layer0Probs recomputes the first layer's attention probabilities in
// float64 from the model's parameters: embeddings, LayerNorm, the Q and K
// parts of w_qkv, scores scaled by 1/sqrt(D), causal softmax.
func layer0Probs(t *testing.T, m *gpt.Model, tokens []int32) [][]float64 {
	c, h := m.Config.Width, max(m.Config.Heads, 1)
	d, n := c/h, len(tokens)
	wte, wpe := tensor(t, m, "wte"), tensor(t, m, "wpe")
	lw, lb := tensor(t, m, "h.0.ln1.w"), tensor(t, m, "h.0.ln1.b")
	w, b := tensor(t, m, "h.0.attn.w_qkv"), tensor(t, m, "h.0.attn.b_qkv")
	qkv := make([][]float64, n)
	for i, tok := range tokens {
		x := make([]float64, c)
		mean := 0.0
		for j := range c {
			x[j] = wte[int(tok)*c+j] + wpe[i*c+j]
			mean += x[j] / float64(c)
		}
		v := 0.0
		for j := range c {
			v += (x[j] - mean) * (x[j] - mean) / float64(c)
		}
		for j := range c {
			x[j] = (x[j]-mean)/math.Sqrt(v+1e-5)*lw[j] + lb[j]
		}
		qkv[i] = make([]float64, 3*c)
		for o := range 3 * c {
			s := b[o]
			for j := range c {
				s += x[j] * w[j*3*c+o]
			}
			qkv[i][o] = s
		}
	}
	probs := make([][]float64, h)
	for hd := range h {
		probs[hd] = make([]float64, n*n)
		for i := range n {
			row := probs[hd][i*n : i*n+n]
			top := math.Inf(-1)
			for j := 0; j <= i; j++ {
				s := 0.0
				for e := range d {
					s += qkv[i][hd*d+e] * qkv[j][c+hd*d+e]
				}
				row[j] = s / math.Sqrt(float64(d))
				top = math.Max(top, row[j])
			}
			sum := 0.0
			for j := 0; j <= i; j++ {
				row[j] = math.Exp(row[j] - top)
				sum += row[j]
			}
			for j := 0; j <= i; j++ {
				row[j] /= sum
			}
		}
	}
	return probs
}

func TestMapsFromTheModelsForward(t *testing.T) {
	for _, heads := range []int{1, 2, 4} {
		m := tinyModel(t, heads)
		tokens := []int32{3, 1, 4, 1, 5, 9, 2}
		labels := strings.Split("abcdefg", "")
		maps, err := Maps(m, tokens, labels)
		if err != nil {
			t.Fatal(err)
		}
		if len(maps) != 2 {
			t.Fatalf("heads=%d: %d layers of maps, want 2", heads, len(maps))
		}
		n := len(tokens)
		for l, layer := range maps {
			if len(layer) != heads {
				t.Fatalf("heads=%d: layer %d has %d maps", heads, l, len(layer))
			}
			for hd, mp := range layer {
				if mp.N != n || len(mp.Probs) != n*n || strings.Join(mp.Tokens, "") != "abcdefg" {
					t.Fatalf("heads=%d layer %d head %d: N=%d, %d probs, tokens %q", heads, l, hd, mp.N, len(mp.Probs), mp.Tokens)
				}
				for i := range n {
					sum := 0.0
					for j := range n {
						p := mp.Probs[i*n+j]
						if j > i && p != 0 {
							t.Errorf("heads=%d layer %d head %d: masked entry (%d,%d) = %v", heads, l, hd, i, j, p)
						}
						sum += float64(p)
					}
					if math.Abs(sum-1) > 1e-5 {
						t.Errorf("heads=%d layer %d head %d: row %d sums to %v", heads, l, hd, i, sum)
					}
				}
			}
		}
		want := layer0Probs(t, m, tokens)
		worst := 0.0
		for hd := range heads {
			for i, p := range maps[0][hd].Probs {
				worst = math.Max(worst, math.Abs(float64(p)-want[hd][i]))
			}
		}
		if worst > 1e-4 {
			t.Errorf("heads=%d: layer 0 maps differ from a float64 recomputation by up to %.2g", heads, worst)
		}
		// The maps are copies: another forward pass does not change them.
		before := maps[0][0].Probs[n+0]
		m.Forward([]int32{0, 0, 0, 0, 0, 0, 0}, nil, 1, n)
		if maps[0][0].Probs[n+0] != before {
			t.Errorf("heads=%d: maps alias the model's workspace", heads)
		}
	}
}

func TestMapsErrors(t *testing.T) {
	m := tinyModel(t, 2)
	for _, c := range []struct {
		name   string
		tokens []int32
		labels []string
		want   string
	}{
		{"empty", nil, nil, "empty prompt"},
		{"long", make([]int32, 9), make([]string, 9), "9 tokens is longer than the model's block size 8"},
		{"labels", []int32{1, 2}, []string{"a"}, "1 labels for 2 tokens"},
		{"vocab", []int32{1, 10}, []string{"a", "b"}, "token 10 at position 1 is outside the vocabulary of 10"},
	} {
		if _, err := Maps(m, c.tokens, c.labels); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func TestWrite(t *testing.T) {
	m := tinyModel(t, 4)
	maps, err := Maps(m, []int32{1, 2, 3, 4, 5}, []string{"h", "e", "l", "l", "o"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	paths, err := Write(dir, maps)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range paths {
		names = append(names, filepath.Base(p))
	}
	want := "layer0_head0.png layer0_head1.png layer0_head2.png layer0_head3.png layer0.png " +
		"layer1_head0.png layer1_head1.png layer1_head2.png layer1_head3.png layer1.png"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("wrote %s\nwant  %s", got, want)
	}
	size := func(p string) (int, int) {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cfg, err := png.DecodeConfig(f)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		return cfg.Width, cfg.Height
	}
	hw, hh := size(paths[0])
	gw, gh := size(paths[4])
	// A grid of 4 heads is 2×2 maps: about twice as wide and high as one.
	if gw < 2*hw-200 || gh < 2*hh-100 || gw > 2*hw+50 || gh > 2*hh+100 {
		t.Errorf("one head %dx%d, a 2x2 grid %dx%d", hw, hh, gw, gh)
	}
}
