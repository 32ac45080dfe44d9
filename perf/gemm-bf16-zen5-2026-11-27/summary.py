"""Summarises rounds.txt: per shape, the medians and ranges of the
bfloat16 product's and the float32 Gemm's rates (cpu-GFLOP/s: over the
thread's CPU time), their ratio within each round, and the product's
share of the largest bfloat16 peak sample. Usage: python3 summary.py rounds.txt"""
import statistics as st
import sys

rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    name = f[0].replace('BenchmarkGemmBF16Compute/', '').rsplit('-', 1)[0]
    rows.setdefault(name, []).append((float(f[f.index('GFLOP/s') - 1]), float(f[f.index('cpu-GFLOP/s') - 1])))
col = 1
peak = [r[col] for r in rows['peak/bf16']]
pm = max(peak)
print('bf16 peak (cpu): median %.0f, range %.0f-%.0f, %d samples' % (st.median(peak), min(peak), max(peak), len(peak)))
for s in ['m512_n512_k512', 'm1024_n1024_k1024', 'm2048_n2048_k2048', 'm2048_n1152_k384', 'm2048_n1536_k384']:
    b = [r[col] for r in rows[s + '/bf16']]
    f = [r[col] for r in rows[s + '/f32']]
    ratio = [x / y for x, y in zip(b, f)]
    print('%-18s bf16 %4.0f [%3.0f-%3.0f] = %2.0f%% of peak [%2.0f-%2.0f%%]; f32 %4.0f [%3.0f-%3.0f]; bf16/f32 %.2f [%.2f-%.2f]' % (
        s, st.median(b), min(b), max(b), 100 * st.median(b) / pm, 100 * min(b) / pm, 100 * max(b) / pm,
        st.median(f), min(f), max(f), st.median(ratio), min(ratio), max(ratio)))
