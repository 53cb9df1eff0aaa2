package io.github.flinkstate.disagg.engine.cache;

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * A slab of the {@link DiskCache}: blocks of any files appended one after another to one local
 * file. Blocks are never removed from a slab one by one; the whole slab is evicted, which frees its
 * space at once (a log-structured layout: no holes, no compaction of the cache itself).
 *
 * <p>Thread safety: {@link #allocate} and {@link #keys} are guarded by the owning cache's lock;
 * {@link #write} runs outside it, into a range only its caller was allocated.
 */
final class DiskSlab extends DiskUnit {

    final int capacity;

    /** Next free position; guarded by the cache's lock. */
    private int end;

    /** Keys of the index entries pointing into this slab; guarded by the cache's lock. */
    final List<DiskCache.BlockKey> keys = new ArrayList<>();

    /**
     * Once evicted for the capacity: the keys of the used blocks chosen to move (within {@link
     * DiskCache#MOST_BYTES_MOVED}), which stay in the index, pointing here, until they are moved to
     * the newest slab or forgotten; empty before. Guarded by the cache's lock.
     */
    Set<DiskCache.BlockKey> leaving = Set.of();

    DiskSlab(File file, int capacity) throws IOException {
        super(file);
        this.capacity = capacity;
        open(true);
    }

    /** Reserves {@code length} bytes; returns their position, or -1 if the slab is full. */
    int allocate(int length) {
        if (end + length > capacity) {
            return -1;
        }
        int at = end;
        end += length;
        bytes = end;
        return at;
    }
}
