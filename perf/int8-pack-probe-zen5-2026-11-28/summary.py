"""summary.py FILE: per-round ratios of a prefill-ab.sh or all.sh output.

prefill-ab.sh output: int8/f32 tokens per CPU-second per binary and round,
and new/old for each format. gemmdequant rounds: int8/f32 and
int8-panels/f32 cpu-GFLOP/s per ISA and round. Medians [min, max]."""
import re
import statistics as st
import sys

text = open(sys.argv[1]).read()
if "GemmDequantInt8" in text:
    data, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"== round (\d+) isa (\S+)", line)
        if m:
            cur = (m.group(2), int(m.group(1)))
            continue
        m = re.match(r"BenchmarkGemmDequantInt8/(\S+)-\d+\s.*\s([\d.]+) cpu-GFLOP/s", line)
        if m and cur:
            data[cur + (m.group(1),)] = float(m.group(2))
    for isa in ("avx512", "avx2"):
        rounds = sorted({k[1] for k in data if k[0] == isa})
        for kind in ("f32", "int8", "int8-panels"):
            v = [data[(isa, r, kind)] for r in rounds]
            print(f"{isa} {kind}: cpu-GFLOP/s median {st.median(v):.1f} [{min(v):.1f}, {max(v):.1f}]")
        for kind in ("int8", "int8-panels"):
            v = [data[(isa, r, kind)] / data[(isa, r, "f32")] for r in rounds]
            print(f"{isa} {kind}/f32: median {st.median(v):.3f} [{min(v):.3f}, {max(v):.3f}] over {len(v)} rounds")
    sys.exit()
data, cur = {}, None
for line in text.splitlines():
    m = re.match(r"== (\S+) round (\d+)", line)
    if m:
        cur = (m.group(1), int(m.group(2)))
        continue
    m = re.match(r"BenchmarkGPT2Prefill/(\S+)/prompt=(\d+)\s.*\s([\d.]+) tokens/cpu-s", line)
    if m and cur:
        data[cur + (m.group(1), m.group(2))] = float(m.group(3))
rounds = sorted({k[1] for k in data})
for v in ("old", "new"):
    for p in ("256", "512"):
        f = [data[(v, r, "f32", p)] for r in rounds if (v, r, "f32", p) in data]
        i = [data[(v, r, "weights=int8", p)] for r in rounds if (v, r, "weights=int8", p) in data]
        q = [b / a for a, b in zip(f, i)]
        print(f"{v} prompt {p}: f32 {st.median(f):.0f}, int8 {st.median(i):.0f} tokens/cpu-s; int8/f32 median {st.median(q):.3f} [{min(q):.3f}, {max(q):.3f}]")
for w in ("f32", "weights=int8"):
    for p in ("256", "512"):
        q = [data[("new", r, w, p)] / data[("old", r, w, p)] for r in rounds if ("new", r, w, p) in data]
        print(f"{w} prompt {p}: new/old median {st.median(q):.3f} [{min(q):.3f}, {max(q):.3f}]")
