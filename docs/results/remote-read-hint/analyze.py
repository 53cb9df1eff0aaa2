# The cache-hint measurement (run.sh): per configuration, steady gets/s (median of the last 30% of
# the buckets), ms to the first one-second window at 90% of that run's steady rate, mean gets/s
# over the first 5 s and MB read remotely, as median (min-max) over the rounds; then per-round
# ratios. Run from the repository root: python3 docs/results/remote-read-hint/analyze.py [runs.json]
import json, os, sys, statistics as st
sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..'))
from remote_read_metrics import steady, to90, first, rng

runs = {}
for r in json.load(open(sys.argv[1] if len(sys.argv) > 1 else 'docs/results/remote-read-hint/runs.json')):
    name = 'forst' if r['backend'] == 'forst' else ('ours-nohint' if 'no hint' in r['label'] else 'ours-hint')
    runs[(r['keys'], r['cachePercent'], name, r['round'])] = r

labels = {'ours-hint': 'ours, hint', 'ours-nohint': 'ours, by level', 'forst': 'ForSt'}
print('| keys | budget | backend | runs | steady gets/s | to 90% (ms) | gets/s, first 5 s | MB read remotely |')
print('|---|---:|---|---:|---:|---:|---:|---:|')
for keys in ('uniform', 'zipf'):
    for budget in (10, 50, 100):
        for name in ('ours-hint', 'ours-nohint', 'forst'):
            rs = [r for (k, b, n, _), r in sorted(runs.items()) if (k, b, n) == (keys, budget, name)]
            if not rs: continue
            print(f"| {keys} | {budget}% | {labels[name]} | {len(rs)} | {rng([steady(r) for r in rs])} | "
                  f"{rng([to90(r) for r in rs])} | {rng([first(r) for r in rs])} | "
                  f"{rng([r['primaryReadBytes'] / 1e6 for r in rs])} |")
print()
print('Per-round ratios, median (min-max):')
print()
print('| keys | budget | to 90%: hint / by level | hint / ForSt | by level / ForSt | steady: hint / by level | hint / ForSt | first 5 s: hint / by level | hint / ForSt |')
print('|---|---:|---:|---:|---:|---:|---:|---:|---:|')
for keys in ('uniform', 'zipf'):
    for budget in (10, 50, 100):
        rounds = sorted({k[3] for k in runs if k[0] == keys and k[1] == budget})
        def ratio(a, b, fn):
            v = [fn(runs[(keys, budget, a, x)]) / fn(runs[(keys, budget, b, x)]) for x in rounds
                 if (keys, budget, a, x) in runs and (keys, budget, b, x) in runs]
            return rng(v, '{:.2f}x') if v else '-'
        print(f"| {keys} | {budget}% | {ratio('ours-hint', 'ours-nohint', to90)} | "
              f"{ratio('ours-hint', 'forst', to90)} | {ratio('ours-nohint', 'forst', to90)} | "
              f"{ratio('ours-hint', 'ours-nohint', steady)} | {ratio('ours-hint', 'forst', steady)} | "
              f"{ratio('ours-hint', 'ours-nohint', first)} | {ratio('ours-hint', 'forst', first)} |")
