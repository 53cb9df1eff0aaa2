# Remote read calls per get over the time windows of each run in this directory (see README.md).
# Run from the repository root: python3 docs/results/remote-read-memory-hint/explore/trace.py docs/results/remote-read-memory-hint/explore/*.json
import json, sys
for f in sys.argv[1:]:
    for r in json.load(open(f)):
        g = r['bucketGets']; p = r['bucketPrimaryReads']; k = 1000 // r['bucketMillis']; n = len(g) // k
        wins = [(a, b) for a, b in [(1, 5), (5, 10), (10, 20), (20, 30), (30, 45), (45, 60), (60, 75), (75, 90)] if b <= n]
        cells = ', '.join(f"{a}-{b} s {sum(p[a*k:b*k]) / max(1, sum(g[a*k:b*k])):.3f}" for a, b in wins)
        print(f"{f.split('/')[-1]}: state {r['stateBytes']:,} B; reads per get {cells}")
