"""Summarises ab-rounds.sh output: per shape, each variant (tagged by its
binary or setting) as a share of the largest peak sample, against the
float32 Gemm and against the first variant, per round (medians)."""
import statistics as st, sys
rows = {}; vs = []
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 3 or not f[1].startswith('Benchmark'): continue
    v = f[0]
    if v not in ('f32', 'peak') and v not in vs: vs.append(v)
    name = v + ' ' + f[1].replace('BenchmarkGemmBF16Compute/', '').rsplit('-', 1)[0]
    rows.setdefault(name, []).append((float(f[f.index('GFLOP/s') - 1]), float(f[f.index('cpu-GFLOP/s') - 1])))
for col, lab in ((1, 'cpu'), (0, 'wall')):
    peak = [r[col] for r in rows['peak peak/bf16']]
    pm = max(peak)
    print('[%s] bf16 peak: median %.0f, range %.0f-%.0f, %d samples' % (lab, st.median(peak), min(peak), max(peak), len(peak)))
    for s in ['m512_n512_k512', 'm1024_n1024_k1024', 'm2048_n2048_k2048', 'm2048_n1152_k384', 'm2048_n1536_k384']:
        if 'f32 ' + s + '/f32' not in rows:
            continue
        f = [r[col] for r in rows['f32 ' + s + '/f32']]
        b0 = [r[col] for r in rows[vs[0] + ' ' + s + '/bf16']]
        out = '%-18s f32 %4.0f |' % (s, st.median(f))
        for v in vs:
            b = [r[col] for r in rows[v + ' ' + s + '/bf16']]
            ab = [x / y for x, y in zip(b, b0)]
            rf = [x / y for x, y in zip(b, f)]
            out += ' %s %4.0f [%3.0f-%3.0f] %2.0f%% x%.2f vs0 %.3f |' % (v, st.median(b), min(b), max(b), 100 * st.median(b) / pm, st.median(rf), st.median(ab))
        print(out)
