# Steady gets/s (median of the last 30% of buckets) per run, and per-round ratios:
# mapped / system calls, mapped / all-local RocksDB, system calls / RocksDB.
import json, glob, statistics as st, re
runs = {}
for f in sorted(glob.glob('docs/results/local-mmap/mmap-*-r*.json')):
    mode, rnd = re.search(r'mmap-(on|off)-r(\d+)', f).groups()
    for r in json.load(open(f)):
        b = r['bucketGets']; tail = b[int(len(b) * 0.7):]
        steady = st.median(tail) * 1000.0 / r['bucketMillis']
        name = 'rocksdb' if r['backend'] == 'rocksdb' else 'ours-' + ('mmap' if mode == 'on' else 'pread')
        runs[(r['keys'], name, int(rnd))] = steady
def rng(v): return f"{st.median(v):,.0f} [{min(v):,.0f}-{max(v):,.0f}]"
for keys in ('uniform', 'zipf'):
    rounds = sorted({k[2] for k in runs if k[0] == keys})
    print(f"== {keys}, {len(rounds)} rounds")
    for n in ('ours-mmap', 'ours-pread', 'rocksdb'):
        print(f"  {n:11s} {rng([runs[(keys, n, r)] for r in rounds if (keys, n, r) in runs])}")
    for a, b in (('ours-mmap', 'ours-pread'), ('ours-mmap', 'rocksdb'), ('ours-pread', 'rocksdb')):
        v = [runs[(keys, a, r)] / runs[(keys, b, r)] for r in rounds if (keys, a, r) in runs and (keys, b, r) in runs]
        if v: print(f"  {a}/{b}: median {st.median(v):.2f}x [{min(v):.2f}-{max(v):.2f}] per round {['%.2f' % x for x in v]}")
