package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/simdgpt/simdgpt/gpt"
	"github.com/simdgpt/simdgpt/gpt/data"
	"github.com/simdgpt/simdgpt/viz"
)

// Files the training run writes in its checkpoint directory.
const (
	lossCSV = "loss.csv"
	lossPNG = "loss.png"
)

// builtinSymbols is the size of the built-in task's corpus (generated from
// a fixed seed, so every run trains and validates on the same text).
const (
	builtinSymbols = 200000
	builtinSeed    = 1
)

type trainFlags struct {
	data                           string
	epochs                         float64
	batch, dModel, heads, layers   int
	lr                             float64
	dir                            string
	block, maxIters                int
	evalInterval, evalIters, every int
	seed                           uint64
	threads                        int
	resume, force                  bool
	set                            map[string]bool // flags given on the command line
}

func runTrain(args []string, stdout, stderr io.Writer) int {
	var f trainFlags
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `usage: tinygpt train [flags]

Trains a GPT and writes checkpoint.safetensors, loss.csv and loss.png into
--checkpoint_dir (all rewritten atomically as training goes). Ctrl-C or
SIGTERM saves a checkpoint before exiting; --resume continues it exactly.

flags:
`)
		fs.PrintDefaults()
	}
	if done, st := f.parse(fs, args, stdout, stderr); done {
		return st
	}
	return finish(stderr, "train", train(f, stdout))
}

// parse parses and validates the training flags of fs (see parseFlags for
// the results).
func (f *trainFlags) parse(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (bool, int) {
	if done, st := parseFlags(fs, args, stdout, stderr); done {
		return true, st
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	if err := f.validate(); err != nil {
		return true, report(stderr, fs.Name(), err)
	}
	return false, 0
}

// finish returns the exit status of a training command that ended with
// err: 0, 130 when interrupted, else what report gives.
func finish(stderr io.Writer, cmd string, err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errInterrupted):
		return 130
	}
	return report(stderr, cmd, err)
}

// register defines the training flags on fs (shared by train and compare).
func (f *trainFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.data, "data", "", "training `file`: UTF-8 text (character level), or uint16 token ids (llm.c's format, recognised by its magic number, or raw with extension .bin/.tok); empty: the built-in task")
	fs.Float64Var(&f.epochs, "epochs", 0, "passes over the training tokens (sets --max_iters to epochs × tokens / (batch_size × block_size)); 0: use --max_iters")
	fs.IntVar(&f.batch, "batch_size", 16, "sequences per step")
	fs.IntVar(&f.dModel, "d_model", 64, "model width (a multiple of --n_heads)")
	fs.IntVar(&f.heads, "n_heads", 1, "attention heads per layer (1: the single-head path)")
	fs.IntVar(&f.layers, "n_layers", 2, "transformer blocks")
	fs.Float64Var(&f.lr, "lr", 3e-3, "peak learning rate (warm-up, then cosine decay to lr/10)")
	fs.StringVar(&f.dir, "checkpoint_dir", "checkpoints", "`dir`ectory for the checkpoint, loss.csv and loss.png")
	fs.IntVar(&f.block, "block_size", 32, "context length in tokens")
	fs.IntVar(&f.maxIters, "max_iters", 3000, "optimizer steps")
	fs.IntVar(&f.evalInterval, "eval_interval", 100, "evaluate (and log) every this many steps")
	fs.IntVar(&f.evalIters, "eval_iters", 20, "batches per evaluation")
	fs.IntVar(&f.every, "checkpoint_every", 500, "save a checkpoint every this many steps (0: only at the end and on Ctrl-C)")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed (initialisation and batches)")
	fs.IntVar(&f.threads, "threads", 0, "threads (GOMAXPROCS); 0: all CPUs")
	fs.BoolVar(&f.resume, "resume", false, "continue the run saved in --checkpoint_dir exactly where it stopped")
	fs.BoolVar(&f.force, "force", false, "replace an existing checkpoint in --checkpoint_dir")
}

var errInterrupted = errors.New("interrupted")

