# A/B of the cache hint's memory part: before (g: fa211d4) against after (m), pairs by keys, budget
# and seed, from the JSON of ab.sh; and ours after against ForSt where a run has both.
# Run from the repository root: python3 docs/results/remote-read-memory-hint/analyze.py docs/results/remote-read-memory-hint/ab
import glob, json, os, re, statistics, sys

def steady(r):
    g = r['bucketGets']; n = len(g); k = 1000 / r['bucketMillis']
    tail = g[n - max(1, round(n * 0.3)):]
    return statistics.median(tail) * k

def to90(r):
    g = r['bucketGets']; w = max(1, 1000 // r['bucketMillis']); target = 0.9 * steady(r); s = 0
    for i, x in enumerate(g):
        s += x
        if i >= w: s -= g[i - w]
        if i + 1 >= w and s * 1000 / (w * r['bucketMillis']) >= target: return (i + 1) * r['bucketMillis']
    return -1

def first(r, secs):
    k = 1000 // r['bucketMillis']; return sum(r['bucketGets'][:secs * k]) / secs

def per_get(r, a, b):
    k = 1000 // r['bucketMillis']; p = r['bucketPrimaryReads']; g = r['bucketGets']
    return sum(p[a * k:b * k]) / max(1, sum(g[a * k:b * k]))

def med(xs): return f"{statistics.median(xs):.2f}x ({min(xs):.2f}-{max(xs):.2f})"

runs = {}
for d in sys.argv[1:]:
    for f in sorted(glob.glob(os.path.join(d, '*.json'))):
        m = re.match(r'(\w+)-(\d+)-([gm])-(\d+)\.json', os.path.basename(f))
        if not m: continue
        keys, budget, v, seed = m.groups()
        for r in json.load(open(f)):
            if 'bucketPrimaryReads' not in r:
                sys.exit(f'{f} has no bucketPrimaryReads: written by a RemoteReadScenario before 2026-11-30')
            who = 'forst' if r['backend'] == 'forst' else v
            runs[(keys, int(budget), who, int(seed))] = r

print('| keys | budget | code | runs | steady gets/s | gets/s, first 5 s | to 90% of own steady (ms) | remote reads per get 1-5 s | 5-10 s | 10-30 s |')
print('|---|---:|---|---:|---:|---:|---:|---:|---:|---:|')
groups = sorted({(k, b, w) for (k, b, w, s) in runs})
for (k, b, w) in groups:
    rs = [runs[x] for x in sorted(runs) if x[:3] == (k, b, w)]
    def col(f, fmt='{:,.0f}'):
        xs = [f(r) for r in rs]
        return f"{fmt.format(statistics.median(xs))} ({fmt.format(min(xs))}-{fmt.format(max(xs))})"
    name = {'g': 'before', 'm': 'after', 'forst': 'ForSt'}[w]
    print(f"| {k} | {b}% | {name} | {len(rs)} | {col(steady)} | {col(lambda r: first(r, 5))} | {col(to90)} | "
          f"{col(lambda r: per_get(r, 1, 5), '{:.3f}')} | {col(lambda r: per_get(r, 5, 10), '{:.3f}')} | {col(lambda r: per_get(r, 10, 30), '{:.3f}')} |")
print()
print('Per-pair ratios after / before, median (min-max):')
for (k, b) in sorted({(k, b) for (k, b, w, s) in runs}):
    seeds = sorted(s for (kk, bb, w, s) in runs if (kk, bb, w) == (k, b, 'm') and (k, b, 'g', s) in runs)
    if not seeds: continue
    A = [runs[(k, b, 'm', s)] for s in seeds]; B = [runs[(k, b, 'g', s)] for s in seeds]
    print(f"- {k} {b}% ({len(seeds)} pairs): steady {med([steady(a) / steady(x) for a, x in zip(A, B)])}, "
          f"first 5 s {med([first(a, 5) / first(x, 5) for a, x in zip(A, B)])}, "
          f"first 10 s {med([first(a, 10) / first(x, 10) for a, x in zip(A, B)])}, "
          f"reads per get 1-5 s {med([per_get(a, 1, 5) / per_get(x, 1, 5) for a, x in zip(A, B)])}, "
          f"to 90% {med([to90(a) / to90(x) for a, x in zip(A, B)])}")
    F = [(runs[(k, b, 'm', s)], runs[(k, b, 'forst', s)]) for s in seeds if (k, b, 'forst', s) in runs]
    if F:
        print(f"  - after / ForSt ({len(F)} runs): to 90% of own steady {med([to90(a) / to90(f) for a, f in F])}, "
              f"steady {med([steady(a) / steady(f) for a, f in F])}, first 5 s {med([first(a, 5) / first(f, 5) for a, f in F])}")

# Ours against ForSt, Zipf keys at 50%: the after runs of the A/B that ran both, and the rounds of
# forst-rounds.json (one invocation, alternating); paired by seed or by round.
pairs = [(runs[(k, b, 'm', s)], runs[(k, b, 'forst', s)]) for (k, b, w, s) in sorted(runs)
         if (k, b, w) == ('zipf', 50, 'forst') and ('zipf', 50, 'm', s) in runs]
for d in sys.argv[1:]:
    f = os.path.join(d, 'forst-rounds.json')
    if os.path.exists(f):
        rs = json.load(open(f)); by = {}
        for r in rs:
            by.setdefault(r['round'], {})[r['backend']] = r
        pairs += [(v['disaggregated'], v['forst']) for _, v in sorted(by.items()) if len(v) == 2]
if pairs:
    print()
    print(f'Ours (after) against ForSt, Zipf 50%, {len(pairs)} pairs:')
    print('| pair | ours: to 90% (ms) | ForSt: to 90% (ms) | ratio | ours: steady gets/s | ForSt: steady gets/s | ours: gets/s, first 5 s | ForSt: first 5 s |')
    print('|---:|---:|---:|---:|---:|---:|---:|---:|')
    for i, (a, f) in enumerate(pairs):
        print(f'| {i + 1} | {to90(a):,} | {to90(f):,} | {to90(a) / to90(f):.2f}x | {steady(a):,.0f} | {steady(f):,.0f} | {first(a, 5):,.0f} | {first(f, 5):,.0f} |')
    print(f"- to 90% ours / ForSt: {med([to90(a) / to90(f) for a, f in pairs])}; medians {statistics.median([to90(a) for a, f in pairs]):,.0f} ms against {statistics.median([to90(f) for a, f in pairs]):,.0f} ms; "
          f"pairs at or below 0.5x: {sum(1 for a, f in pairs if to90(a) <= 0.5 * to90(f))} of {len(pairs)}")
    print(f"- steady ours / ForSt: {med([steady(a) / steady(f) for a, f in pairs])}; first 5 s: {med([first(a, 5) / first(f, 5) for a, f in pairs])}")

    def reach(r, target):  # end of the first whole 1-s window at or above target, in ms
        g = r['bucketGets']; w = max(1, 1000 // r['bucketMillis']); s = 0
        for i, x in enumerate(g):
            s += x
            if i >= w: s -= g[i - w]
            if i + 1 >= w and s * 1000 / (w * r['bucketMillis']) >= target: return (i + 1) * r['bucketMillis']
        return -1
    print(f"- ours reaches ForSt's steady rate after (ms): {[reach(a, steady(f)) for a, f in pairs]}")
