#!/usr/bin/env python3
"""Medians and ranges of run.sh's rounds: per binary, format and -n, CPU
seconds (user + system), wall seconds and peak RSS, and f32's -n 256
median over each format's (CPU and wall). usage: summarize.py ROUNDS.txt"""
import statistics, sys
from collections import defaultdict

rows = defaultdict(list)
loads = []
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) != 9:
        continue
    r, b, w, n, wall, user, sys_, rss, load1 = f
    rows[(b, w, int(n))].append((float(user) + float(sys_), float(wall), int(rss)))
    loads.append(float(load1))

def med(v):
    return statistics.median(v)

def fmt(v):
    return f"{med(v):.2f} ({min(v):.2f}–{max(v):.2f})"

print(f"load average (1 min) during the runs: {min(loads):.1f}–{max(loads):.1f}, median {med(loads):.1f}")
print()
print("| binary | format | rounds | load CPU s | load wall s | -n 256 CPU s | -n 256 wall s | peak RSS MB | f32 ÷ this, -n 256 CPU | wall |")
print("|---|---|---|---|---|---|---|---|---|---|")
for b in sorted({k[0] for k in rows}):
    f32 = rows.get((b, "f32", 256))
    for w in ["hf", "train", "f32", "bf16", "int8"]:
        z, s = rows.get((b, w, 0)), rows.get((b, w, 256))
        if not z:
            continue
        if s:
            rc = med([x[0] for x in f32]) / med([x[0] for x in s]) if f32 else float("nan")
            rw = med([x[1] for x in f32]) / med([x[1] for x in s]) if f32 else float("nan")
            n256 = f"{fmt([x[0] for x in s])} | {fmt([x[1] for x in s])}"
            ratio = f"{rc:.2f} | {rw:.2f}"
        else:
            n256, ratio = "— | —", "— | —"
        print(f"| {b} | {w} | {len(z)} | {fmt([x[0] for x in z])} | {fmt([x[1] for x in z])} | "
              f"{n256} | {max(x[2] for x in z) / 1000:.0f} | {ratio} |")