func (f *trainFlags) validate() error {
	pos := []struct {
		name string
		v    int
	}{{"batch_size", f.batch}, {"d_model", f.dModel}, {"n_heads", f.heads}, {"n_layers", f.layers},
		{"block_size", f.block}, {"max_iters", f.maxIters}, {"eval_interval", f.evalInterval}, {"eval_iters", f.evalIters}}
	for _, p := range pos {
		if p.v < 1 {
			return usageError{fmt.Sprintf("--%s %d must be at least 1", p.name, p.v)}
		}
	}
	switch {
	case f.dModel%f.heads != 0:
		return usageError{fmt.Sprintf("--d_model %d is not a multiple of --n_heads %d", f.dModel, f.heads)}
	case !(f.lr > 0) || math.IsInf(f.lr, 0):
		return usageError{fmt.Sprintf("--lr %g must be positive", f.lr)}
	case f.epochs < 0 || math.IsNaN(f.epochs):
		return usageError{fmt.Sprintf("--epochs %g must be >= 0", f.epochs)}
	case f.epochs > 0 && f.set["max_iters"]:
		return usageError{"give --epochs or --max_iters, not both"}
	case f.every < 0:
		return usageError{fmt.Sprintf("--checkpoint_every %d must be >= 0", f.every)}
	case f.threads < 0:
		return usageError{fmt.Sprintf("--threads %d must be >= 0", f.threads)}
	case f.resume && f.force:
		return usageError{"--resume and --force contradict each other"}
	}
	return nil
}

// loadData reads --data, or generates the built-in task for "".
func loadData(path string, block int) (*data.Dataset, error) {
	if path == "" {
		return data.FromText(data.Synthetic(builtinSymbols, builtinSeed), block)
	}
	return data.Load(path, block)
}

func describe(cfg gpt.Config) string {
	plural := func(n int, what string) string {
		if n == 1 {
			return fmt.Sprintf("1 %s", what)
		}
		return fmt.Sprintf("%d %ss", n, what)
	}
	return fmt.Sprintf("%s, %s, width %d, block %d, vocabulary %d", plural(cfg.Layers, "layer"), plural(cfg.Heads, "head"), cfg.Width, cfg.BlockSize, cfg.Vocab)
}

// setup returns the trainer of a new or resumed run, and the loss log rows
// to continue from.
func setup(f trainFlags, ckPath string, out io.Writer) (*gpt.Trainer, *data.Dataset, [][]string, error) {
	existing, statErr := os.Stat(ckPath)
	if f.resume {
		if statErr != nil {
			return nil, nil, nil, fmt.Errorf("--resume: no checkpoint to resume: %v", statErr)
		}
		ck, err := gpt.Load(ckPath)
		if err != nil {
			return nil, nil, nil, err
		}
		if ck.Opt == nil {
			return nil, nil, nil, fmt.Errorf("%s has no optimizer state to resume from", ckPath)
		}
		cfg := ck.Model.Config
		for _, c := range []struct {
			name     string
			flag, ck any
		}{
			{"d_model", f.dModel, cfg.Width}, {"n_heads", f.heads, cfg.Heads}, {"n_layers", f.layers, cfg.Layers},
			{"block_size", f.block, cfg.BlockSize}, {"batch_size", f.batch, ck.Train.BatchSize},
			{"lr", float32(f.lr), ck.Train.LR}, {"seed", f.seed, ck.Train.Seed}, {"data", f.data, ck.Train.Data},
		} {
			if f.set[c.name] && fmt.Sprint(c.flag) != fmt.Sprint(c.ck) {
				return nil, nil, nil, usageError{fmt.Sprintf("--%s %v differs from the checkpoint's %v (a resumed run keeps its settings)", c.name, c.flag, c.ck)}
			}
		}
		d, err := loadData(ck.Train.Data, cfg.BlockSize)
		if err != nil {
			return nil, nil, nil, err
		}
		if (ck.Vocab == nil) != (d.Vocab == nil) || (d.Vocab != nil && d.Vocab.String() != ck.Vocab.String()) || d.VocabSize > cfg.Vocab {
			return nil, nil, nil, fmt.Errorf("the data %q no longer has the vocabulary the checkpoint was trained with", ck.Train.Data)
		}
		tr, err := ck.Resume(d)
		if err != nil {
			return nil, nil, nil, err
		}
		if f.set["max_iters"] || f.epochs > 0 {
			tr.Cfg.MaxIters = itersFor(f, d)
		}
		rows, _ := readCSV(filepath.Join(f.dir, lossCSV), ck.Step)
		fmt.Fprintf(out, "resuming %s at step %d of %d (%s)\n", ckPath, ck.Step, tr.Cfg.MaxIters, describe(cfg))
		return tr, d, rows, nil
	}
	if statErr == nil && !f.force {
		what := "a checkpoint"
		if ck, err := gpt.Load(ckPath); err == nil {
			what = fmt.Sprintf("a checkpoint at step %d (%s)", ck.Step, describe(ck.Model.Config))
		} else {
			what = "an unreadable checkpoint"
		}
		return nil, nil, nil, fmt.Errorf("%s already holds %s (%s); pass --resume to continue it or --force to replace it", f.dir, what, existing.ModTime().Format(time.DateTime))
	}
	d, err := loadData(f.data, f.block)
	if err != nil {
		return nil, nil, nil, err
	}
	cfg := gpt.Config{Vocab: d.VocabSize, BlockSize: f.block, Layers: f.layers, Heads: f.heads, Width: f.dModel}
	m, err := gpt.New(cfg, f.seed)
	if err != nil {
		return nil, nil, nil, err
	}
	tc := gpt.DefaultTrainConfig(f.batch, itersFor(f, d), float32(f.lr), f.seed)
	tc.Data = f.data
	if f.data != "" {
		if abs, err := filepath.Abs(f.data); err == nil {
			tc.Data = abs
		}
	}
	tr, err := gpt.NewTrainer(m, d, tc)
	if err != nil {
		return nil, nil, nil, err
	}
	src := f.data
	if src == "" {
		src = "the built-in task"
	}
	fmt.Fprintf(out, "training on %s: %d training and %d validation tokens; %s, %d parameters; %d steps of %d×%d tokens\n",
		src, len(d.Train), len(d.Val), describe(cfg), cfg.NumParams(), tc.MaxIters, tc.BatchSize, cfg.BlockSize)
	return tr, d, nil, nil
}

