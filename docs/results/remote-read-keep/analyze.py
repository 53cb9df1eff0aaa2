# The A/B of used blocks outliving their slab (ab.sh): invocations of the jar before the change
# ('a') and after it ('f'; 'g' in confirm/, the final code) alternate,
# one seed per pair. Per variant, key distribution and budget: steady gets/s, ms to 90% of that
# run's steady rate, gets/s over the first 5 s, the primary's read calls per get in the windows
# 1-5 s and 10-30 s (the job's misses, plus any warm-up reads in the first), MB read remotely;
# median (min-max) over the pairs, then per-pair ratios after / before.
# Run from the repository root: python3 docs/results/remote-read-keep/analyze.py <dir> ...
import glob, json, os, sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..'))
from remote_read_metrics import steady, to90, first, rng

def reads_per_get(r, from_s, to_s):
    if 'bucketPrimaryReads' not in r:
        sys.exit('this JSON has no bucketPrimaryReads: written by a RemoteReadScenario before 2026-11-30')
    k = 1000 // r['bucketMillis']
    g = sum(r['bucketGets'][from_s * k:to_s * k])
    return sum(r['bucketPrimaryReads'][from_s * k:to_s * k]) / max(1, g)

runs = {}
for d in sys.argv[1:]:
    for f in glob.glob(os.path.join(d, 'ab-*-*.json')):
        _, variant, seed = os.path.basename(f)[:-5].split('-')
        for r in json.load(open(f)):
            runs[('before' if variant == 'a' else 'after', r['keys'], r['cachePercent'], seed)] = r

print('| keys | budget | code | pairs | steady gets/s | to 90% (ms) | gets/s, first 5 s | reads/get 1-5 s | reads/get 10-30 s | MB read remotely |')
print('|---|---:|---|---:|---:|---:|---:|---:|---:|---:|')
cells = sorted({k[1:3] for k in runs})
for keys, budget in cells:
    for code in ('before', 'after'):
        rs = [r for (c, k, b, _), r in sorted(runs.items()) if (c, k, b) == (code, keys, budget)]
        print(f"| {keys} | {budget}% | {code} | {len(rs)} | {rng([steady(r) for r in rs])} | "
              f"{rng([to90(r) for r in rs])} | {rng([first(r) for r in rs])} | "
              f"{rng([reads_per_get(r, 1, 5) for r in rs], '{:.3f}')} | "
              f"{rng([reads_per_get(r, 10, 30) for r in rs], '{:.3f}')} | "
              f"{rng([r['primaryReadBytes'] / 1e6 for r in rs])} |")
print()
print('Per-pair ratios after / before, median (min-max):')
print()
print('| keys | budget | steady gets/s | gets/s, first 5 s | reads/get 10-30 s |')
print('|---|---:|---:|---:|---:|')
for keys, budget in cells:
    seeds = sorted({k[3] for k in runs if k[1:3] == (keys, budget)})
    def ratio(fn):
        v = [fn(runs[('after', keys, budget, s)]) / fn(runs[('before', keys, budget, s)]) for s in seeds
             if ('after', keys, budget, s) in runs and ('before', keys, budget, s) in runs]
        return rng(v, '{:.2f}x') if v else '-'
    print(f"| {keys} | {budget}% | {ratio(steady)} | {ratio(first)} | {ratio(lambda r: reads_per_get(r, 10, 30))} |")
