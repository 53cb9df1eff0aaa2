package io.github.flinkstate.lru.conformance;

import io.github.flinkstate.lru.StateBackendWrapperWithLRUCache;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.runtime.state.ttl.StateBackendTestContext;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;

/**
 * Builds the TTL suite's backend contexts: the LRU cache of a given size over RocksDB or HashMap.
 * Over RocksDB the suite's 16 "snapshot cleanup" cases are disabled ({@code
 * RocksDbDelegateTtlStateTestBase}) because plain RocksDB fails them in this harness too; over
 * HashMap, whose snapshots drop expired values, they run.
 */
final class LruCacheTtlStateTestSupport {

    private LruCacheTtlStateTestSupport() {}

    static StateBackendTestContext rocksDbContext(
            TtlTimeProvider timeProvider, int cacheSize, Path tmp) {
        return new StateBackendTestContext(timeProvider) {
            @Override
            protected StateBackend createStateBackend() {
                EmbeddedRocksDBStateBackend rocks = new EmbeddedRocksDBStateBackend(true);
                try {
                    rocks.setDbStoragePath(Files.createTempDirectory(tmp, "rocks").toString());
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                return new StateBackendWrapperWithLRUCache(rocks, cacheSize);
            }
        };
    }

    static StateBackendTestContext hashMapContext(TtlTimeProvider timeProvider, int cacheSize) {
        return new StateBackendTestContext(timeProvider) {
            @Override
            protected StateBackend createStateBackend() {
                return new StateBackendWrapperWithLRUCache(new HashMapStateBackend(), cacheSize);
            }
        };
    }
}
