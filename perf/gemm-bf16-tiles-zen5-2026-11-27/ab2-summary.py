"""Summarises ab2-rounds.txt (ab2.sh): per shape, medians and ranges over the
thread's CPU time and the per-round new/base ratio. Usage: python3
ab2-summary.py ab2-rounds.txt"""
import statistics as st, sys
rounds = []
for l in open(sys.argv[1]):
    f = l.split()
    if f[0] == 'round':
        rounds.append({})
        continue
    rounds[-1][(f[0], f[1].split('/')[1])] = float(f[f.index('cpu-GFLOP/s') - 1])
for s in ['m512_n512_k512', 'm2048_n1152_k384']:
    b = [r[('base', s)] for r in rounds]
    n = [r[('new', s)] for r in rounds]
    q = sorted(x / y for x, y in zip(n, b))
    print('%s base %.0f [%.0f-%.0f] new %.0f [%.0f-%.0f] new/base median %.3f quartiles %.3f-%.3f range %.3f-%.3f (%d rounds)' % (
        s, st.median(b), min(b), max(b), st.median(n), min(n), max(n), st.median(q), q[len(q) // 4], q[3 * len(q) // 4], q[0], q[-1], len(q)))
