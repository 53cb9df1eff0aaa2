package io.github.flinkstate.lru.cow;

/**
 * Scan resistance for reads that miss a full cache. LRU admits every miss, so an access pattern
 * that cycles through more keys than the cache holds (the FLIP-325 "0% hits" job: 1,000 keys in
 * turn through a 250-entry cache) never hits and pays, per record, an insert, an eviction and a
 * write-back on top of the delegate's own read and write. This policy watches the hit ratio of the
 * reads of a full cache in windows of {@code max(maxEntries, 1024)} reads. When a window ends below
 * 1/16 hits, the next {@value #FILTERING_WINDOWS} windows filter: only one miss in {@value #SAMPLE}
 * is admitted, the others are read from and written to the delegate directly (the cost of the
 * delegate alone). The admitted sample stays cached eight times longer than under LRU, so a cycle
 * that is too long for LRU hits on the part of it that fits. After the filtering windows, one
 * window admits every miss again and measures plain LRU; a workload whose keys now fit stays in
 * plain LRU.
 *
 * <p>A miss that is not admitted is served from the delegate; with the heap delegate the value is
 * copied first, as for a cached one (the heap may hold an object that the cache wrote back and that
 * a running cache snapshot still serializes).
 *
 * <p>Thread safety: task thread only (owned by the {@link CowLruMap}'s writer).
 */
final class ReadAdmission {

    /** Windows that filter after a window with too few hits. */
    static final int FILTERING_WINDOWS = 8;

    /** While filtering, one miss in this many is admitted (a power of two). */
    static final int SAMPLE = 8;

    /** A window with fewer than {@code reads / LOW_HIT_DIVISOR} hits starts filtering. */
    private static final int LOW_HIT_DIVISOR = 16;

    private final int window;
    private int reads;
    private int hits;
    private int filteringWindowsLeft;
    private int missesWhileFiltering;

    ReadAdmission(int maxEntries) {
        this.window = Math.max(maxEntries, 1024);
    }

    void record(boolean hit) {
        if (hit) {
            hits++;
        }
        if (++reads < window) {
            return;
        }
        if (filteringWindowsLeft > 0) {
            filteringWindowsLeft--;
        } else if (hits < reads / LOW_HIT_DIVISOR) {
            filteringWindowsLeft = FILTERING_WINDOWS;
        }
        reads = 0;
        hits = 0;
    }

    /** Whether a read that missed (in a full cache) should be cached. */
    boolean admit() {
        return filteringWindowsLeft == 0 || (++missesWhileFiltering & (SAMPLE - 1)) == 0;
    }

    boolean filtering() {
        return filteringWindowsLeft > 0;
    }
}
