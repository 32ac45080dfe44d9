import re,sys,statistics as st
runs=sys.argv[1:]
data={}
order=[]
for f in runs:
    for line in open(f):
        c=[x.strip() for x in line.split('|')]
        if len(c)<9 or c[2] not in ('avx2','avx512'): continue
        shape,impl=c[1],c[2]
        if not shape or shape=='shape': continue
        pk=float(c[6].rstrip('%'))
        vsob=c[7].split('×')[0]; vsob2=c[8].split('×')[0]
        r = float(vsob) if impl=='avx512' else float(vsob2)
        key=(shape,impl)
        if key not in data: data[key]=[]; order.append(key)
        data[key].append((r,pk))
print("| shape | impl | ratio median (range) | %peak median (range) |")
print("|---|---|---|---|")
for k in order:
    rs=[x[0] for x in data[k]]; ps=[x[1] for x in data[k]]
    print(f"| {k[0]} | {k[1]} vs {'openblas' if k[1]=='avx512' else 'openblas-avx2'} | {st.median(rs):.2f}× ({min(rs):.2f}–{max(rs):.2f}) | {st.median(ps):.0f}% ({min(ps):.0f}–{max(ps):.0f}) |")
