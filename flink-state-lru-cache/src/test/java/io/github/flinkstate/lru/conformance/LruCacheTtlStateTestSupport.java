package io.github.flinkstate.lru.conformance;

import io.github.flinkstate.lru.StateBackendWrapperWithLRUCache;

import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.runtime.state.ttl.StateBackendTestContext;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;


/**
 * Builds the TTL suite's backend context: the LRU cache of a given size over HashMap.
 *
 * <p>Over RocksDB, the suite's 16 "snapshot cleanup" cases fail for plain RocksDB in this harness
 * too (its snapshots keep expired entries), so the suite runs over HashMap, whose snapshots drop
 * them; see docs/lru-cache.md.
 */
final class LruCacheTtlStateTestSupport {

    private LruCacheTtlStateTestSupport() {}

    static StateBackendTestContext hashMapContext(TtlTimeProvider timeProvider, int cacheSize) {
        return new StateBackendTestContext(timeProvider) {
            @Override
            protected StateBackend createStateBackend() {
                return new StateBackendWrapperWithLRUCache(new HashMapStateBackend(), cacheSize);
            }
        };
    }
}
