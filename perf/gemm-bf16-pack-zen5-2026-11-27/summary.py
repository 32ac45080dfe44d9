"""Summarises rounds.txt (rounds.sh): per shape, medians and [ranges] of
the old and new bfloat16 product, over CPU time (cpu) and wall clock,
as a share of the largest peak sample; the new against the float32 Gemm
and against the old, per round. Usage: python3 summary.py rounds.txt"""
import statistics as st, sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 3 or not f[1].startswith('Benchmark'): continue
    name = f[0] + ' ' + f[1].replace('BenchmarkGemmBF16Compute/', '').rsplit('-', 1)[0]
    rows.setdefault(name, []).append((float(f[f.index('GFLOP/s') - 1]), float(f[f.index('cpu-GFLOP/s') - 1])))
for col, lab in ((1, 'cpu'), (0, 'wall')):
    peak = [r[col] for r in rows['new peak/bf16']]
    pm = max(peak)
    print('[%s] bf16 peak: median %.0f, range %.0f-%.0f, max %.0f, %d samples' % (lab, st.median(peak), min(peak), max(peak), pm, len(peak)))
    for s in ['m512_n512_k512', 'm1024_n1024_k1024', 'm2048_n2048_k2048', 'm2048_n1152_k384', 'm2048_n1536_k384']:
        f = [r[col] for r in rows['new ' + s + '/f32']]
        out = '%-18s' % s
        for v in ('base', 'new'):
            b = [r[col] for r in rows[v + ' ' + s + '/bf16']]
            out += ' %s %4.0f [%3.0f-%3.0f] %2.0f%%;' % (v, st.median(b), min(b), max(b), 100 * st.median(b) / pm)
        nb = [r[col] for r in rows['new ' + s + '/bf16']]
        bb = [r[col] for r in rows['base ' + s + '/bf16']]
        ratio = [x / y for x, y in zip(nb, f)]
        ab = [x / y for x, y in zip(nb, bb)]
        out += ' f32 %4.0f; new/f32 %.2f [%.2f-%.2f]; new/base %.3f [%.2f-%.2f]' % (st.median(f), st.median(ratio), min(ratio), max(ratio), st.median(ab), min(ab), max(ab))
        print(out)
