// Package viz draws simdgpt's pictures as PNG images: heatmaps of attention
// probabilities (one head, or a grid of all the heads of a layer) and curves
// such as training and validation losses.
//
// Everything is rendered with gonum.org/v1/plot. Files are written
// atomically (a temporary file in the same directory, synced, then renamed),
// so a viewer that reloads an image while a program rewrites it never sees
// a partial file.
package viz

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"strings"
	"unicode"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// DPI is the resolution of every image this package renders.
const DPI = 96

// AttentionMap is one head's attention probabilities over a sequence of N
// tokens: Probs is N×N, row-major, row i the query at position i and
// column j the key at position j (a causal map is zero above the diagonal).
type AttentionMap struct {
	Title  string    // drawn above the map, e.g. "layer 0 head 2"
	N      int       // number of tokens
	Probs  []float32 // N*N probabilities, row = query, column = key
	Tokens []string  // N axis labels, one per token (see TokenLabel)
}

func (m AttentionMap) check(fn string) error {
	if m.N < 1 {
		return fmt.Errorf("viz.%s: %q: N = %d, want at least 1", fn, m.Title, m.N)
	}
	if len(m.Probs) != m.N*m.N {
		return fmt.Errorf("viz.%s: %q: len(Probs) = %d, want N*N = %d", fn, m.Title, len(m.Probs), m.N*m.N)
	}
	if len(m.Tokens) != m.N {
		return fmt.Errorf("viz.%s: %q: len(Tokens) = %d, want N = %d", fn, m.Title, len(m.Tokens), m.N)
	}
	for i, p := range m.Probs {
		if !(p >= 0 && p <= 1) { // also catches NaN
			return fmt.Errorf("viz.%s: %q: Probs[%d] = %v (query %d, key %d) is not a probability", fn, m.Title, i, p, i/m.N, i%m.N)
		}
	}
	return nil
}

// max returns the largest probability of the map.
func (m AttentionMap) max() float64 {
	v := 0.0
	for _, p := range m.Probs {
		v = math.Max(v, float64(p))
	}
	return v
}

// TokenLabel returns a printable axis label for one token: a space shows as
// "·" (a middle dot), a newline as "\n", a tab as "\t", another control or invisible
// character as its code point ("U+0007"), anything else as itself.
func TokenLabel(tok string) string {
	switch tok {
	case " ":
		return "·"
	case "\n":
		return `\n`
	case "\t":
		return `\t`
	case "\r":
		return `\r`
	}
	var b strings.Builder
	for _, r := range tok {
		if unicode.IsGraphic(r) && !unicode.IsSpace(r) {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, "U+%04X", r)
		}
	}
	return b.String()
}

// grid adapts an AttentionMap to plotter.GridXYZ: column c is key c, row r
// is query r, drawn with query 0 at the top.
type grid struct{ m AttentionMap }

func (g grid) Dims() (c, r int)      { return g.m.N, g.m.N }
func (g grid) Z(c, r int) float64    { return float64(g.m.Probs[r*g.m.N+c]) }
func (g grid) X(c int) float64       { return float64(c) }
func (g grid) Y(r int) float64       { return float64(g.m.N - 1 - r) }
func (g grid) Min() float64          { return 0 }
func (g grid) Max() float64          { return g.m.max() }
func (g grid) yOf(query int) float64 { return g.Y(query) }

// colorMap is the colour scale of every heatmap: black for 0 through red
// and yellow to white for the top of the range. Its luminance rises
// monotonically, so brighter always means more attention, in print and for
// colour-blind readers too.
func colorMap(max float64) palette.ColorMap {
	cm := moreland.ExtendedBlackBody()
	if max <= 0 {
		max = 1
	}
	cm.SetMin(0)
	cm.SetMax(max)
	return cm
}

// fontSize is the size of the token labels: small enough that 64 labels
// fit along a 12-point-per-cell axis.
const fontSize = vg.Length(8)

// cellSize is the side of one cell of a heatmap.
const cellSize = vg.Length(12)

// heatPlot builds the plot of one map with a colour range [0, max].
func heatPlot(m AttentionMap, max float64) *plot.Plot {
	p := plot.New()
	p.Title.Text = m.Title
	p.Title.TextStyle.Font.Size = 10
	// The colour scale ends in white; a grey backdrop outlines the
	// brightest cells.
	p.BackgroundColor = color.Gray{Y: 200}
	g := grid{m}
	hm := plotter.NewHeatMap(g, colorMap(max).Palette(256))
	hm.Min, hm.Max = 0, max
	if hm.Max <= 0 {
		hm.Max = 1
	}
	p.Add(hm)
	xt := make([]plot.Tick, m.N)
	yt := make([]plot.Tick, m.N)
	for i, tok := range m.Tokens {
		l := TokenLabel(tok)
		xt[i] = plot.Tick{Value: g.X(i), Label: l}
		yt[i] = plot.Tick{Value: g.yOf(i), Label: l}
	}
	p.X.Tick.Marker = plot.ConstantTicks(xt)
	p.Y.Tick.Marker = plot.ConstantTicks(yt)
	p.X.Tick.Label.Font.Size = fontSize
	p.Y.Tick.Label.Font.Size = fontSize
	p.X.Label.Text = "key"
	p.Y.Label.Text = "query"
	p.X.Label.TextStyle.Font.Size = 9
	p.Y.Label.TextStyle.Font.Size = 9
	// The heatmap skips a cell whose corner falls outside the data area;
	// a margin far below a pixel keeps rounding from dropping edge cells.
	const eps = 1e-6
	p.X.Min, p.X.Max = -0.5-eps, float64(m.N)-0.5+eps
	p.Y.Min, p.Y.Max = -0.5-eps, float64(m.N)-0.5+eps
	return p
}

