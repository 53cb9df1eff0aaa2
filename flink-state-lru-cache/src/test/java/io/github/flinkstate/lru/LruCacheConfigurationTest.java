package io.github.flinkstate.lru;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.StateBackendLoader;
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

    @Test
    void zeroSizeIsPassThrough() throws Exception {
        Configuration config = new Configuration();
        config.set(LruCacheOptions.MAX_ENTRIES_NUM, 0);
        assertThat(((StateBackendWrapperWithLRUCache) load(config)).getMaxEntries()).isZero();
    }
}
