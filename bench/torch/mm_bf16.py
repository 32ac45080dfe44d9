#!/usr/bin/python3
"""torch.mm on bfloat16 and float32 matrices, timed as kernelbench times Gemm.

For each shape M×K×N (optionally with "_NT" or "_TN": B or A transposed, as
kernelbench names its GEMM shapes) the script times C = op(A)·op(B) with
torch.mm in each asked dtype and prints one line per shape and dtype:

    shape dtype GFLOP/s median [min-max] over rounds, cpu GFLOP/s median [min-max]

(the second over the thread's CPU time, steadier than the wall clock on a
loaded machine, with one thread).

A round times enough calls to last --time seconds; the dtypes and shapes are
alternated inside each round, so a ratio between two lines comes from the
same sitting. FLOPs are 2·M·K·N whatever the dtype. bf16 products run on
oneDNN (torch.mm on bfloat16 tensors uses it where the CPU has AVX-512);
float32 products on the BLAS torch was built with (Debian: OpenBLAS, whose
threads ignore torch.set_num_threads: the script sets OPENBLAS_NUM_THREADS
and OMP_NUM_THREADS to --threads before importing torch).
"""

import argparse
import os
import sys
import time


def parse_shape(s):
    name = s
    ta = tb = False
    if s.endswith("_NT"):
        tb, s = True, s[:-3]
    elif s.endswith("_TN"):
        ta, s = True, s[:-3]
    elif s.startswith("sq"):
        n = int(s[2:])
        return name, n, n, n, False, False
    parts = s.split("x")
    if len(parts) != 3:
        raise argparse.ArgumentTypeError("shape %r: want MxKxN, MxKxN_NT, MxKxN_TN or sqN" % name)
    m, k, n = (int(p) for p in parts)
    if min(m, k, n) < 1 or m * k + k * n + m * n > 1 << 30:
        raise argparse.ArgumentTypeError("shape %r: each size at least 1, at most 2^30 elements in all" % name)
    return name, m, k, n, ta, tb


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default="sq512,sq1024,sq2048,2048x384x1152,2048x384x1536,2048x1536x384",
                    help="comma-separated shapes (default: the squares and training step (b)'s projections)")
    ap.add_argument("--dtypes", default="bf16,fp32", help="comma-separated: bf16, fp32")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--time", type=float, default=0.5, help="seconds per shape, dtype and round")
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args(argv)
    if not 1 <= a.rounds <= 1000 or not 0 < a.time <= 60 or not 1 <= a.threads <= 1024:
        ap.error("--rounds 1-1000, --time in (0, 60], --threads 1-1024")
    try:
        shapes = [parse_shape(s) for s in a.shapes.split(",")]
    except argparse.ArgumentTypeError as e:
        ap.error(str(e))
    dtypes = a.dtypes.split(",")
    for d in dtypes:
        if d not in ("bf16", "fp32"):
            ap.error("--dtypes: %r is not bf16 or fp32" % d)

    os.environ["OPENBLAS_NUM_THREADS"] = str(a.threads)
    os.environ["OMP_NUM_THREADS"] = str(a.threads)
    import torch
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)

    operands = {}
    for name, m, k, n, ta, tb in shapes:
        for d in dtypes:
            dt = torch.bfloat16 if d == "bf16" else torch.float32
            A = torch.randn(k, m) if ta else torch.randn(m, k)
            B = torch.randn(n, k) if tb else torch.randn(k, n)
            A, B = A.to(dt), B.to(dt)
            A = A.t() if ta else A
            B = B.t() if tb else B
            C = torch.empty(m, n, dtype=dt)
            torch.mm(A, B, out=C)  # warm up: oneDNN builds its kernel on the first call
            operands[(name, d)] = (A, B, C, 2.0 * m * k * n)

    rates = {key: [] for key in operands}
    cpu_rates = {key: [] for key in operands}
    for _ in range(a.rounds):
        for key, (A, B, C, flops) in operands.items():
            calls, start, cpu0 = 0, time.perf_counter(), time.thread_time()
            while True:
                torch.mm(A, B, out=C)
                calls += 1
                el = time.perf_counter() - start
                if el >= a.time:
                    break
            rates[key].append(flops * calls / el / 1e9)
            cpu = time.thread_time() - cpu0
            if cpu > 0:
                cpu_rates[key].append(flops * calls / cpu / 1e9)
    print("# torch %s, %d thread(s), %d rounds of %.2f s" % (torch.__version__, a.threads, a.rounds, a.time))
    def summary(r):
        r = sorted(r)
        med = r[len(r) // 2] if len(r) % 2 else (r[len(r) // 2 - 1] + r[len(r) // 2]) / 2
        return "%.1f [%.1f-%.1f]" % (med, r[0], r[-1])

    for key, r in rates.items():
        line = "%s %s %s" % (key[0], key[1], summary(r))
        if a.threads == 1 and cpu_rates[key]:
            line += ", cpu " + summary(cpu_rates[key])
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
