package io.github.flinkstate.lru.cow;

import java.util.function.Consumer;

/**
 * A frozen view of a {@link CowLruMap}: the bucket array as it was when the snapshot was taken.
 * Entries reachable from it never change (see {@link CacheEntry} invariants) until the snapshot is
 * released with {@link CowLruMap#release(int)}.
 *
 * <p>Thread safety: may be read by one thread other than the map's writer.
 */
public final class CowSnapshot {

    private final int version;
    private final CacheEntry[] buckets;
    private final int size;

    CowSnapshot(int version, CacheEntry[] buckets, int size) {
        this.version = version;
        this.buckets = buckets;
        this.size = size;
    }

    public int version() {
        return version;
    }

    /** Number of entries (clean and dirty) the snapshot holds. */
    public int size() {
        return size;
    }

    public int bucketCount() {
        return buckets.length;
    }

    /** Visits every frozen entry (clean and dirty). */
    public void forEach(Consumer<CacheEntry> visitor) {
        for (CacheEntry head : buckets) {
            for (CacheEntry e = head; e != null; e = e.next) {
                visitor.accept(e);
            }
        }
    }
}
