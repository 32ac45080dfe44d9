#!/usr/bin/env python3
"""Summarizes run.sh's raw files into README.md's tables: per prompt
length, each variant's tokens per CPU-second (median [min-max] over the
rounds) and the ratios per round (median [min-max]).

usage: summarize.py DIR
"""
import re
import statistics
import sys


def mr(xs, fmt="%.0f"):
    if not xs:
        return "-"
    return (fmt + " [" + fmt + "–" + fmt + "]") % (statistics.median(xs), min(xs), max(xs))


def ours(path):
    """{(variant, prompt): [tokens/cpu-s per round]} from BenchmarkGPT2Prefill."""
    r = {}
    for line in open(path):
        m = re.match(r"BenchmarkGPT2Prefill/(\S+)/prompt=(\d+)\S*\s.*?([\d.]+) tokens/cpu-s", line)
        if m:
            r.setdefault((m.group(1), int(m.group(2))), []).append(float(m.group(3)))
    return r


def torch(path):
    """{prompt: ([simdgpt tokens/cpu-s], [torch tokens/cpu-s])} per round,
    from trainbench's progress lines."""
    r = {}
    pat = r"round \d+/\d+, prompt (\d+), 1 thread\(s\): simdgpt [\d.]+ ms \(([\d.]+) CPU ms\) torch [\d.]+ ms \(([\d.]+) CPU ms\)"
    for line in open(path):
        m = re.search(pat, line)
        if m:
            p = int(m.group(1))
            o, t = r.setdefault(p, ([], []))
            o.append(p / (float(m.group(2)) / 1000))
            t.append(p / (float(m.group(3)) / 1000))
    return r


def main(d):
    o = ours(d + "/ours.txt")
    variants = ["f32", "precision=bf16", "weights=bf16", "weights=int8"]
    print("simdgpt, BenchmarkGPT2Prefill, tokens per CPU-second, median [min–max] of the rounds; ratios to f32 per round")
    print()
    print("| prompt | " + " | ".join(variants) + " | precision=bf16 / f32 | weights=bf16 / f32 | int8 / f32 |")
    print("|---" * (len(variants) + 4) + "|")
    for p in (256, 512):
        f = o.get(("f32", p), [])
        cells = [mr(o.get((v, p), [])) for v in variants]
        rat = []
        for v in variants[1:]:
            x = o.get((v, p), [])
            rat.append(mr([a / b for a, b in zip(x, f)], "%.2f"))
        print("| %d | %s | %s |" % (p, " | ".join(cells), " | ".join(rat)))
    print()
    for prefix, label in (("torch-", "OPENBLAS_CORETYPE=Haswell, OPENBLAS_L2_SIZE=512 (this machine's environment)"),
                          ("torch-openblas-auto-", "OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset (OpenBLAS' Cooperlake kernels)")):
        print("## PyTorch with " + label)
        print()
        torch_tables(d, prefix)


def torch_tables(d, prefix):
    peers = [("precision=f32-weights=f32", "f32", "fp32"),
             ("precision=bf16-weights=f32", "precision=bf16", "fp32 under bf16 autocast"),
             ("precision=bf16-weights=bf16", "weights=bf16", "bf16 matrices")]
    print("trainbench -prefill, simdgpt and PyTorch alternating in each round, tokens per CPU-second, median [min–max]; speed = simdgpt / PyTorch per round")
    print()
    print("| prompt | simdgpt | PyTorch | simdgpt tokens/CPU-s | PyTorch tokens/CPU-s | speed per round |")
    print("|---|---|---|---|---|---|")
    tt = {}
    for f, ours_name, peer in peers:
        try:
            t = torch("%s/%s%s.txt" % (d, prefix, f))
        except OSError:
            continue
        for p in (256, 512):
            a, b = t.get(p, ([], []))
            tt[(ours_name, p)] = (a, b)
            print("| %d | %s | %s | %s | %s | %s |" % (p, ours_name, peer, mr(a), mr(b), mr([x / y for x, y in zip(a, b)], "%.2f")))
    print()
    print("Targets, per round: simdgpt's bf16 variants (same trainbench run) against PyTorch's best bf16 peer in that run's round and against simdgpt's f32 of the fp32 run's same round")
    print()
    print("| prompt | variant | / simdgpt f32 (trainbench rounds) | / PyTorch autocast | / PyTorch bf16 matrices |")
    print("|---|---|---|---|---|")
    for p in (256, 512):
        f32 = tt.get(("f32", p), ([], []))[0]
        auto = tt.get(("precision=bf16", p), ([], []))[1]
        bfm = tt.get(("weights=bf16", p), ([], []))[1]
        for v in ("precision=bf16", "weights=bf16"):
            x = tt.get((v, p), ([], []))[0]
            print("| %d | %s | %s | %s | %s |" % (p, v, mr([a / b for a, b in zip(x, f32)], "%.2f"),
                                                 mr([a / b for a, b in zip(x, auto)], "%.2f"), mr([a / b for a, b in zip(x, bfm)], "%.2f")))


if __name__ == "__main__":
    main(sys.argv[1])
