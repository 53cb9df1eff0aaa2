#!/usr/bin/env python3
"""Point operations at LRU_100 against HASHMAP: per file and benchmark, each fork's mean score,
the means over forks, and LRU_100 / HASHMAP (means), with the lowest and highest fork ratio.
Usage: summary.py [folder [file pattern, default keys-*.json]]."""
import glob, json, os, statistics, sys
from collections import defaultdict

folder = sys.argv[1] if len(sys.argv) > 1 else "."
pattern = sys.argv[2] if len(sys.argv) > 2 else "keys-*.json"
for path in sorted(glob.glob(os.path.join(folder, pattern))):
    by = defaultdict(dict)
    for r in json.load(open(path)):
        bench = r["benchmark"].rsplit(".", 1)[1]
        by[bench][r["params"]["backend"]] = [statistics.mean(f) for f in r["primaryMetric"]["rawData"]]
    for bench, b in sorted(by.items()):
        h, l = b["HASHMAP"], b["LRU_100"]
        print("%-14s %-12s HASHMAP %6.0f (%s)  LRU_100 %6.0f (%s)  ratio %.2f (forks %.2f-%.2f)" % (
            os.path.basename(path)[:-5], bench, statistics.mean(h), "/".join("%.0f" % x for x in h),
            statistics.mean(l), "/".join("%.0f" % x for x in l), statistics.mean(l) / statistics.mean(h),
            min(l) / max(h), max(l) / min(h)))
