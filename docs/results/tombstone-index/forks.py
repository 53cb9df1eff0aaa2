import json,sys,statistics,collections
# per-fork medians from JMH JSON rawData; args: files...
res=collections.defaultdict(list)
for f in sys.argv[1:]:
    for r in json.load(open(f)):
        b=r['benchmark'].split('.')[-1]; be=r['params']['backend']
        for fork in r['primaryMetric']['rawData']:
            res[(b,be)].append(statistics.median(fork))
for k in sorted(res):
    v=res[k]; print(k, 'median %.0f'%statistics.median(v), 'range [%.0f-%.0f]'%(min(v),max(v)), 'n',len(v))
