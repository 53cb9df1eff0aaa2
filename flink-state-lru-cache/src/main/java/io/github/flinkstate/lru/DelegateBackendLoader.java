package io.github.flinkstate.lru;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.runtime.state.AbstractStateBackend;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.StateBackendLoader;
import org.apache.flink.runtime.state.delegate.DelegatingStateBackend;

/**
 * Resolves {@link LruCacheOptions#DELEGATE} into a configured state backend, using Flink's own
 * loader with every other option passed through. Rejects delegates that cannot sit behind the
 * cache, with a message naming the option. Stateless.
 */
final class DelegateBackendLoader {

    /**
     * The delegate this thread is loading, or null: loading it can only come back here if the
     * delegate's chain of wrapping backends leads back to the cache (Flink's changelog factory
     * whose delegate is the cache; the cache's factory under another name), which would load the
     * two in turn until the stack overflowed.
     */
    private static final ThreadLocal<String> LOADING = new ThreadLocal<>();

    private DelegateBackendLoader() {}

    static AbstractStateBackend load(ReadableConfig config, ClassLoader classLoader) {
        String outer = LOADING.get();
        if (outer != null) {
            throw new IllegalConfigurationException(
                    "'"
                            + LruCacheOptions.DELEGATE.key()
                            + "' = '"
                            + outer
                            + "' leads back to the LRU cache (a loop of wrapping backends); choose"
                            + " the backend behind the cache, e.g. 'rocksdb' or 'hashmap', and put"
                            + " a changelog backend in front of the cache, not behind it");
        }
        try {
            LOADING.set(config.get(LruCacheOptions.DELEGATE));
            return loadUnguarded(config, classLoader);
        } finally {
            LOADING.remove();
        }
    }

    private static AbstractStateBackend loadUnguarded(
            ReadableConfig config, ClassLoader classLoader) {
        String name = config.get(LruCacheOptions.DELEGATE);
        if (name == null || name.trim().isEmpty()) {
            throw new IllegalConfigurationException(
                    "'"
                            + LruCacheOptions.DELEGATE.key()
                            + "' must name a state backend, e.g. 'rocksdb'");
        }
        name = name.trim();
        if (name.equals(LruCacheStateBackendFactory.class.getName())
                || name.equals(StateBackendWrapperWithLRUCache.class.getName())) {
            throw new IllegalConfigurationException(
                    "'"
                            + LruCacheOptions.DELEGATE.key()
                            + "' is '"
                            + name
                            + "', the LRU cache itself; choose the backend behind the cache,"
                            + " e.g. 'rocksdb' or 'hashmap'");
        }
        Configuration delegateConfig = new Configuration();
        if (config instanceof Configuration) {
            delegateConfig.addAll((Configuration) config);
        } else {
            config.toMap().forEach(delegateConfig::setString);
        }
        delegateConfig.set(StateBackendOptions.STATE_BACKEND, name);
        StateBackend backend;
        try {
            backend =
                    StateBackendLoader.loadStateBackendFromConfig(
                            delegateConfig, classLoader, null);
        } catch (Exception e) {
            throw new IllegalConfigurationException(
                    "Could not load the delegate backend '"
                            + name
                            + "' configured in '"
                            + LruCacheOptions.DELEGATE.key()
                            + "': "
                            + e.getMessage(),
                    e);
        }
        if (backend instanceof StateBackendWrapperWithLRUCache) {
            throw new IllegalConfigurationException(
                    "'"
                            + LruCacheOptions.DELEGATE.key()
                            + "' = '"
                            + name
                            + "' creates another LRU cache; choose the backend behind the cache");
        }
        if (backend instanceof DelegatingStateBackend) {
            throw new IllegalConfigurationException(
                    "'"
                            + LruCacheOptions.DELEGATE.key()
                            + "' = '"
                            + name
                            + "' is a wrapping backend ("
                            + backend.getClass().getName()
                            + "); put the LRU cache under the changelog backend instead"
                            + " (state.backend.changelog.delegate or state.changelog.enabled).");
        }
        if (!(backend instanceof AbstractStateBackend)) {
            throw new IllegalConfigurationException(
                    "'"
                            + LruCacheOptions.DELEGATE.key()
                            + "' = '"
                            + name
                            + "' loads "
                            + backend.getClass().getName()
                            + ", which is not an AbstractStateBackend; the cache cannot wrap it");
        }
        return (AbstractStateBackend) backend;
    }
}
