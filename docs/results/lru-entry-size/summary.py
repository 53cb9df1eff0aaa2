#!/usr/bin/env python3
"""LRU_100 / HASHMAP for valueUpdate per set of runs: ratio of the means and of the medians of the
fork means (each fork's mean over its measured iterations but the first)."""
import glob, json, os, statistics as st, sys

here = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
groups = {}
for f in sorted(glob.glob(os.path.join(here, '*.json'))):
    name = os.path.basename(f)[:-5]
    parts = name.split('-')
    jar = 'after' if 'after' in parts else 'before'
    kind = '-'.join(p for p in parts if p not in ('before', 'after') and not p.isdigit() or p in ('25000', '50000', '200000'))
    for b in json.load(open(f)):
        forks = [st.mean(x[1:]) for x in b['primaryMetric']['rawData']]
        groups.setdefault((kind, jar), {}).setdefault(b['params']['backend'], []).extend(forks)
for (kind, jar), m in sorted(groups.items()):
    h, l = m['HASHMAP'], m['LRU_100']
    print(f"{kind:22s} {jar:6s} forks {len(l):2d}  HASHMAP {st.mean(h):6.0f} [{min(h):5.0f}-{max(h):5.0f}]"
          f"  LRU_100 {st.mean(l):6.0f} [{min(l):5.0f}-{max(l):5.0f}]"
          f"  ratio of means {st.mean(l)/st.mean(h):.2f}, of medians {st.median(l)/st.median(h):.2f}")
