import sys,re,statistics as st,collections
d=collections.defaultdict(list); draw=collections.defaultdict(list)
rounds=[]
cur={}
for line in open(sys.argv[1]):
    if line.startswith('# round'):
        if cur: rounds.append(cur)
        cur={}
        continue
    if not line.startswith('Benchmark'): continue
    f=line.split(); name=f[0]
    for i,t in enumerate(f):
        if t in('cpu-ms/step','cpu-ms/token'): cur[name]=float(f[i-1])
        if t=='draw-ms/token': cur[name+'#draw']=float(f[i-1])
        if t=='ms/token': cur[name+'#ms']=float(f[i-1])
if cur: rounds.append(cur)
def med(k): 
    v=[r[k] for r in rounds if k in r]; return st.median(v),min(v),max(v)
for k in sorted(rounds[0]): print(k, "%.3f [%.3f, %.3f]"%med(k))
def ratio(a,b,mul=1):
    v=[mul*r[a]/r[b] for r in rounds if a in r and b in r]; return st.median(v),min(v),max(v)
B='BenchmarkGPT2DecodeBatch/weights='
print('f32 n8:n1 %.2f [%.2f %.2f]'%ratio(B+'f32/n=1',B+'f32/n=8',8))
print('int8 n8:n1 %.2f [%.2f %.2f]'%ratio(B+'int8/n=1',B+'int8/n=8',8))
