package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/simdgpt/simdgpt/gpt"
)

// Deadlines of the waits on the Python processes. Every wait on one ends
// by its deadline: the process's group is killed and the command ends with
// one line naming what it waited for and how long. They are generous, for
// a slow machine (importing torch alone can take tens of seconds), and
// the replies' grow with the work asked (at minFlops); tests shorten
// them.
var deadlines = struct {
	version time.Duration // python -c "import torch; print(torch.__version__)"
	ready   time.Duration // a script's start: importing torch and reading the weights, plus their bytes at minRead
	reply   time.Duration // any reply, plus its work at minFlops
	quit    time.Duration // the script's exit after "quit"
	// minFlops (FLOP/s) and minRead (bytes/s) are the slowest PyTorch
	// the deadlines allow for: a hundredth or less of what it does on
	// one core of the machines this was measured on.
	minFlops, minRead float64
}{version: 3 * time.Minute, ready: 5 * time.Minute, reply: 2 * time.Minute, quit: 30 * time.Second, minFlops: 1e8, minRead: 10e6}

// workDeadline is base plus flops at deadlines.minFlops (a million seconds
// at most).
func workDeadline(base time.Duration, flops float64) time.Duration {
	return base + seconds(flops/deadlines.minFlops)
}

// readDeadline is the time to read bytes at deadlines.minRead.
func readDeadline(bytes float64) time.Duration { return seconds(bytes / deadlines.minRead) }

// seconds converts s to a Duration, at most a million seconds.
func seconds(s float64) time.Duration { return time.Duration(min(s, 1e6) * float64(time.Second)) }

// waitDelay bounds how long Wait waits, once the process is gone, for its
// output pipes to close (a descendant outside its group could hold them).
const waitDelay = 5 * time.Second

// timeoutError is a wait on a Python process that passed its deadline.
type timeoutError struct {
	what string // what was awaited, e.g. "gpt2_decode.py's ready line"
	d    time.Duration
}

func (e timeoutError) Error() string {
	return fmt.Sprintf("waited %v for %s: killed it", e.d.Round(time.Millisecond), e.what)
}

// torchVersion returns torch's version as python imports it, or an error
// when python is missing or cannot import torch (or ctx is done first); a
// timeoutError when it does not answer within deadlines.version. A python
// that is not an executable file is refused before any process is
// started.
func torchVersion(ctx context.Context, python string) (string, error) {
	if _, err := exec.LookPath(python); err != nil {
		return "", err
	}
	d := deadlines.version
	vctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	cmd := exec.CommandContext(vctx, python, "-c", "import torch; print(torch.__version__)")
	ownGroup(cmd)
	cmd.WaitDelay = waitDelay
	out, err := cmd.Output()
	if err != nil {
		if ctx.Err() == nil && errors.Is(vctx.Err(), context.DeadlineExceeded) {
			return "", timeoutError{fmt.Sprintf("%s's answer to the torch version check (import torch)", python), d}
		}
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
// timed. Every wait on it has a deadline (await).
type torchProc struct {
	name    string // the script's file name, for messages
	cmd     *exec.Cmd
	in      io.WriteCloser
	outPipe io.ReadCloser
	out     *bufio.Scanner
	threads int    // the thread count last set
	blas    string // "openblas" when the script sets OpenBLAS' threads too, else "other"
	dtype   string // gpt2_decode.py's weights, fp32 or bf16 ("" when it does not say)
	// unitFlops is the work of one step (train_gpt.py) or of one token
	// (gpt2_decode.py), which the deadlines of replies grow with.
	unitFlops float64
	closed    bool
}

// startTorch starts the script in serve mode and waits until it is ready
// ("ready NPARAMS blas=NAME", and dtype=DT from gpt2_decode.py); want is
// the number of parameters it must report. It waits deadlines.ready and
// the time to read want float32 parameters (readDeadline); past that it
// kills the script and returns a timeoutError. The script is killed when
// ctx is done.
func startTorch(ctx context.Context, python, script string, args []string, env []string, want int, stderr io.Writer) (*torchProc, error) {
	cmd := exec.CommandContext(ctx, python, append(append([]string{script}, args...), "--serve")...)
	cmd.Env = env
	cmd.Stderr = stderr
	ownGroup(cmd)
	cmd.WaitDelay = waitDelay
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
	p := &torchProc{name: filepath.Base(script), cmd: cmd, in: in, outPipe: out, out: bufio.NewScanner(out)}
	p.out.Buffer(make([]byte, 1<<16), 1<<24)
	var line string
	d := deadlines.ready + readDeadline(4*float64(want))
	err = p.await(p.name+"'s ready line", d, func() (err error) {
		line, err = p.line()
		return err
	})
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

// await runs f, a write to the script or a read of its reply, with a
// deadline of d: if f has not returned by then the script's process group
// is killed and its pipes closed, which ends f, and await returns a
// timeoutError naming what and d.
func (p *torchProc) await(what string, d time.Duration, f func() error) error {
	var fired atomic.Bool
	t := time.AfterFunc(d, func() {
		fired.Store(true)
		p.kill()
	})
	err := f()
	t.Stop()
	if fired.Load() {
		return timeoutError{what, d}
	}
	return err
}

// kill kills the script's process group and closes its pipes.
func (p *torchProc) kill() {
	killGroup(p.cmd)
	p.in.Close()
	p.outPipe.Close()
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

// request sends one command and returns its reply, waiting for it
// workDeadline(deadlines.reply, flops).
func (p *torchProc) request(cmd string, flops float64) (string, error) {
	verb, _, _ := strings.Cut(cmd, " ")
	var reply string
	err := p.await(fmt.Sprintf("%s's reply to %q", p.name, verb), workDeadline(deadlines.reply, flops), func() error {
		if _, err := fmt.Fprintln(p.in, cmd); err != nil {
			return fmt.Errorf("%s: %v", p.name, err)
		}
		var err error
		reply, err = p.line()
		return err
	})
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
	reply, err := p.request("threads "+strconv.Itoa(n), 0)
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
	reply, err := p.request("run "+strconv.Itoa(n), float64(n)*p.unitFlops)
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

// close asks the script to quit and waits for it, deadlines.quit at most
// (then it kills it); once: later calls return nil.
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
	case <-time.After(deadlines.quit):
		p.kill()
		<-done
		return timeoutError{p.name + "'s exit after \"quit\"", deadlines.quit}
	}
}
