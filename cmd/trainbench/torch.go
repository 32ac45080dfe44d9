package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/simdgpt/simdgpt/gpt"
)

// torchVersion returns torch's version as python imports it, or an error
// when python is missing or cannot import torch (or ctx is done first).
// A python that is not an executable file is refused before any process
// is started.
func torchVersion(ctx context.Context, python string) (string, error) {
	if _, err := exec.LookPath(python); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, python, "-c", "import torch; print(torch.__version__)").Output()
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// scriptArgs are train_gpt.py's arguments for the model, the run's
// settings, the initial weights and the training tokens (float32 settings
// printed with 9 significant digits, which the script rounds back to the
// same float32).
func scriptArgs(cfg gpt.Config, tc gpt.TrainConfig, weights, tokens string) []string {
	return []string{
		"--layers", strconv.Itoa(cfg.Layers), "--heads", strconv.Itoa(max(cfg.Heads, 1)),
		"--width", strconv.Itoa(cfg.Width), "--block", strconv.Itoa(cfg.BlockSize),
		"--batch", strconv.Itoa(tc.BatchSize), "--vocab", strconv.Itoa(cfg.Vocab),
		"--lr", f32String(tc.LR), "--min-lr", f32String(tc.MinLR),
		"--warmup", strconv.Itoa(tc.Warmup), "--max-iters", strconv.Itoa(tc.MaxIters),
		"--weight-decay", f32String(tc.WeightDecay), "--clip", f32String(tc.ClipNorm),
		"--seed", strconv.FormatUint(tc.Seed, 10),
		"--weights", weights, "--data", tokens,
	}
}

// torchEnv is the environment of the Python processes: ours, with
// OMP_WAIT_POLICY set to policy unless policy is "".
func torchEnv(policy string) []string {
	env := os.Environ()
	if policy != "" {
		env = append(env, "OMP_WAIT_POLICY="+policy)
	}
	return env
}

func f32String(x float32) string { return strconv.FormatFloat(float64(x), 'g', 9, 32) }

// torchProc is a PyTorch script in --serve mode (train_gpt.py or
// gpt2_decode.py), kept running across rounds so its start-up is never
// timed.
type torchProc struct {
	name    string // the script's file name, for messages
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Scanner
	threads int    // the thread count last set
	blas    string // "openblas" when the script sets OpenBLAS' threads too, else "other"
	dtype   string // gpt2_decode.py's weights, fp32 or bf16 ("" when it does not say)
	closed  bool
}

// startTorch starts the script in serve mode and waits until it is ready
// ("ready NPARAMS blas=NAME", and dtype=DT from gpt2_decode.py); want is the number of parameters it must
// report. The script is killed when ctx is done.
func startTorch(ctx context.Context, python, script string, args []string, env []string, want int, stderr io.Writer) (*torchProc, error) {
	cmd := exec.CommandContext(ctx, python, append(append([]string{script}, args...), "--serve")...)
	cmd.Env = env
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &torchProc{name: filepath.Base(script), cmd: cmd, in: in, out: bufio.NewScanner(out)}
	p.out.Buffer(make([]byte, 1<<16), 1<<24)
	line, err := p.line()
	if err == nil {
		var n int
		if _, e := fmt.Sscanf(line, "ready %d", &n); e != nil {
			err = fmt.Errorf("%s: expected \"ready N blas=NAME\", got %q", p.name, line)
		} else if n != want {
			err = fmt.Errorf("%s has %d parameters, simdgpt's model %d", p.name, n, want)
		}
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "blas="); ok {
				p.blas = v
			}
			if v, ok := strings.CutPrefix(f, "dtype="); ok {
				p.dtype = v
			}
		}
	}
	if err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

// line reads one reply line.
func (p *torchProc) line() (string, error) {
	if !p.out.Scan() {
		if err := p.out.Err(); err != nil {
			return "", err
		}
		return "", fmt.Errorf("%s exited (its error is above)", p.name)
	}
	return p.out.Text(), nil
}

// request sends one command and returns its reply.
func (p *torchProc) request(cmd string) (string, error) {
	if _, err := fmt.Fprintln(p.in, cmd); err != nil {
		return "", fmt.Errorf("%s: %v", p.name, err)
	}
	reply, err := p.line()
	if err == nil && strings.HasPrefix(reply, "error") {
		err = fmt.Errorf("%s: %s", p.name, reply)
	}
	return reply, err
}

// setThreads sets torch's intra-op thread count.
func (p *torchProc) setThreads(n int) error {
	if p.threads == n {
		return nil
	}
	reply, err := p.request("threads " + strconv.Itoa(n))
	if err != nil {
		return err
	}
	if reply != "ok "+strconv.Itoa(n) {
		return fmt.Errorf("%s: asked for %d threads, answered %q", p.name, n, reply)
	}
	p.threads = n
	return nil
}

// run times n steps and returns their milliseconds.
func (p *torchProc) run(n int) ([]float64, error) {
	reply, err := p.request("run " + strconv.Itoa(n))
	if err != nil {
		return nil, err
	}
	ms, err := parseMs(reply, n)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", p.name, err)
	}
	return ms, nil
}

// parseMs parses the script's "ms t1 ... tn" line.
func parseMs(line string, n int) ([]float64, error) {
	f := strings.Fields(line)
	if len(f) != n+1 || f[0] != "ms" {
		return nil, fmt.Errorf("expected \"ms\" and %d timings, got %q", n, line)
	}
	ms := make([]float64, n)
	for i, s := range f[1:] {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v > 0) {
			return nil, fmt.Errorf("bad timing %q in %q", s, line)
		}
		ms[i] = v
	}
	return ms, nil
}

// close asks the script to quit and waits for it (once; later calls
// return nil).
func (p *torchProc) close() error {
	if p.closed {
		return nil
	}
	p.closed = true
	fmt.Fprintln(p.in, "quit")
	p.in.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		return fmt.Errorf("%s did not quit; killed it", p.name)
	}
}
