package io.github.flinkstate.lru.metrics;

/**
 * Hit and miss counters of one keyed backend's cache, and the per-second hit ratio that the {@code
 * stateCacheHitRatio} gauge reports.
 *
 * <p>Thread safety: {@link #record} is called by the task thread only, on every cached read, so the
 * counters are plain fields (no memory barrier on the hot path), as in Flink's {@code
 * SimpleCounter}. Metric reporter threads read them racily and may see slightly stale counts, which
 * is acceptable for metrics; 64-bit JVMs do not tear long reads.
 */
public final class CacheStatistics {

    private static final long WINDOW_NANOS = 1_000_000_000L;

    private long hits;
    private long misses;

    // window bookkeeping, guarded by 'this' (reporter threads)
    private long windowStartNanos = System.nanoTime();
    private long windowStartHits;
    private long windowStartAccesses;
    private double lastWindowRatio = Double.NaN;

    /** Counts one state access that found (hit) or did not find (miss) its entry in the cache. */
    public void record(boolean hit) {
        if (hit) {
            hits++;
        } else {
            misses++;
        }
    }

    /** Adds counts gathered elsewhere (one writer thread only). */
    public void recordBulk(long newHits, long newMisses) {
        hits += newHits;
        misses += newMisses;
    }

    public long hits() {
        return hits;
    }

    public long misses() {
        return misses;
    }

    /** Hits divided by accesses since the backend started; NaN before the first access. */
    public double lifetimeHitRatio() {
        long h = hits;
        long total = h + misses;
        return total == 0 ? Double.NaN : (double) h / total;
    }

    /**
     * The hit ratio over the last completed window of at least one second: hits / accesses in that
     * window, or the lifetime ratio until a first window with accesses completes.
     */
    public synchronized double hitRatioPerSecond() {
        long now = System.nanoTime();
        if (now - windowStartNanos >= WINDOW_NANOS) {
            long h = hits;
            long accesses = h + misses;
            long windowAccesses = accesses - windowStartAccesses;
            if (windowAccesses > 0) {
                lastWindowRatio = (double) (h - windowStartHits) / windowAccesses;
            }
            windowStartNanos = now;
            windowStartHits = h;
            windowStartAccesses = accesses;
        }
        return Double.isNaN(lastWindowRatio) ? lifetimeHitRatio() : lastWindowRatio;
    }
}
