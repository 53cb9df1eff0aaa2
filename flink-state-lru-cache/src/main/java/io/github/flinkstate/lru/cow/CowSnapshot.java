package io.github.flinkstate.lru.cow;

import java.util.function.Consumer;

/**
 * A frozen view of a {@link CowLruMap}: its segment directory as it was when the snapshot was
 * taken. The segments and the entries reachable from them never change (see {@link CacheEntry}
 * invariants) until the snapshot is released with {@link CowLruMap#release(int)}.
 *
 * <p>Thread safety: may be read by one thread other than the map's writer.
 */
public final class CowSnapshot {

    private final int version;
    private final CacheEntry[][] segments;
    private final int size;

    CowSnapshot(int version, CacheEntry[][] segments, int size) {
        this.version = version;
        this.segments = segments;
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
        return segments.length * segments[0].length;
    }

    /** Visits every frozen entry (clean and dirty). */
    public void forEach(Consumer<CacheEntry> visitor) {
        for (CacheEntry[] segment : segments) {
            for (CacheEntry head : segment) {
                for (CacheEntry e = head; e != null; e = e.next) {
                    visitor.accept(e);
                }
            }
        }
    }
}
