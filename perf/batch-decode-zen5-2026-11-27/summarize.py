#!/usr/bin/env python3
"""Summarizes run.sh's rounds: for each binary and case, the median and
range of cpu-ms/step (GPT2DecodeBatch) or cpu-ms/token (GPT2Decode), the
batch's tokens/s ratios n=8 : n=1 (per round, then their median), and
the sampled cases against greedy (per round and binary, then medians).
Usage: summarize.py rounds.txt"""
import re, statistics, sys
from collections import defaultdict

vals = defaultdict(list)          # (bin, case) -> [cpu-ms per round]
rounds = defaultdict(dict)        # round -> {(bin, case): cpu-ms}
r = 0
for line in open(sys.argv[1]):
    if line.startswith('# round'):
        r = int(line.split()[2])
        continue
    f = line.split()
    if len(f) < 3 or not f[1].startswith('Benchmark'):
        continue
    b, case = f[0], re.sub(r'-\d+$', '', f[1][len('Benchmark'):])
    m = re.search(r'([\d.]+) cpu-ms/(step|token)', line)
    if not m:
        continue
    v = float(m.group(1))
    vals[(b, case)].append(v)
    rounds[r][(b, case)] = v

def med(xs): return statistics.median(xs)
print('| binary | case | cpu-ms (median) | [min, max] | rounds |')
print('|---|---|---|---|---|')
for (b, case), xs in sorted(vals.items(), key=lambda kv: (kv[0][1], kv[0][0])):
    print(f'| {b} | {case} | {med(xs):.2f} | [{min(xs):.2f}, {max(xs):.2f}] | {len(xs)} |')

print()
print('| binary | weights | n=8 : n=1 tokens/s per round | median |')
print('|---|---|---|---|')
for b in ('before', 'after'):
    for w in ('f32', 'int8'):
        rs = []
        for rd in sorted(rounds):
            d = rounds[rd]
            one, eight = d.get((b, f'GPT2DecodeBatch/weights={w}/n=1')), d.get((b, f'GPT2DecodeBatch/weights={w}/n=8'))
            if one and eight:
                rs.append(8 * one / eight)
        if rs:
            print(f'| {b} | {w} | {", ".join(f"{x:.2f}" for x in rs)} | **{med(rs):.2f}×** |')

print()
print('| binary | case | against greedy, per round | median |')
print('|---|---|---|---|')
for b in ('before', 'after'):
    for w, pre in (('f32', 'GPT2Decode/'), ('int8', 'GPT2Decode/weights=int8/')):
        for s in ('top_k40', 'top_p0.95'):
            rs = []
            for rd in sorted(rounds):
                d = rounds[rd]
                g, x = d.get((b, pre + 'ctx=64')), d.get((b, pre + f'sample={s}/ctx=64'))
                if g and x:
                    rs.append(100 * (x / g - 1))
            if rs:
                print(f'| {b} | {w} {s} | {", ".join(f"{x:+.1f}%" for x in rs)} | **{med(rs):+.1f}%** |')
