package main

import (
	"bytes"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/simdgpt/simdgpt/gpt"
	"github.com/simdgpt/simdgpt/viz"
)

// Files compare writes into its directory, beside the runs' own.
const (
	compareCSV = "compare.csv"
	comparePNG = "compare.png"
)

func runCompare(args []string, stdout, stderr io.Writer) int {
	var f trainFlags
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	f.register(fs)
	// compare's own defaults: 4 heads, its own directory.
	for name, v := range map[string]string{"n_heads": "4", "checkpoint_dir": "compare"} {
		fl := fs.Lookup(name)
		fl.Value.Set(v)
		fl.DefValue = v
	}
	fs.Lookup("n_heads").Usage = "attention heads of the multi-head run (at least 2; the other run has 1)"
	fs.Lookup("checkpoint_dir").Usage = "`dir`ectory for compare.csv and compare.png; the runs go into its subdirectories 1head and <n>heads"
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `usage: tinygpt compare [train flags]

Trains the same model twice, on the same data and seed: once with a single
attention head and once with --n_heads heads (the same number of
parameters), each as 'tinygpt train' would into a subdirectory of
--checkpoint_dir. Then writes compare.png (both validation-loss curves)
and compare.csv (every evaluation of both runs) there, and prints both
final validation losses. On the built-in task the multi-head run ends
clearly lower. Ctrl-C or SIGTERM stops the run in progress as it stops
'tinygpt train' (its checkpoint saved, status 130 or 143).

flags:
`)
		fs.PrintDefaults()
	}
	if done, st := f.parse(fs, args, stdout, stderr); done {
		return st
	}
	switch {
	case f.heads < 2:
		return report(stderr, "compare", usageError{fmt.Sprintf("--n_heads %d: compare needs at least 2 (it compares with 1)", f.heads)})
	case f.resume:
		return report(stderr, "compare", usageError{"--resume: compare always trains both runs from the start"})
	}
	return finish(stderr, "compare", compare(f, stdout, stderr))
}

// compareRun is one of the two training runs of compare.
type compareRun struct {
	name string // "1 head", "4 heads"
	dir  string
	rows [][]string // its loss.csv, header dropped
}

func compare(f trainFlags, stdout, stderr io.Writer) error {
	if err := os.MkdirAll(f.dir, 0o755); err != nil {
		return err
	}
	runs := []*compareRun{
		{name: "1 head", dir: filepath.Join(f.dir, "1head")},
		{name: fmt.Sprintf("%d heads", f.heads), dir: filepath.Join(f.dir, fmt.Sprintf("%dheads", f.heads))},
	}
	for i, r := range runs {
		rf := f
		rf.dir = r.dir
		if i == 0 {
			rf.heads = 1
		}
		fmt.Fprintf(stdout, "== %s (%s)\n", r.name, r.dir)
		if err := train(rf, stdout, stderr); err != nil {
			return fmt.Errorf("%s run: %w", r.name, err)
		}
		rows, err := readCSV(filepath.Join(r.dir, lossCSV), math.MaxInt)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			return fmt.Errorf("%s run: %s holds no losses", r.name, filepath.Join(r.dir, lossCSV))
		}
		r.rows = rows
	}
	tab, err := compareTable(runs)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.WriteAll(tab)
	if err := gpt.WriteFileAtomic(filepath.Join(f.dir, compareCSV), b.Bytes()); err != nil {
		return err
	}
	ch := viz.Chart{Title: "TinyGPT validation loss: 1 head against " + runs[1].name + " (same parameters)",
		XLabel: "step", YLabel: "validation cross-entropy (nats)"}
	for _, r := range runs {
		var xs, ys []float64
		for _, row := range r.rows {
			s, _ := strconv.ParseFloat(row[0], 64)
			v, err := strconv.ParseFloat(row[2], 64)
			if err != nil {
				continue
			}
			xs, ys = append(xs, s), append(ys, v)
		}
		ch.Curves = append(ch.Curves, viz.Curve{Name: r.name, X: xs, Y: ys})
	}
	img, err := ch.Render()
	if err != nil {
		return fmt.Errorf("%s: %v", filepath.Join(f.dir, comparePNG), err)
	}
	if err := viz.WritePNG(filepath.Join(f.dir, comparePNG), img); err != nil {
		return err
	}
	last := func(r *compareRun) string { return r.rows[len(r.rows)-1][2] }
	v0, _ := strconv.ParseFloat(last(runs[0]), 64)
	v1, _ := strconv.ParseFloat(last(runs[1]), 64)
	fmt.Fprintf(stdout, "final validation loss: %s %s, %s %s (%+.4f); wrote %s and %s\n",
		runs[0].name, last(runs[0]), runs[1].name, last(runs[1]), v1-v0,
		filepath.Join(f.dir, compareCSV), filepath.Join(f.dir, comparePNG))
	return nil
}

// compareTable joins the two runs' loss logs on the step: a header (step,
// train_loss_1head, val_loss_1head, train_loss_<n>heads, val_loss_<n>heads),
// then a row per evaluation; an empty train loss is the evaluation before
// the first step. Logs that do not match are an error naming both files.
func compareTable(runs []*compareRun) ([][]string, error) {
	a, b := runs[0].rows, runs[1].rows
	fa, fb := filepath.Join(runs[0].dir, lossCSV), filepath.Join(runs[1].dir, lossCSV)
	if len(a) != len(b) {
		return nil, fmt.Errorf("%s and %s: the runs logged %d and %d evaluations", fa, fb, len(a), len(b))
	}
	n0, n1 := filepath.Base(runs[0].dir), filepath.Base(runs[1].dir)
	tab := [][]string{{"step", "train_loss_" + n0, "val_loss_" + n0, "train_loss_" + n1, "val_loss_" + n1}}
	for i := range a {
		if a[i][0] != b[i][0] {
			return nil, fmt.Errorf("%s and %s: evaluation %d: the runs logged steps %s and %s", fa, fb, i, a[i][0], b[i][0])
		}
		tab = append(tab, []string{a[i][0], a[i][1], a[i][2], b[i][1], b[i][2]})
	}
	return tab, nil
}
