package io.github.flinkstate.lru.conformance;

import org.apache.flink.runtime.state.ttl.StateBackendTestContext;
import org.apache.flink.runtime.state.ttl.TtlStateTestBase;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;

/** Flink's TTL suite with a 1-entry cache over HashMap: every access evicts. */
public class LruCacheTinyCacheHashMapTtlStateTest extends TtlStateTestBase {

    @Override
    protected StateBackendTestContext createStateBackendTestContext(TtlTimeProvider timeProvider) {
        return LruCacheTtlStateTestSupport.hashMapContext(timeProvider, 1);
    }
}
