# Per run: steady gets/s (median of the last 30% of buckets), ms to the first one-second window at
# 90% of steady, mean gets/s over the first 5 s, MB read remotely; then per-round ratios. Run from
# the repository root: python3 docs/results/remote-read-fill/analyze.py
import json, glob, re, os, sys, statistics as st
sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..'))
from remote_read_metrics import steady, to90, first, rng

runs = {}
for f in sorted(glob.glob('docs/results/remote-read-fill/*-r*.json')):
    jar, rnd = re.search(r'(nofill|fill)-r(\d+)\.json', f).groups()
    for r in json.load(open(f)):
        name = 'forst' if r['backend'] == 'forst' else 'ours-' + jar
        runs[(r['keys'], r['cachePercent'], name, int(rnd))] = r

print('| keys | budget | backend | runs | steady gets/s | to 90% (ms) | gets/s, first 5 s | MB read remotely |')
print('|---|---:|---|---:|---:|---:|---:|---:|')
for keys in ('uniform', 'zipf'):
    for budget in (10, 50):
        for name in ('ours-nofill', 'ours-fill', 'forst'):
            rs = [r for (k, b, n, _), r in sorted(runs.items()) if (k, b, n) == (keys, budget, name)]
            if not rs: continue
            label = {'ours-nofill': 'ours, whole files only', 'ours-fill': 'ours, + blocks', 'forst': 'ForSt'}[name]
            print(f"| {keys} | {budget}% | {label} | {len(rs)} | {rng([steady(r) for r in rs])} | "
                  f"{rng([to90(r) for r in rs])} | {rng([first(r) for r in rs])} | "
                  f"{rng([r['primaryReadBytes'] / 1e6 for r in rs])} |")
print()
print('Per-round ratios, median (min-max):')
print()
print('| keys | budget | steady, + blocks / whole files only | to 90%, + blocks / ForSt | to 90%, whole files only / ForSt | steady, + blocks / ForSt | first 5 s, + blocks / ForSt |')
print('|---|---:|---:|---:|---:|---:|---:|')
for keys in ('uniform', 'zipf'):
    for budget in (10, 50):
        rounds = sorted({k[3] for k in runs if k[0] == keys and k[1] == budget})
        def ratio(a, b, fn):
            v = [fn(runs[(keys, budget, a, x)]) / fn(runs[(keys, budget, b, x)]) for x in rounds
                 if (keys, budget, a, x) in runs and (keys, budget, b, x) in runs]
            return rng(v, '{:.2f}x') if v else '-'
        print(f"| {keys} | {budget}% | {ratio('ours-fill', 'ours-nofill', steady)} | "
              f"{ratio('ours-fill', 'forst', to90)} | {ratio('ours-nofill', 'forst', to90)} | "
              f"{ratio('ours-fill', 'forst', steady)} | {ratio('ours-fill', 'forst', first)} |")
