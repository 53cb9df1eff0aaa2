# What the remote read analyses compute from one run of RemoteReadScenario's JSON: steady gets/s
# (median of the last 30% of the buckets), ms to the first one-second window at 90% of that run's
# steady rate, mean gets/s over the first seconds, and a median (min-max) formatter.
import statistics as st

def steady(r):
    b = r['bucketGets']; n = len(b)
    tail = b[n - max(1, round(n * 0.3)):]
    return st.median(tail) * 1000.0 / r['bucketMillis']

def to90(r):
    b = r['bucketGets']; ms = r['bucketMillis']; w = max(1, 1000 // ms); target = 0.9 * steady(r); s = 0
    for i, g in enumerate(b):
        s += g
        if i >= w: s -= b[i - w]
        if i + 1 >= w and s * 1000.0 / (w * ms) >= target: return (i + 1) * ms
    return -1

def first(r, seconds=5):
    k = seconds * 1000 // r['bucketMillis']
    return sum(r['bucketGets'][:k]) / seconds

def rng(v, fmt='{:,.0f}'):
    return (fmt + ' (' + fmt + '-' + fmt + ')').format(st.median(v), min(v), max(v))
