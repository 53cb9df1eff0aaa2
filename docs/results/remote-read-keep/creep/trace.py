# Remote read calls per get over a run, per configuration: the creep after the warm-up.
# Run from the repository root: python3 docs/results/remote-read-keep/creep/trace.py docs/results/remote-read-keep/creep/run*.json
# run1.json, run2.json: RemoteReadScenario --backends disaggregated --budgets 50 --keys zipf
#   --rounds 1 --seconds 30 --local-cache-hint true,false --gets-before-checkpoint 600000 --seed 201,
#   code 7f6efbf plus the per-bucket read counts (the same jar twice).
# rowcache-off-*.json, hint-without-whole-files-*.json: the same with --local-cache-hint true and
#   --seed 301/302, code e412d1e (used blocks kept, before the review fixes) with a temporary switch
#   that is not in the code: the row cache turned off (memory.row-cache-ratio 0), or the cache hint
#   leaving out the files the disk tier held whole.
import json, sys
for f in sys.argv[1:]:
    for r in json.load(open(f)):
        if 'bucketPrimaryReads' not in r:
            sys.exit(f'{f} has no bucketPrimaryReads: written by a RemoteReadScenario before 2026-11-30')
        g = r['bucketGets']; p = r['bucketPrimaryReads']; k = 1000 // r['bucketMillis']
        def per_get(a, b): return sum(p[a * k:b * k]) / max(1, sum(g[a * k:b * k]))
        print(f"{f} {r['label']}: remote reads/s {sum(p[k:]) / (len(p) / k - 1):.0f} (after the first second); "
              f"reads per get 1-5 s {per_get(1, 5):.3f}, 5-10 s {per_get(5, 10):.3f}, "
              f"10-20 s {per_get(10, 20):.3f}, 20-30 s {per_get(20, 30):.3f}; "
              f"gets/s 20-30 s {sum(g[20 * k:30 * k]) / 10:.0f}")
