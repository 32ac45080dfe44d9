package viz

import (
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// causalMap returns an n×n causal map whose visible probabilities are all
// different: row i gives key j weight proportional to (i*n+j+1)^2.
func causalMap(title string, n int) AttentionMap {
	m := AttentionMap{Title: title, N: n, Probs: make([]float32, n*n), Tokens: make([]string, n)}
	for i := range n {
		m.Tokens[i] = string(rune('a' + i%26))
		sum := 0.0
		for j := 0; j <= i; j++ {
			sum += float64((j + 1) * (j + 1))
		}
		for j := 0; j <= i; j++ {
			m.Probs[i*n+j] = float32(float64((j+1)*(j+1)) / sum)
		}
	}
	return m
}

// luminance is the relative luminance Y of an sRGB colour, scaled to
// 0..65535: the gamma is undone before the channels are weighted, as the
// palette's monotonicity is in CIE lightness, a monotone function of Y.
func luminance(c color.Color) float64 {
	r, g, b, _ := c.RGBA()
	lin := func(v uint32) float64 {
		x := float64(v) / 65535
		if x <= 0.04045 {
			return x / 12.92
		}
		return math.Pow((x+0.055)/1.055, 2.4)
	}
	return 65535 * (0.2126*lin(r) + 0.7152*lin(g) + 0.0722*lin(b))
}

// distinctColours counts the colours of img, up to limit.
func distinctColours(img image.Image, limit int) int {
	seen := map[color.RGBA]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bb, a := img.At(x, y).RGBA()
			seen[color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(bb >> 8), uint8(a >> 8)}] = true
			if len(seen) >= limit {
				return len(seen)
			}
		}
	}
	return len(seen)
}

// sameColour reports whether two colours agree to within rounding of
// 8-bit channels.
func sameColour(a, b color.Color) bool {
	ar, ag, ab, _ := a.RGBA()
	br, bg, bb, _ := b.RGBA()
	d := func(x, y uint32) bool { return x-y+512 <= 1024 }
	return d(ar, br) && d(ag, bg) && d(ab, bb)
}

