package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/simdgpt/simdgpt/gpt"
	"github.com/simdgpt/simdgpt/gpt/data"
	"github.com/simdgpt/simdgpt/gpt/rng"
	"github.com/simdgpt/simdgpt/gpt/safetensors"
)

// Files of the check in the run's directory.
const (
	checkWeights = "check_init.safetensors" // gpt's checkpoint before the step
	checkExpect  = "check_gpt.safetensors"  // gpt's batch, gradients and parameters after it
	checkTorch   = "check_torch.safetensors"
)

// stepRecord is what one gpt training step did: its batch, the loss, the
// learning rate, the gradients (before clipping) and the parameters after
// the update.
type stepRecord struct {
	x, y   []int32
	loss   float64
	lr     float32
	grads  []float32
	params []float32
}

// recordStep runs one TrainStep of tr and records it. The batch is drawn
// again from a copy of the trainer's generator, as TrainStep draws it.
func recordStep(tr *gpt.Trainer) stepRecord {
	cfg := tr.Model.Config
	B, T := tr.Cfg.BatchSize, cfg.BlockSize
	r := stepRecord{x: make([]int32, B*T), y: make([]int32, B*T), lr: tr.Schedule().At(tr.Step())}
	data.Batch(rng.New(tr.RNG.State()), tr.Data.Train, B, T, r.x, r.y)
	r.loss = tr.TrainStep()
	r.grads = append([]float32(nil), tr.Model.Grads...)
	r.params = append([]float32(nil), tr.Model.Params...)
	return r
}

// encodeRecord returns the safetensors bytes train_gpt.py --check reads:
// batch.x and batch.y [B,T] (token ids as float32, exact below 2^24),
// grad.NAME and param.NAME for every tensor of cfg, and the loss and
// learning rate as metadata.
func encodeRecord(cfg gpt.Config, batch int, r stepRecord) ([]byte, error) {
	ids := func(v []int32) []float32 {
		f := make([]float32, len(v))
		for i, x := range v {
			f[i] = float32(x)
		}
		return f
	}
	ts := []safetensors.Tensor{
		{Name: "batch.x", Shape: []int{batch, cfg.BlockSize}, Data: ids(r.x)},
		{Name: "batch.y", Shape: []int{batch, cfg.BlockSize}, Data: ids(r.y)},
	}
	for _, t := range cfg.Tensors() {
		ts = append(ts,
			safetensors.Tensor{Name: "grad." + t.Name, Shape: t.Shape, Data: r.grads[t.Offset : t.Offset+t.Size()]},
			safetensors.Tensor{Name: "param." + t.Name, Shape: t.Shape, Data: r.params[t.Offset : t.Offset+t.Size()]})
	}
	meta := map[string]string{
		"loss": strconv.FormatFloat(r.loss, 'g', 17, 64),
		"lr":   f32String(r.lr),
	}
	return safetensors.Encode(ts, meta)
}

// checkResult is train_gpt.py --check's verdict and its report lines.
type checkResult struct {
	pass  bool
	lines []string
}

// runCheck runs one gpt step from a fresh model and the same step in
// PyTorch from gpt's checkpoint on gpt's batch, and returns the script's
// comparison. Its files go into dir.
func runCheck(ctx context.Context, o options, python, script string, d *data.Dataset, dir string, stderr io.Writer) (checkResult, error) {
	args, err := prepareCheck(o, script, d, dir)
	if err != nil {
		return checkResult{}, err
	}
	return execCheck(ctx, python, args, torchEnv(o.ompWait), checkDeadline(o), stderr)
}

// checkDeadline is how long train_gpt.py --check may take: a script's
// start (deadlines.ready) and a reply's with the work of the step
// (workDeadline), and the parameters read and written (readDeadline) three
// times.
func checkDeadline(o options) time.Duration {
	read := readDeadline(3 * 4 * float64(o.cfg.NumParams()))
	return deadlines.ready + read + workDeadline(deadlines.reply, stepFlops(o.cfg, o.batch))
}

// prepareCheck runs and records one gpt step from a fresh model, writes
// the checkpoint before it and the record into dir, and returns the
// script's arguments to check it (the record is dir/checkExpect).
func prepareCheck(o options, script string, d *data.Dataset, dir string) ([]string, error) {
	tr, weights, err := newRun(o.cfg, d, o.batch, 1, o.lr, o.seed, o.precision, dir, checkWeights)
	if err != nil {
		return nil, err
	}
	rec := recordStep(tr)
	b, err := encodeRecord(o.cfg, o.batch, rec)
	if err != nil {
		return nil, err
	}
	expect := filepath.Join(dir, checkExpect)
	if err := os.WriteFile(expect, b, 0o644); err != nil {
		return nil, err
	}
	args := append([]string{script}, scriptArgs(o.cfg, tr.Cfg, weights, filepath.Join(dir, tokensFile))...)
	// PyTorch checks in float32; a bf16 step of ours is held to gpt's
	// bf16 bounds against it.
	return append(args, "--check", expect, "--out", filepath.Join(dir, checkTorch), "--tolerance", torchPrecision(o.precision)), nil
}

// execCheck runs python with args (train_gpt.py --check) and returns its
// verdict; an error means the script failed otherwise than by reporting a
// disagreement. The script's process group is killed when ctx is done,
// and after d, when execCheck returns a timeoutError.
func execCheck(ctx context.Context, python string, args, env []string, d time.Duration, stderr io.Writer) (checkResult, error) {
	cctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	cmd := exec.CommandContext(cctx, python, args...)
	cmd.Env = env
	ownGroup(cmd)
	cmd.WaitDelay = waitDelay
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = stderr
	err := cmd.Run()
	if err != nil && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
		return checkResult{}, timeoutError{"train_gpt.py --check's verdict", d}
	}
	res := parseCheck(out.String())
	if _, isExit := err.(*exec.ExitError); err != nil && (!isExit || len(res.lines) == 0) {
		return res, fmt.Errorf("train_gpt.py --check: %v\n%s", err, out.String())
	}
	if res.pass != (err == nil) {
		return res, fmt.Errorf("train_gpt.py --check: exit status %v disagrees with its report:\n%s", err, out.String())
	}
	return res, nil
}

// parseCheck collects the script's "check ..." lines; it passed when the
// last is "check PASS".
func parseCheck(out string) checkResult {
	var r checkResult
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "check ") {
			r.lines = append(r.lines, l)
		}
	}
	r.pass = len(r.lines) > 0 && r.lines[len(r.lines)-1] == "check PASS"
	return r
}

// torchPrecision is train_gpt.py's name of precision p.
func torchPrecision(p gpt.Precision) string {
	if p == gpt.PrecisionBF16 {
		return "bf16"
	}
	return "fp32"
}
