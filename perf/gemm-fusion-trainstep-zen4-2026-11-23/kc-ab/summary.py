import sys,glob,re,statistics as st,collections
isa=sys.argv[1]
d=collections.defaultdict(lambda: collections.defaultdict(list))
kcs=[]
for f in sorted(glob.glob(f'kcab_{isa}/kc*_r*.txt')):
    kc=int(re.search(r'kc(\d+)[,_]',f).group(1))
    if kc not in kcs: kcs.append(kc)
    for line in open(f):
        m=re.match(r'BenchmarkGemm/shape=(\S+)/impl=\S+\s+\d+\s+([\d.e+]+) ns/op',line)
        if m: d[m.group(1)][kc].append(float(m.group(2)))
kcs.sort()
print('shape', *[f'kc{k}' for k in kcs], sep='\t')
base=kcs[0]
import math
geo=collections.defaultdict(list)
for s,v in d.items():
    b=st.median(v[base])
    row=[s]
    for k in kcs:
        r=b/st.median(v[k]); geo[k].append(math.log(r))
        row.append(f'{r:.3f}')
    print(*row,sep='\t')
print('geomean',*[f'{math.exp(sum(geo[k])/len(geo[k])):.3f}' for k in kcs],sep='\t')