func itersFor(f trainFlags, d *data.Dataset) int {
	if f.epochs > 0 {
		return max(1, int(math.Ceil(f.epochs*float64(len(d.Train))/float64(f.batch*f.block))))
	}
	return f.maxIters
}

func train(f trainFlags, stdout io.Writer) error {
	if f.threads > 0 {
		runtime.GOMAXPROCS(f.threads)
	}
	if err := os.MkdirAll(f.dir, 0o755); err != nil {
		return err
	}
	ckPath := filepath.Join(f.dir, gpt.CheckpointFile)
	tr, d, rows, err := setup(f, ckPath, stdout)
	if err != nil {
		return err
	}
	var stop atomic.Bool
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	go func() {
		if _, ok := <-sig; ok {
			stop.Store(true)
		}
	}()
	defer close(sig)

	p := newProgress(stdout, isTerminal(stdout))
	log := lossLog{dir: f.dir, rows: rows}
	save := func() error {
		if err := tr.Save(ckPath, d.Vocab); err != nil {
			return fmt.Errorf("saving checkpoint: %v", err)
		}
		return nil
	}
	total := tr.Cfg.MaxIters
	tokensPerStep := tr.Cfg.BatchSize * tr.Model.Config.BlockSize
	start := time.Now()
	startStep := tr.Step()
	var trainTime time.Duration
	var sumLoss float64
	var nLoss int
	evaluate := func() error {
		val := tr.Eval(d.Val, f.evalIters)
		train := math.NaN()
		if nLoss > 0 {
			train = sumLoss / float64(nLoss)
		}
		sumLoss, nLoss = 0, 0
		tps := 0.0
		if trainTime > 0 {
			tps = float64((tr.Step()-startStep)*tokensPerStep) / trainTime.Seconds()
		}
		p.event(tr.Step(), total, train, val, tps, eta(start, startStep, tr.Step(), total))
		return log.add(tr.Step(), train, val, float64(tr.Schedule().At(max(tr.Step()-1, 0))), tps, time.Since(start).Seconds())
	}
	if tr.Step() == 0 {
		if err := evaluate(); err != nil {
			return err
		}
	}
	for tr.Step() < total {
		if stop.Load() {
			p.done()
			if err := save(); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "interrupted at step %d of %d: checkpoint saved to %s; continue with: tinygpt train --checkpoint_dir %s --resume\n", tr.Step(), total, ckPath, f.dir)
			return errInterrupted
		}
		t0 := time.Now()
		loss := tr.TrainStep()
		trainTime += time.Since(t0)
		if math.IsNaN(loss) || math.IsInf(loss, 0) {
			return fmt.Errorf("step %d: the loss is %v; try a lower --lr", tr.Step(), loss)
		}
		sumLoss += loss
		nLoss++
		step := tr.Step()
		p.tick(step, total, loss, float64((step-startStep)*tokensPerStep)/trainTime.Seconds(), eta(start, startStep, step, total))
		if step%f.evalInterval == 0 || step == total {
			if err := evaluate(); err != nil {
				return err
			}
		}
		if f.every > 0 && step%f.every == 0 && step < total {
			if err := save(); err != nil {
				return err
			}
		}
	}
	p.done()
	if err := save(); err != nil {
		return err
	}
	last := log.rows[len(log.rows)-1]
	fmt.Fprintf(stdout, "done: %d steps in %s, validation loss %s; wrote %s, %s and %s\nsample with: tinygpt sample --checkpoint %s\n",
		total, time.Since(start).Round(time.Second), last[2], ckPath, filepath.Join(f.dir, lossCSV), filepath.Join(f.dir, lossPNG), f.dir)
	return nil
}

