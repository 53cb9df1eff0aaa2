package io.github.flinkstate.lru.conformance;

import org.apache.flink.runtime.state.ttl.StateBackendTestContext;
import org.apache.flink.runtime.state.ttl.TtlStateTestBase;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;

/** Flink's TTL suite with a cache large enough for 100% hits over HashMap. */
public class LruCacheLargeCacheHashMapTtlStateTest extends TtlStateTestBase {

    @Override
    protected StateBackendTestContext createStateBackendTestContext(TtlTimeProvider timeProvider) {
        return LruCacheTtlStateTestSupport.hashMapContext(timeProvider, 1_000_000);
    }
}
