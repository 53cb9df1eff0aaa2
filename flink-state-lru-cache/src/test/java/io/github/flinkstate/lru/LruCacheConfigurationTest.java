package io.github.flinkstate.lru;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.runtime.state.CheckpointableKeyedStateBackend;
import org.apache.flink.runtime.state.OperatorStateBackend;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.StateBackendLoader;
import org.apache.flink.runtime.state.delegate.DelegatingStateBackend;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.junit.jupiter.api.Test;

/** Loading through {@code state.backend.type} and the errors for wrong configuration. */
class LruCacheConfigurationTest {

    private static final ClassLoader CL = LruCacheConfigurationTest.class.getClassLoader();

    private static StateBackend load(Configuration config) throws Exception {
        config.set(StateBackendOptions.STATE_BACKEND, LruCacheStateBackendFactory.class.getName());
        return StateBackendLoader.loadStateBackendFromConfig(config, CL, null);
    }

    @Test
    void loadsThroughStateBackendTypeWithRocksDbByDefault() throws Exception {
        Configuration config = new Configuration();
        config.set(LruCacheOptions.MAX_ENTRIES_NUM, 500);
        StateBackend backend = load(config);
        assertThat(backend).isInstanceOf(StateBackendWrapperWithLRUCache.class);
        StateBackendWrapperWithLRUCache lru = (StateBackendWrapperWithLRUCache) backend;
        assertThat(lru.getMaxEntries()).isEqualTo(500);
        assertThat(lru.getDelegate()).isInstanceOf(EmbeddedRocksDBStateBackend.class);
        assertThat(lru.supportsNoClaimRestoreMode()).isTrue();
    }

    @Test
    void acceptsHashMapAndFactoryClassNamesAsDelegate() throws Exception {
        Configuration config = new Configuration();
        config.set(LruCacheOptions.DELEGATE, "hashmap");
        assertThat(((StateBackendWrapperWithLRUCache) load(config)).getDelegate())
                .isInstanceOf(HashMapStateBackend.class);
        config.set(
                LruCacheOptions.DELEGATE,
                "org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackendFactory");
        assertThat(((StateBackendWrapperWithLRUCache) load(config)).getDelegate())
                .isInstanceOf(EmbeddedRocksDBStateBackend.class);
    }

    @Test
    void passesOtherOptionsToTheDelegate() throws Exception {
        Configuration config = new Configuration();
        config.setString("execution.checkpointing.incremental", "true");
        EmbeddedRocksDBStateBackend rocks =
                (EmbeddedRocksDBStateBackend)
                        ((StateBackendWrapperWithLRUCache) load(config)).getDelegate();
        assertThat(rocks.isIncrementalCheckpointsEnabled()).isTrue();
    }

    @Test
    void negativeSizeNamesTheOption() {
        Configuration config = new Configuration();
        config.set(LruCacheOptions.MAX_ENTRIES_NUM, -1);
        assertThatThrownBy(() -> load(config))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("state.backend.cache.max-entries-num");
    }

    @Test
    void unknownDelegateNamesTheOption() {
        Configuration config = new Configuration();
        config.set(LruCacheOptions.DELEGATE, "com.example.NoSuchFactory");
        assertThatThrownBy(() -> load(config))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("state.backend.cache.delegate")
                .hasMessageContaining("com.example.NoSuchFactory");
    }

    @Test
    void cacheAsItsOwnDelegateNamesTheOption() {
        Configuration config = new Configuration();
        config.set(LruCacheOptions.DELEGATE, LruCacheStateBackendFactory.class.getName());
        assertThatThrownBy(() -> load(config))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("state.backend.cache.delegate");
    }

    /** A factory of the cache under another name, which the check by name does not know. */
    public static final class RenamedCacheFactory extends LruCacheStateBackendFactory {}

    /**
     * A delegate that leads back to the cache (here the cache's factory under another name; in a
     * real set-up Flink's changelog factory whose delegate is the cache) is refused naming the
     * option, instead of loading itself until the stack overflows.
     */
    @Test
    void aDelegateLoopThroughTheCache_isRefusedNamingTheOption() {
        Configuration config = new Configuration();
        config.set(LruCacheOptions.DELEGATE, RenamedCacheFactory.class.getName());
        assertThatThrownBy(() -> load(config))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("state.backend.cache.delegate")
                .hasStackTraceContaining("loop");
    }

    /** A wrapping backend, as Flink's changelog backend is; never asked for state here. */
    private static final class WrappingBackend implements DelegatingStateBackend {
        @Override
        public StateBackend getDelegatedStateBackend() {
            return new HashMapStateBackend();
        }

        @Override
        public <K> CheckpointableKeyedStateBackend<K> createKeyedStateBackend(
                KeyedStateBackendParameters<K> parameters) {
            throw new UnsupportedOperationException();
        }

        @Override
        public OperatorStateBackend createOperatorStateBackend(
                OperatorStateBackendParameters parameters) {
            throw new UnsupportedOperationException();
        }
    }

    /**
     * A job that builds the cache in code over Flink's changelog backend passed the submission and
     * then failed on every task deployment with a message that did not name the option; the
     * constructor now refuses it as the factory does (found in a review).
     */
    @Test
    void aWrappingDelegateGivenInCode_isRefusedNamingTheOption() {
        assertThatThrownBy(() -> new StateBackendWrapperWithLRUCache(new WrappingBackend(), 10))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining(LruCacheOptions.DELEGATE.key())
                .hasMessageContaining("changelog");
    }

    @Test
    void zeroSizeIsPassThrough() throws Exception {
        Configuration config = new Configuration();
        config.set(LruCacheOptions.MAX_ENTRIES_NUM, 0);
        assertThat(((StateBackendWrapperWithLRUCache) load(config)).getMaxEntries()).isZero();
    }
}
