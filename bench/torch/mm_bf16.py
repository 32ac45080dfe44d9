#!/usr/bin/env python3
"""torch.mm on bfloat16 matrices, the peer of kernels.GemmBF16Compute.

For each shape M×K×N (A M×K, B K×N, both torch.bfloat16, C in bf16 as
torch.mm returns it) it times torch.mm and the float32 torch.mm on the
same values, on --threads threads (torch.set_num_threads, 1 by default,
as the simdgpt side's benchmarks run), in interleaved rounds, and prints
per shape the median and range of GFLOP/s (wall clock and, where the OS
gives it, the thread's CPU time, as BenchmarkGemmBF16Compute reports
both). Debian's OpenBLAS exports no sbgemm, so torch's bf16 product is
its own (oneDNN where torch was built with it).

  /usr/bin/python3 bench/torch/mm_bf16.py [--rounds 8] [--threads 1]
"""
import argparse
import statistics
import time

import torch

SHAPES = [(512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048), (2048, 384, 1152), (2048, 384, 1536)]


def timed(f, reps):
    f()
    w0, c0 = time.perf_counter(), time.thread_time()
    for _ in range(reps):
        f()
    return time.perf_counter() - w0, time.thread_time() - c0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    if args.rounds < 1 or args.threads < 1:
        ap.error("--rounds and --threads must be at least 1")
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    print("torch", torch.__version__, "threads", torch.get_num_threads())
    for m, k, n in SHAPES:
        a = torch.rand(m, k) * 2 - 1
        b = torch.rand(k, n) * 2 - 1
        a16, b16 = a.to(torch.bfloat16), b.to(torch.bfloat16)
        flops = 2.0 * m * n * k
        reps = max(1, int(2e9 / flops))
        rates = {"bf16": ([], []), "f32": ([], [])}
        for _ in range(args.rounds):
            for name, f in (("bf16", lambda: torch.mm(a16, b16)), ("f32", lambda: torch.mm(a, b))):
                wall, cpu = timed(f, reps)
                rates[name][0].append(flops * reps / wall / 1e9)
                if cpu > 0:
                    rates[name][1].append(flops * reps / cpu / 1e9)
        for name, (wall, cpu) in rates.items():
            line = "%dx%dx%d %s: %.0f GFLOP/s [%.0f-%.0f]" % (m, k, n, name, statistics.median(wall), min(wall), max(wall))
            if cpu and args.threads == 1:
                line += ", cpu %.0f [%.0f-%.0f]" % (statistics.median(cpu), min(cpu), max(cpu))
            print(line, flush=True)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        raise SystemExit(1)