func eta(start time.Time, from, step, total int) time.Duration {
	if step <= from {
		return 0
	}
	per := time.Since(start) / time.Duration(step-from)
	return per * time.Duration(total-step)
}

// lossLog keeps the loss table and rewrites loss.csv and loss.png
// atomically after every evaluation, so either can be opened mid-run.
type lossLog struct {
	dir  string
	rows [][]string
}

var csvHeader = []string{"step", "train_loss", "val_loss", "lr", "tokens_per_s", "elapsed_s"}

func (l *lossLog) add(step int, train, val, lr, tps, elapsed float64) error {
	l.rows = append(l.rows, []string{strconv.Itoa(step), fmtLoss(train), fmtLoss(val),
		strconv.FormatFloat(lr, 'g', 6, 64), strconv.FormatFloat(tps, 'f', 0, 64), strconv.FormatFloat(elapsed, 'f', 1, 64)})
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(csvHeader)
	w.WriteAll(l.rows)
	if err := gpt.WriteFileAtomic(filepath.Join(l.dir, lossCSV), b.Bytes()); err != nil {
		return err
	}
	var tx, ty, vx, vy []float64
	num := func(s string) float64 { // "" (not measured) is NaN, which the chart leaves out
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return math.NaN()
		}
		return v
	}
	for _, r := range l.rows {
		s := num(r[0])
		tx, ty, vx, vy = append(tx, s), append(ty, num(r[1])), append(vx, s), append(vy, num(r[2]))
	}
	img, err := viz.Chart{Title: "TinyGPT loss", XLabel: "step", YLabel: "cross-entropy (nats)",
		Curves: []viz.Curve{{Name: "train", X: tx, Y: ty}, {Name: "validation", X: vx, Y: vy}}}.Render()
	if err != nil {
		return err
	}
	return viz.WritePNG(filepath.Join(l.dir, lossPNG), img)
}

func fmtLoss(x float64) string {
	if math.IsNaN(x) {
		return ""
	}
	return strconv.FormatFloat(x, 'f', 4, 64)
}

// readCSV returns the rows of an existing loss log up to step (to continue
// it on resume); a missing or unreadable log starts afresh.
func readCSV(path string, upTo int) ([][]string, error) {
	fh, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	defer fh.Close()
	all, err := csv.NewReader(fh).ReadAll()
	if err != nil || len(all) == 0 {
		return nil, err
	}
	var rows [][]string
	for _, r := range all[1:] {
		if s, err := strconv.Atoi(r[0]); err == nil && s <= upTo && len(r) == len(csvHeader) {
			rows = append(rows, r)
		}
	}
	return rows, nil
}