func TestTokenLabel(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a", "a"}, {" ", "·"}, {"\n", `\n`}, {"\t", `\t`}, {"\r", `\r`},
		{"é", "é"}, {"\x07", "U+0007"}, {"\u00a0", "U+00A0"}, {"ab", "ab"},
	} {
		if got := TokenLabel(c.in); got != c.want {
			t.Errorf("TokenLabel(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestAttentionPixelsOrdered checks that the rendered cells are as bright
// as the probabilities they draw are large: sorting the cells by
// probability sorts them by luminance, and the masked cells are the
// darkest of all.
func TestAttentionPixelsOrdered(t *testing.T) {
	for _, n := range []int{1, 5, 12} {
		m := causalMap("ordered", n)
		l, err := renderGrid("test", "", []AttentionMap{m}, 1)
		if err != nil {
			t.Fatal(err)
		}
		type cell struct{ p, lum float64 }
		var cells []cell
		pal := colorMap(m.max()).Palette(256).Colors()
		for q := range n {
			for k := range n {
				pt := l.centres[0](q, k)
				if !pt.In(l.img.Bounds()) {
					t.Fatalf("n=%d: centre of cell (%d,%d) at %v is outside the image %v", n, q, k, pt, l.img.Bounds())
				}
				p := float64(m.Probs[q*n+k])
				got := l.img.At(pt.X, pt.Y)
				want := pal[int(p/m.max()*255+0.5)]
				if !sameColour(got, want) {
					t.Errorf("n=%d: cell (query %d, key %d), probability %.4f, drawn %v, want palette colour %v", n, q, k, p, got, want)
				}
				cells = append(cells, cell{p, luminance(got)})
			}
		}
		sort.Slice(cells, func(i, j int) bool { return cells[i].p < cells[j].p })
		for i := 1; i < len(cells); i++ {
			a, b := cells[i-1], cells[i]
			// The palette has 256 steps over [0, max]; probabilities
			// closer than two steps may share a colour.
			if b.p-a.p > 2*m.max()/256 && !(b.lum > a.lum) {
				t.Errorf("n=%d: probability %.4f drawn with luminance %.0f, but smaller %.4f with %.0f", n, b.p, b.lum, a.p, a.lum)
			}
			if b.p-a.p <= 2*m.max()/256 && b.lum < a.lum-0.02*65535 {
				t.Errorf("n=%d: near-equal probabilities %.4f and %.4f drawn with luminance %.0f and %.0f", n, a.p, b.p, a.lum, b.lum)
			}
		}
		if n > 1 && cells[0].p != 0 {
			t.Fatalf("n=%d: expected masked cells", n)
		}
	}
}

func TestRenderAttentionSizeAndContent(t *testing.T) {
	for _, n := range []int{1, 8, 64} {
		img, err := RenderAttention(causalMap("head", n))
		if err != nil {
			t.Fatal(err)
		}
		side := mapSide(n)
		wantW := int(math.Round(float64(side+colorBarWidth) * DPI / 72))
		wantH := int(math.Round(float64(side) * DPI / 72))
		if b := img.Bounds(); abs(b.Dx()-wantW) > 1 || abs(b.Dy()-wantH) > 1 {
			t.Errorf("n=%d: image is %dx%d, want %dx%d", n, b.Dx(), b.Dy(), wantW, wantH)
		}
		if c := distinctColours(img, 40); c < 20 {
			t.Errorf("n=%d: image has only %d colours; looks blank", n, c)
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func TestRenderAttentionGridSharesScale(t *testing.T) {
	const n = 6
	a := causalMap("head 0", n)
	b := causalMap("head 1", n)
	// Head 1 attends only to the first token: its top probability (1) is
	// the shared maximum, so head 0's cells must be drawn no brighter
	// than they would be on a scale to 1.
	for i := range n {
		for j := range n {
			b.Probs[i*n+j] = 0
		}
		b.Probs[i*n] = 1
	}
	maps := []AttentionMap{a, b, a}
	l, err := renderGrid("test", "layer 0", maps, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.centres) != 3 {
		t.Fatalf("%d maps located, want 3", len(l.centres))
	}
	side := mapSide(n)
	wantW := int(math.Round(float64(2*side+colorBarWidth) * DPI / 72))
	wantH := int(math.Round(float64(2*side+24) * DPI / 72))
	if bb := l.img.Bounds(); abs(bb.Dx()-wantW) > 1 || abs(bb.Dy()-wantH) > 1 {
		t.Errorf("grid is %dx%d, want %dx%d", bb.Dx(), bb.Dy(), wantW, wantH)
	}
	// The same probability is the same colour in every map of the grid.
	at := func(mi, q, k int) color.Color { p := l.centres[mi](q, k); return l.img.At(p.X, p.Y) }
	if lum0, lum1 := luminance(at(0, 0, 0)), luminance(at(1, 0, 0)); lum0 != lum1 {
		t.Errorf("probability 1 drawn with luminance %.0f in map 0 and %.0f in map 1", lum0, lum1)
	}
	if lum0, lum2 := luminance(at(0, n-1, 2)), luminance(at(2, n-1, 2)); lum0 != lum2 {
		t.Errorf("the same map drawn differently in two tiles: %.0f vs %.0f", lum0, lum2)
	}
	// Every map's cells lie inside its own tile, and tiles do not overlap.
	for mi := range 3 {
		p0, p1 := l.centres[mi](0, 0), l.centres[mi](n-1, n-1)
		if !(p0.X < p1.X && p0.Y < p1.Y) {
			t.Errorf("map %d: query 0/key 0 at %v should be left of and above query %d/key %d at %v", mi, p0, n-1, n-1, p1)
		}
	}
	if l.centres[0](0, n-1).X >= l.centres[1](0, 0).X {
		t.Error("map 0 overlaps map 1")
	}
	if l.centres[0](n-1, 0).Y >= l.centres[2](0, 0).Y {
		t.Error("map 0 overlaps map 2")
	}
}

func TestRenderAttentionErrors(t *testing.T) {
	good := causalMap("h", 3)
	nan := causalMap("h", 3)
	nan.Probs[4] = float32(math.NaN())
	for _, c := range []struct {
		name string
		maps []AttentionMap
		cols int
		want string
	}{
		{"none", nil, 1, "no maps"},
		{"cols", []AttentionMap{good}, 0, "cols = 0"},
		{"N", []AttentionMap{{Title: "h", N: 0}}, 1, "N = 0"},
		{"probs", []AttentionMap{{Title: "h", N: 2, Probs: make([]float32, 3), Tokens: []string{"a", "b"}}}, 1, "len(Probs) = 3, want N*N = 4"},
		{"tokens", []AttentionMap{{Title: "h", N: 2, Probs: make([]float32, 4), Tokens: []string{"a"}}}, 1, "len(Tokens) = 1, want N = 2"},
		{"nan", []AttentionMap{nan}, 1, "Probs[4] = NaN (query 1, key 1)"},
		{"mixed N", []AttentionMap{good, causalMap("h", 4)}, 2, "map 1 has N = 4, map 0 has N = 3"},
	} {
		_, err := RenderAttentionGrid("t", c.maps, c.cols)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func TestChart(t *testing.T) {
	ch := Chart{Title: "loss", XLabel: "step", YLabel: "loss", Curves: []Curve{
		{Name: "1 head", X: []float64{0, 100, 200}, Y: []float64{4, 3, 2.5}},
		{Name: "4 heads", X: []float64{0, 100, 200}, Y: []float64{4, 2.5, math.NaN()}},
	}}
	img, err := ch.Render()
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 6*DPI || b.Dy() != 4*DPI {
		t.Errorf("chart is %dx%d, want %dx%d", b.Dx(), b.Dy(), 6*DPI, 4*DPI)
	}
	if c := distinctColours(img, 10); c < 5 {
		t.Errorf("chart has %d colours; looks blank", c)
	}
	for _, bad := range []Chart{
		{Title: "none"},
		{Title: "len", Curves: []Curve{{Name: "a", X: []float64{1, 2}, Y: []float64{1}}}},
		{Title: "nan", Curves: []Curve{{Name: "a", X: []float64{1}, Y: []float64{math.NaN()}}}},
	} {
		if _, err := bad.Render(); err == nil {
			t.Errorf("%s: no error", bad.Title)
		}
	}
}

func TestWritePNG(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "map.png")
	img, err := RenderAttention(causalMap("h", 4))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second write replaces the first
		if err := WritePNG(path, img); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if got.Bounds() != img.Bounds() {
		t.Errorf("decoded %v, wrote %v", got.Bounds(), img.Bounds())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("directory holds %d entries after two writes, want 1 (temporary files left?)", len(ents))
	}
	if err := WritePNG(filepath.Join(dir, "missing", "x.png"), img); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("write into a missing directory: %v", err)
	}
}
