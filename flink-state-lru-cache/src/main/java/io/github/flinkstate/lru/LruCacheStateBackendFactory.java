package io.github.flinkstate.lru;

import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.runtime.state.StateBackendFactory;

/**
 * Creates {@link StateBackendWrapperWithLRUCache} for {@code state.backend.type:
 * io.github.flinkstate.lru.LruCacheStateBackendFactory}. Cheap and free of side effects: Flink
 * calls it on the JobManager and in every task.
 */
public class LruCacheStateBackendFactory
        implements StateBackendFactory<StateBackendWrapperWithLRUCache> {

    @Override
    public StateBackendWrapperWithLRUCache createFromConfig(
            ReadableConfig config, ClassLoader classLoader) throws IllegalConfigurationException {
        return StateBackendWrapperWithLRUCache.fromConfig(config, classLoader);
    }
}
