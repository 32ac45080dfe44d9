"""Summarises rounds.txt (rounds.sh): per shape, over the thread's CPU time
(cpu) and the wall clock, medians and [ranges] of the bfloat16 product
before (base) and after (new), its share of the bfloat16 peak (the median
of each round's product over the peak loop timed beside it, and of the
largest peak sample), and per-round ratios: new/base, new/float32 Gemm,
new/torch.mm bf16. Usage: python3 summary.py rounds.txt"""
import statistics as st, sys

SHAPES = [('m512_n512_k512', 'sq512'), ('m1024_n1024_k1024', 'sq1024'), ('m2048_n2048_k2048', 'sq2048'),
          ('m2048_n1152_k384', '2048x384x1152'), ('m2048_n1536_k384', '2048x384x1536')]
rounds, cur, loads = [], None, []
for line in open(sys.argv[1]):
    f = line.split()
    if not f:
        continue
    if f[0] == 'round':
        cur = {}
        rounds.append(cur)
        loads.append(float(f[2]))
    elif f[0] in ('base', 'new') and f[1].startswith('Benchmark'):
        name = f[1].replace('BenchmarkGemmBF16Compute/', '').rsplit('-', 1)[0]
        v = (float(f[f.index('GFLOP/s') - 1]), float(f[f.index('cpu-GFLOP/s') - 1]))
        if name == 'peak/bf16':
            name = 'peak ' + str(len([k for k in cur if k.startswith('peak')]))
            cur[name] = v
            cur['peak for ' + last] = v
        else:
            cur[f[0] + ' ' + name] = v
            last = name.split('/')[0]
    elif f[0] == 'torch':
        # torch SHAPE bf16 WALL [..], cpu CPU [..]
        cur['torch ' + f[1]] = (float(f[3]), float(f[f.index('cpu') + 1]))
rounds = [r for r in rounds if all(('torch ' + t) in r and ('new %s/bf16' % s) in r and ('base %s/bf16' % s) in r for s, t in SHAPES)]
print('%d complete rounds; load average (1 min) at their starts: %s' % (len(rounds), ' '.join('%.1f' % l for l in loads[:len(rounds)])))
def fmt(xs, p='%.0f'):
    return (p + ' [' + p + '-' + p + ']') % (st.median(xs), min(xs), max(xs))
for col, lab in ((1, 'cpu'), (0, 'wall')):
    peaks = [v[col] for r in rounds for k, v in r.items() if k.startswith('peak ') and not k.startswith('peak for')]
    pm = max(peaks)
    print('\n[%s] bf16 peak loop: %s, max %.0f, %d samples' % (lab, fmt(peaks), pm, len(peaks)))
    print('| shape | base | new | new % of same-round peak | new % of max peak | new/base | new/f32 | torch.mm bf16 | new/torch |')
    print('|---|---|---|---|---|---|---|---|---|')
    for s, t in SHAPES:
        b = [r['base %s/bf16' % s][col] for r in rounds]
        n = [r['new %s/bf16' % s][col] for r in rounds]
        f = [r['new %s/f32' % s][col] for r in rounds]
        pk = [r['peak for ' + s][col] for r in rounds]
        to = [r['torch ' + t][col] for r in rounds]
        print('| %s | %s | %s | %s | %.0f%% | %s | %s | %s | %s |' % (
            s, fmt(b), fmt(n), fmt([100 * x / y for x, y in zip(n, pk)]), 100 * st.median(n) / pm,
            fmt([x / y for x, y in zip(n, b)], '%.3f'), fmt([x / y for x, y in zip(n, f)], '%.2f'),
            fmt(to), fmt([x / y for x, y in zip(n, to)], '%.3f')))
