package io.github.flinkstate.lru.conformance;

import io.github.flinkstate.lru.StateBackendWrapperWithLRUCache;
import java.util.Arrays;
import java.util.Collection;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.ConfigurableStateBackend;
import org.apache.flink.runtime.state.StateBackendTestBase;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.runtime.state.storage.JobManagerCheckpointStorage;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameter;
import org.apache.flink.testutils.junit.extensions.parameterized.ParameterizedTestExtension;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameters;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Flink's conformance suite for the LRU cache over the HashMap backend, whose checkpoints are
 * key-group handles (the other envelope layout) and which shares value objects with the cache.
 */
@ExtendWith(ParameterizedTestExtension.class)
public class LruCacheOverHashMapStateBackendTest
        extends StateBackendTestBase<StateBackendWrapperWithLRUCache> {

    @Parameters(name = "cacheSize={0}")
    public static Collection<Object[]> parameters() {
        return Arrays.asList(new Object[] {1}, new Object[] {1_000_000});
    }

    @Parameter public int cacheSize;

    @Override
    protected ConfigurableStateBackend getStateBackend() {
        return new StateBackendWrapperWithLRUCache(new HashMapStateBackend(), cacheSize);
    }

    @Override
    protected CheckpointStorage getCheckpointStorage() {
        return new JobManagerCheckpointStorage();
    }

    @Override
    protected boolean isSerializerPresenceRequiredOnRestore() {
        return true;
    }

    @Override
    protected boolean supportsAsynchronousSnapshots() {
        return true;
    }
}
