package io.github.flinkstate.benchmarks.jmh;

import io.github.flinkstate.lru.StateBackendWrapperWithLRUCache;

import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;

import java.io.File;

/**
 * The state backends the JMH state benchmarks compare, selected by the {@code backend} {@code
 * @Param}.
 *
 * <p>The LRU variants wrap RocksDB in {@link StateBackendWrapperWithLRUCache}. Their size is a
 * fraction of the cache entries the benchmark can touch ({@code workingSetEntries}: keys times
 * entries per key, map state counting one entry per user key). With the uniformly random keys of
 * {@link StateWorkload} the hit ratio of reads is about that fraction:
 *
 * <ul>
 *   <li>{@code LRU_0}: 1/1000 of the working set (at least one entry): about 0% hits, every
 *       access goes through RocksDB plus the cache's miss path;
 *   <li>{@code LRU_50}: half of the working set: about 50% hits;
 *   <li>{@code LRU_100}: twice the working set, so the set-up keys and all new keys of the "add"
 *       operations fit: 100% hits, nothing is ever evicted.
 * </ul>
 *
 * <p>Not listed yet: the changelog backend with our DSTL and the disaggregated backend (their
 * modules are not ready).
 */
public enum BenchmarkBackend {
    HASHMAP,
    ROCKSDB,
    LRU_0,
    LRU_50,
    LRU_100;

    /**
     * A new, unconfigured backend instance.
     *
     * @param dbDir directory for RocksDB's files (unused by HASHMAP)
     * @param workingSetEntries cache entries the benchmark can touch (sizes the LRU variants)
     */
    public StateBackend create(File dbDir, long workingSetEntries) {
        switch (this) {
            case HASHMAP:
                return new HashMapStateBackend();
            case ROCKSDB:
                return rocksDb(dbDir);
            default:
                return new StateBackendWrapperWithLRUCache(rocksDb(dbDir), cacheEntries(workingSetEntries));
        }
    }

    /** The LRU cache size for this variant, or 0 for the plain backends. */
    public int cacheEntries(long workingSetEntries) {
        long entries;
        switch (this) {
            case LRU_0:
                entries = Math.max(1, workingSetEntries / 1000);
                break;
            case LRU_50:
                entries = Math.max(1, workingSetEntries / 2);
                break;
            case LRU_100:
                entries = 2 * workingSetEntries;
                break;
            default:
                return 0;
        }
        return (int) Math.min(Integer.MAX_VALUE, entries);
    }

    private static StateBackend rocksDb(File dbDir) {
        EmbeddedRocksDBStateBackend rocks = new EmbeddedRocksDBStateBackend(true);
        rocks.setDbStoragePath(dbDir.getAbsolutePath());
        return rocks;
    }
}
