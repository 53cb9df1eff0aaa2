#!/usr/bin/env python3
"""Whole-map reads before/after complete map rows: per benchmark, backend and jar, the mean
score of each fork, the mean over all forks, and the ratios to ROCKSDB of the same invocation."""
import glob, json, os, statistics, sys
from collections import defaultdict

folder = sys.argv[1] if len(sys.argv) > 1 else "."
# (jar, round) -> benchmark -> backend -> list of per-fork means
runs = defaultdict(lambda: defaultdict(dict))
for path in sorted(glob.glob(os.path.join(folder, "maps-*-*.json"))):
    _, jar, rnd = os.path.basename(path)[:-5].split("-")
    for r in json.load(open(path)):
        bench = r["benchmark"].rsplit(".", 1)[1]
        forks = [statistics.mean(f) for f in r["primaryMetric"]["rawData"]]
        runs[(jar, rnd)][bench][r["params"]["backend"]] = forks

for (jar, rnd), benches in sorted(runs.items()):
    for bench, backends in sorted(benches.items()):
        rocks = statistics.mean(backends["ROCKSDB"])
        cells = []
        for b in ("ROCKSDB", "LRU_50", "LRU_100"):
            forks = backends[b]
            mean = statistics.mean(forks)
            cells.append("%s %.0f (forks %s) %.2fx" % (
                b, mean, "/".join("%.0f" % f for f in forks), mean / rocks))
        print("%-5s r%s %-12s %s" % (jar, rnd, bench, "  ".join(cells)))

# per jar, benchmark and cache: the ratios to ROCKSDB over the rounds
ratios = defaultdict(list)
for (jar, rnd), benches in runs.items():
    for bench, backends in benches.items():
        rocks = statistics.mean(backends["ROCKSDB"])
        for b in ("LRU_50", "LRU_100"):
            ratios[(jar, bench, b)].append(statistics.mean(backends[b]) / rocks)
for (jar, bench, b), rs in sorted(ratios.items()):
    print("%-6s %-12s %-8s / ROCKSDB: %.2f-%.2f (mean %.2f over %d rounds)" % (
        jar, bench, b, min(rs), max(rs), statistics.mean(rs), len(rs)))
