# What an ideal block cache would miss on the distribution of DiskCacheKeepsUsedBlocksTest's skewed
# trace (200,000 reads, Zipf exponent 1 over 4,000 blocks, a quarter of them cached), with Python's
# own random draws (not the test's): one LRU order over single blocks, CLOCK, and the best fixed
# set (the most read blocks). Run: python3 docs/results/remote-read-keep/lru_model.py
import bisect, collections, random

N, C, READS = 4000, 1000, 200_000
cdf, s = [], 0.0
for r in range(N):
    s += 1 / (r + 1)
    cdf.append(s)
random.seed(7)
trace = [bisect.bisect_left(cdf, random.random() * s) for _ in range(READS)]

lru, misses = collections.OrderedDict(), 0
for x in trace:
    if x in lru:
        lru.move_to_end(x)
    else:
        misses += 1
        lru[x] = True
        if len(lru) > C:
            lru.popitem(last=False)
print('LRU misses', misses)

queue, ref, misses = collections.deque(), {}, 0
for x in trace:
    if x in ref:
        ref[x] = True
    else:
        misses += 1
        while len(ref) >= C:
            y = queue.popleft()
            if ref[y]:
                ref[y] = False
                queue.append(y)
            else:
                del ref[y]
        ref[x] = False
        queue.append(x)
print('CLOCK misses', misses)

top = {k for k, _ in collections.Counter(trace).most_common(C)}
print('best fixed set misses', sum(1 for x in trace if x not in top))
