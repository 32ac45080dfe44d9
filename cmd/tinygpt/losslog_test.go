package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestLossLogUpdates: every evaluation rewrites loss.csv and loss.png, so a
// user can open either in the middle of a run and see the losses so far.
func TestLossLogUpdates(t *testing.T) {
	dir := t.TempDir()
	l := lossLog{dir: dir}
	var prev []byte
	for i, v := range []float64{3.2, 2.9, 2.5} {
		if err := l.add(i*100, v+0.1, v, 1e-3, 1000, float64(i)); err != nil {
			t.Fatal(err)
		}
		rows := readCSVFile(t, filepath.Join(dir, lossCSV))
		if len(rows) != i+2 {
			t.Fatalf("after %d evaluations loss.csv has %d rows, want %d", i+1, len(rows), i+2)
		}
		if rows[i+1][2] != fmtLoss(v) {
			t.Errorf("evaluation %d: loss.csv holds val loss %q, want %q", i, rows[i+1][2], fmtLoss(v))
		}
		img, err := os.ReadFile(filepath.Join(dir, lossPNG))
		if err != nil {
			t.Fatal(err)
		}
		if w, h := pngSize(t, filepath.Join(dir, lossPNG)); w == 0 || h == 0 {
			t.Fatalf("loss.png is %dx%d", w, h)
		}
		if bytes.Equal(img, prev) {
			t.Errorf("evaluation %d did not redraw loss.png", i)
		}
		prev = img
	}
}
