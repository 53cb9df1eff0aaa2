package io.github.flinkstate.lru.migration;

import io.github.flinkstate.lru.StateBackendWrapperWithLRUCache;
import java.util.Arrays;
import java.util.Collection;
import org.apache.flink.runtime.state.StateBackendMigrationTestBase;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameter;
import org.apache.flink.testutils.junit.extensions.parameterized.ParameterizedTestExtension;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameters;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Flink's state migration suite (serializer upgrades, reconfiguration, TTL changes) for the LRU
 * cache over the HashMap backend, with a 1-entry and a 1,000,000-entry cache.
 */
@ExtendWith(ParameterizedTestExtension.class)
public class LruCacheOverHashMapMigrationTest
        extends StateBackendMigrationTestBase<StateBackendWrapperWithLRUCache> {

    @Parameters(name = "cacheSize={0}")
    public static Collection<Object[]> parameters() {
        return Arrays.asList(new Object[] {1}, new Object[] {1_000_000});
    }

    @Parameter public int cacheSize;

    @Override
    protected StateBackendWrapperWithLRUCache getStateBackend() {
        return new StateBackendWrapperWithLRUCache(new HashMapStateBackend(), cacheSize);
    }
}
