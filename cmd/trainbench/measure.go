package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"

	"github.com/simdgpt/simdgpt/bench"
	"github.com/simdgpt/simdgpt/gpt"
	"github.com/simdgpt/simdgpt/gpt/data"
	"github.com/simdgpt/simdgpt/kernels"
)

// benchWeights is the checkpoint both sides start the timed run from.
const benchWeights = "bench_init.safetensors"

// measure runs o.rounds rounds; in each, at every thread count, one
// untimed step and o.steps timed steps of simdgpt, then the same for
// PyTorch when script is set. simdgpt's FMA peak on each thread count is
// sampled as package bench samples it (a bench.PeakSampler): before the
// first round, after a round once its steps add up to 16·bench.MinPeakTime
// since the last sample, and after the last round. Once ctx is done it
// stops at the next step (killing the script) and returns ctx's error.
func measure(ctx context.Context, o options, d *data.Dataset, dir, script string, stderr io.Writer) (res *results, err error) {
	defer func() {
		if ctx.Err() != nil { // the script's failure is its killing
			res, err = nil, ctx.Err()
		}
	}()
	counts := o.threads
	if script != "" {
		counts = o.torchThreads
	}
	maxIters := o.rounds * len(counts) * (o.steps + 1)
	tr, weights, err := newRun(o.cfg, d, o.batch, maxIters, o.lr, o.seed, o.precision, dir, benchWeights)
	if err != nil {
		return nil, err
	}
	impl := kernels.Default()
	r := &results{name: o.name, cfg: o.cfg, batch: o.batch, threads: o.threads, torchThreads: o.torchThreads,
		ours: map[int]*series{}, isa: impl.Name(), peakName: "FMA peak", peaks: &bench.Peaks{}}
	sampler := r.peaks.Sampler
	if o.precision == gpt.PrecisionBF16 && impl.BF16Dot() {
		// A bf16 step's products run on the bfloat16 dot-product unit
		// (unless they run on the float32 FMAs, impl.BF16Dot): its
		// share is of that unit's peak.
		r.isa, r.peakName, sampler = impl.Name()+bench.BF16PeakSuffix, "bf16 peak", r.peaks.BF16Sampler
	}
	samplers := map[int]*bench.PeakSampler{}
	var tp *torchProc
	if script != "" {
		args := scriptArgs(o.cfg, tr.Cfg, weights, filepath.Join(dir, tokensFile))
		args = append(args, "--precision", torchPrecision(o.precision))
		if tp, err = startTorch(ctx, o.python, script, args, torchEnv(o.ompWait), o.cfg.NumParams(), stderr); err != nil {
			return nil, err
		}
		defer tp.close()
		tp.unitFlops = stepFlops(o.cfg, o.batch)
		r.torch = map[int]*series{}
		r.blas = tp.blas
	}
	for round := 1; round <= o.rounds; round++ {
		for _, n := range counts {
			msg := fmt.Sprintf("round %d/%d, %d thread(s):", round, o.rounds, n)
			if slices.Contains(o.threads, n) {
				s := r.ours[n]
				if s == nil {
					s = &series{}
					r.ours[n] = s
				}
				ps := samplers[n]
				var ms []float64
				withProcs(n, func() {
					if ps == nil {
						ps = sampler(impl, n)
						samplers[n] = ps
						ps.Begin()
					}
					tr.TrainStep()
					if ms, err = runOurs(ctx, tr, o.steps); err == nil {
						var sum float64
						for _, m := range ms {
							sum += m
						}
						ps.Timed(time.Duration(sum * 1e6))
					}
				})
				if err != nil {
					return nil, err
				}
				s.ms = append(s.ms, ms...)
				msg += fmt.Sprintf(" simdgpt %.2f ms/step", median(ms))
			}
			if tp != nil {
				if err := tp.setThreads(n); err != nil {
					return nil, err
				}
				if _, err := tp.run(1); err != nil {
					return nil, err
				}
				ms, err := tp.run(o.steps)
				if err != nil {
					return nil, err
				}
				s := r.torch[n]
				if s == nil {
					s = &series{}
					r.torch[n] = s
				}
				s.ms = append(s.ms, ms...)
				msg += fmt.Sprintf(" torch %.2f ms/step", median(ms))
			}
			fmt.Fprintln(stderr, msg)
		}
	}
	for _, n := range o.threads {
		if ps := samplers[n]; ps != nil {
			withProcs(n, ps.End)
		}
	}
	if tp != nil {
		if err := tp.close(); err != nil {
			return nil, err
		}
	}
	return r, nil
}
