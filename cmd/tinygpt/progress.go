package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// progress shows training progress: on a terminal a bar redrawn in place
// (at most ten times a second) with evaluation results printed above it;
// elsewhere one plain line per evaluation.
type progress struct {
	w        io.Writer
	term     bool
	last     time.Time
	drawn    bool
	lastVal  float64
	barWidth int
}

func newProgress(w io.Writer, term bool) *progress {
	return &progress{w: w, term: term, lastVal: math.NaN(), barWidth: 24}
}

func fmtDur(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return d.Round(time.Second).String()
}

// tick reports a training step.
func (p *progress) tick(step, total int, loss, tps float64, eta time.Duration) {
	if !p.term || time.Since(p.last) < 100*time.Millisecond && step < total {
		return
	}
	p.last = time.Now()
	filled := p.barWidth * step / max(total, 1)
	bar := strings.Repeat("=", filled) + strings.Repeat(" ", p.barWidth-filled)
	val := "-"
	if !math.IsNaN(p.lastVal) {
		val = fmt.Sprintf("%.4f", p.lastVal)
	}
	fmt.Fprintf(p.w, "\r[%s] step %d/%d  loss %.4f  val %s  %.0f tok/s  ETA %s\x1b[K", bar, step, total, loss, val, tps, fmtDur(eta))
	p.drawn = true
}

// event reports an evaluation: a permanent line.
func (p *progress) event(step, total int, train, val, tps float64, eta time.Duration) {
	p.lastVal = val
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
	tr := "-"
	if !math.IsNaN(train) {
		tr = fmt.Sprintf("%.4f", train)
	}
	fmt.Fprintf(p.w, "step %d/%d: train loss %s, val loss %.4f, %.0f tokens/s, ETA %s\n", step, total, tr, val, tps, fmtDur(eta))
}

// done ends the bar's line.
func (p *progress) done() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
}
