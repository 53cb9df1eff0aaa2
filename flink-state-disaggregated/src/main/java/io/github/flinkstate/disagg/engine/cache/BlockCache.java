package io.github.flinkstate.disagg.engine.cache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;

import java.io.IOException;

/**
 * An in-memory cache of verified block payloads, weighted by bytes and shareable by any number
 * of stores (keys carry the full file path, which is globally unique).
 *
 * <p>Thread safety: thread-safe (backed by Caffeine). Payload arrays handed out are shared and
 * must never be modified.
 *
 * <p>Invariants:
 *
 * <ol>
 *   <li>Only payloads whose CRC32C was verified are inserted.
 *   <li>The total weight (payload bytes plus {@link #ENTRY_OVERHEAD} per entry) stays at or below
 *       the capacity, up to Caffeine's eviction lag.
 * </ol>
 */
public final class BlockCache {

    /** Approximate per-entry bookkeeping charge in bytes. */
    public static final int ENTRY_OVERHEAD = 96;

    /** Cache key: file path and block offset. */
    public record Key(String file, long offset) {}

    /** Loads a block payload on a miss. */
    @FunctionalInterface
    public interface Loader {
        byte[] load() throws IOException;
    }

    private final Cache<Key, byte[]> cache;
    private final long capacityBytes;

    public BlockCache(long capacityBytes) {
        this.capacityBytes = capacityBytes;
        this.cache = Caffeine.newBuilder()
                .maximumWeight(capacityBytes)
                .weigher((Key k, byte[] v) -> v.length + ENTRY_OVERHEAD)
                .executor(Runnable::run)
                .recordStats()
                .build();
    }

    /** Returns the cached payload or loads, caches and returns it. */
    public byte[] get(String file, long offset, Loader loader) throws IOException {
        Key key = new Key(file, offset);
        byte[] hit = cache.getIfPresent(key);
        if (hit != null) {
            return hit;
        }
        byte[] loaded = loader.load();
        if (capacityBytes > 0) {
            cache.put(key, loaded);
        }
        return loaded;
    }

    /** Drops all cached blocks of one file (e.g. after it was deleted). */
    public void invalidateFile(String file) {
        cache.asMap().keySet().removeIf(k -> k.file().equals(file));
    }

    public long capacityBytes() {
        return capacityBytes;
    }

    /** Current total weight in bytes (after pending maintenance). */
    public long weightedSize() {
        cache.cleanUp();
        return cache.policy().eviction().map(e -> e.weightedSize().orElse(0L)).orElse(0L);
    }

    public long hitCount() {
        return cache.stats().hitCount();
    }

    public long requestCount() {
        return cache.stats().requestCount();
    }

    /** Used by tests: checks the weight bound. */
    public void checkInvariants() {
        long w = weightedSize();
        if (w > capacityBytes) {
            throw new IllegalStateException("block cache weight " + w + " > " + capacityBytes);
        }
    }
}
