import re,sys,statistics as st
from collections import defaultdict
d=defaultdict(list); bw=defaultdict(list); pct=defaultdict(list)
cur=None
for line in open(sys.argv[1]):
    m=re.match(r'### round (\d+) isa (\S+) weights (\S+) build (\S+)',line)
    if m: cur=m.groups(); continue
    m=re.match(r'\| (\d+) +\| 1 +\| ([\d.]+) \(.*?\| ([\d.]+) +\| ([\d.]+) \((\d+)%\)',line)
    if m and cur:
        r,isa,w,b=cur; ctx=m.group(1)
        d[(isa,w,ctx,b,r)]=float(m.group(2)); pct[(isa,w,ctx,b)].append(int(m.group(5)))
print("| ISA | weights | ctx | old ms/token median (range) | new ms/token median (range) | new/old time, median of paired rounds (range) | % read bw old / new (medians) |")
print("|---|---|---|---|---|---|---|")
for isa in ['avx512','avx2']:
  for w in ['bf16','int8']:
    for ctx in ['64','512']:
      rounds=sorted({k[4] for k in d if k[:3]==(isa,w,ctx)})
      o=[d[(isa,w,ctx,'old',r)] for r in rounds if (isa,w,ctx,'old',r) in d]
      n=[d[(isa,w,ctx,'new',r)] for r in rounds if (isa,w,ctx,'new',r) in d]
      rat=[d[(isa,w,ctx,'new',r)]/d[(isa,w,ctx,'old',r)] for r in rounds if (isa,w,ctx,'new',r) in d and (isa,w,ctx,'old',r) in d]
      if not rat: continue
      print(f"| {isa} | {w} | {ctx} | {st.median(o):.2f} ({min(o):.2f}–{max(o):.2f}) | {st.median(n):.2f} ({min(n):.2f}–{max(n):.2f}) | {st.median(rat):.3f} ({min(rat):.3f}–{max(rat):.3f}), n={len(rat)} | {st.median(pct[(isa,w,ctx,'old')]):.0f}% / {st.median(pct[(isa,w,ctx,'new')]):.0f}% |")