// colorBarPlot is a vertical colour scale for [0, max].
func colorBarPlot(max float64) *plot.Plot {
	p := plot.New()
	p.BackgroundColor = color.Gray{Y: 200}
	p.Add(&plotter.ColorBar{ColorMap: colorMap(max), Vertical: true, Colors: 256})
	p.HideX()
	p.Y.Tick.Label.Font.Size = fontSize
	p.Y.Label.Text = "probability"
	p.Y.Label.TextStyle.Font.Size = 9
	return p
}

// mapSide is the side of the square area one heatmap gets: room for its
// cells plus the axes, never smaller than 3 inches.
func mapSide(n int) vg.Length {
	s := vg.Length(n)*cellSize + 60
	return max(s, 3*vg.Inch)
}

// AttentionImageBytes estimates the memory that drawing count maps of n
// tokens in a grid of cols columns takes (RenderAttention: count and cols
// 1): 32 bytes a pixel, measured (the image and the copy the drawing
// context makes of it, 4 bytes a pixel each, the PNG encoder's buffers,
// and the garbage collector's slack, which lets the heap grow to twice
// what is live). Its pixels grow as n², 12 points a cell.
func AttentionImageBytes(n, count, cols int) int64 {
	cols = max(1, min(cols, count))
	rows := (max(count, 1) + cols - 1) / cols
	side := float64(mapSide(n))
	w := (float64(cols)*side + float64(colorBarWidth)) * DPI / 72
	h := (float64(rows)*side + 24) * DPI / 72
	b := 32 * (math.Ceil(w) + 1) * (math.Ceil(h) + 1)
	if b >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(b)
}

// colorBarWidth is the width given to the colour scale beside the maps.
const colorBarWidth = vg.Length(70)

// layout is a rendered image together with where each cell's centre landed,
// for tests.
type layout struct {
	img     *image.RGBA
	centres []func(q, k int) image.Point // per map, in the order given
}

// RenderAttention draws one attention map with a colour scale from 0 to the
// map's largest probability.
func RenderAttention(m AttentionMap) (image.Image, error) {
	l, err := renderGrid("RenderAttention", "", []AttentionMap{m}, 1)
	if err != nil {
		return nil, err
	}
	return l.img, nil
}

// RenderAttentionGrid draws the maps (typically all heads of one layer) in
// a grid of cols columns under a common title, sharing one colour scale
// from 0 to the largest probability of any of them. All maps must have the
// same N.
func RenderAttentionGrid(title string, maps []AttentionMap, cols int) (image.Image, error) {
	l, err := renderGrid("RenderAttentionGrid", title, maps, cols)
	if err != nil {
		return nil, err
	}
	return l.img, nil
}

func renderGrid(fn, title string, maps []AttentionMap, cols int) (*layout, error) {
	if len(maps) == 0 {
		return nil, fmt.Errorf("viz.%s: no maps", fn)
	}
	if cols < 1 {
		return nil, fmt.Errorf("viz.%s: cols = %d, want at least 1", fn, cols)
	}
	top := 0.0
	for i, m := range maps {
		if err := m.check(fn); err != nil {
			return nil, err
		}
		if m.N != maps[0].N {
			return nil, fmt.Errorf("viz.%s: map %d has N = %d, map 0 has N = %d", fn, i, m.N, maps[0].N)
		}
		top = math.Max(top, m.max())
	}
	if top <= 0 {
		top = 1
	}
	cols = min(cols, len(maps))
	rows := (len(maps) + cols - 1) / cols
	side := mapSide(maps[0].N)
	titleH := vg.Length(0)
	if title != "" {
		titleH = 24
	}
	w := vg.Length(cols)*side + colorBarWidth
	h := vg.Length(rows)*side + titleH
	c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(DPI), vgimg.UseBackgroundColor(color.White))
	dc := draw.New(c)
	if title != "" {
		sty := draw.TextStyle{Color: color.Black, Font: font.From(plot.DefaultFont, 12),
			Handler: plot.DefaultTextHandler, XAlign: draw.XCenter, YAlign: draw.YTop}
		dc.FillText(sty, vg.Point{X: w / 2, Y: h - 4}, title)
	}
	mapsArea := draw.Crop(dc, 0, -colorBarWidth, 0, -titleH)
	plots := make([][]*plot.Plot, rows)
	for r := range plots {
		plots[r] = make([]*plot.Plot, cols)
		for k := range cols {
			if i := r*cols + k; i < len(maps) {
				plots[r][k] = heatPlot(maps[i], top)
			}
		}
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: 6, PadY: 6, PadTop: 4, PadBottom: 4, PadLeft: 4, PadRight: 4}
	canvases := plot.Align(plots, tiles, mapsArea)
	out := &layout{}
	pixH := float64(h) * DPI / 72
	for r := range plots {
		for k, p := range plots[r] {
			if p == nil {
				continue
			}
			p.Draw(canvases[r][k])
			data := p.DataCanvas(canvases[r][k])
			tx, ty := p.Transforms(&data)
			g := grid{maps[r*cols+k]}
			out.centres = append(out.centres, func(q, key int) image.Point {
				x := float64(tx(g.X(key))) * DPI / 72
				y := pixH - float64(ty(g.yOf(q)))*DPI/72
				return image.Point{X: int(math.Round(x)), Y: int(math.Round(y))}
			})
		}
	}
	bar := draw.Crop(dc, w-colorBarWidth, -10, 30, -titleH-30)
	colorBarPlot(top).Draw(bar)
	img, ok := c.Image().(*image.RGBA)
	if !ok {
		return nil, fmt.Errorf("viz.%s: unexpected image type %T", fn, c.Image())
	}
	out.img = img
	return out, nil
}
