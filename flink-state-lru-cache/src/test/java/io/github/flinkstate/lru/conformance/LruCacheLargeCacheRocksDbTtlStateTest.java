package io.github.flinkstate.lru.conformance;

import java.nio.file.Path;
import org.apache.flink.runtime.state.ttl.RocksDbDelegateTtlStateTestBase;
import org.apache.flink.runtime.state.ttl.StateBackendTestContext;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.junit.jupiter.api.io.TempDir;

/** Flink's TTL suite with a cache large enough for 100% hits over RocksDB. */
public class LruCacheLargeCacheRocksDbTtlStateTest extends RocksDbDelegateTtlStateTestBase {

    @TempDir Path tmp;

    @Override
    protected StateBackendTestContext createStateBackendTestContext(TtlTimeProvider timeProvider) {
        return LruCacheTtlStateTestSupport.rocksDbContext(timeProvider, 1_000_000, tmp);
    }
}
