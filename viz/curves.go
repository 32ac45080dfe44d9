package viz

import (
	"fmt"
	"image"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Curve is one named line of a chart: Y[i] at X[i].
type Curve struct {
	Name string
	X, Y []float64
}

// Chart describes a line chart of one or more curves.
type Chart struct {
	Title, XLabel, YLabel string
	Curves                []Curve
	Width, Height         vg.Length // zero means 6×4 inches
}

// Render draws the chart: one coloured, differently dashed line per curve,
// a legend with the curve names, labelled axes. Points whose Y is NaN or
// infinite are left out (a loss that has not been measured yet).
func (ch Chart) Render() (image.Image, error) {
	if len(ch.Curves) == 0 {
		return nil, fmt.Errorf("viz.Chart.Render: %q: no curves", ch.Title)
	}
	p := plot.New()
	p.Title.Text = ch.Title
	p.X.Label.Text = ch.XLabel
	p.Y.Label.Text = ch.YLabel
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	points := 0
	for i, c := range ch.Curves {
		if len(c.X) != len(c.Y) {
			return nil, fmt.Errorf("viz.Chart.Render: %q: curve %q has %d X values and %d Y values", ch.Title, c.Name, len(c.X), len(c.Y))
		}
		xy := make(plotter.XYs, 0, len(c.X))
		for k := range c.X {
			if math.IsNaN(c.Y[k]) || math.IsInf(c.Y[k], 0) || math.IsNaN(c.X[k]) || math.IsInf(c.X[k], 0) {
				continue
			}
			xy = append(xy, plotter.XY{X: c.X[k], Y: c.Y[k]})
		}
		points += len(xy)
		if len(xy) == 0 {
			continue
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, fmt.Errorf("viz.Chart.Render: %q: curve %q: %w", ch.Title, c.Name, err)
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(c.Name, l)
	}
	if points == 0 {
		return nil, fmt.Errorf("viz.Chart.Render: %q: no finite points", ch.Title)
	}
	w, h := ch.Width, ch.Height
	if w == 0 {
		w = 6 * vg.Inch
	}
	if h == 0 {
		h = 4 * vg.Inch
	}
	c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(DPI), vgimg.UseBackgroundColor(color.White))
	p.Draw(draw.New(c))
	return c.Image(), nil
}
