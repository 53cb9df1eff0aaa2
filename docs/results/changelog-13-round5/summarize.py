import json,glob,statistics,sys
files=sorted(glob.glob(sys.argv[1]+'/run-*.json'))
rows=[('cp p50','checkpointP50Ms'),('cp p99','checkpointP99Ms'),('DSTL files','dstlFilesCreated'),('completed checkpoints','completedCheckpoints'),('DSTL bytes','dstlBytesWritten'),('restore (slowest subtask)','restoreMs'),('records/s (load)','loadRecordsPerSecond'),('injected tail delays','injectedTailDelays')]
runs=[{r['config']:r for r in json.load(open(f))['runs']} for f in files]
print(len(runs),'runs')
def fmt(v,k):
    if k=='dstlBytesWritten': return '%.1f MiB'%(v/2**20)
    if k.endswith('Ms'): return '%d ms'%v
    return '%d'%v
for name,k in rows:
    fs=[r['filesystem'][k] for r in runs]; ds=[r['dfs-batched'][k] for r in runs]
    ratios=[d/f if f else float('nan') for d,f in zip(ds,fs)]
    print(f"| {name} | {fmt(statistics.median(fs),k)} [{fmt(min(fs),k)} - {fmt(max(fs),k)}] | {fmt(statistics.median(ds),k)} [{fmt(min(ds),k)} - {fmt(max(ds),k)}] | {statistics.median(ratios):.2f}x [{', '.join('%.2f'%x for x in ratios)}] |")
fpc=[ (r['dfs-batched']['dstlFilesCreated']/r['dfs-batched']['completedCheckpoints'])/(r['filesystem']['dstlFilesCreated']/r['filesystem']['completedCheckpoints']) for r in runs]
print('files per completed checkpoint ratio', '%.2f'%statistics.median(fpc), ['%.2f'%x for x in fpc])
print('fs p99>1s', sum(r['filesystem']['checkpointP99Ms']>1000 for r in runs), 'ours p99>1s', sum(r['dfs-batched']['checkpointP99Ms']>1000 for r in runs))
