package io.github.flinkstate.lru.migration;

import io.github.flinkstate.lru.StateBackendWrapperWithLRUCache;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.Collection;
import org.apache.flink.runtime.state.StateBackendMigrationTestBase;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameter;
import org.apache.flink.testutils.junit.extensions.parameterized.ParameterizedTestExtension;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameters;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Flink's state migration suite (serializer upgrades, reconfiguration, TTL changes) for the LRU
 * cache over RocksDB: a 1-entry cache (every access evicts, the delegate holds nearly everything)
 * and a 1,000,000-entry cache (every entry stays cached and dirty, so snapshots carry the cache
 * stream and restores replay it).
 */
@ExtendWith(ParameterizedTestExtension.class)
public class LruCacheOverRocksDbMigrationTest
        extends StateBackendMigrationTestBase<StateBackendWrapperWithLRUCache> {

    @Parameters(name = "cacheSize={0}")
    public static Collection<Object[]> parameters() {
        return Arrays.asList(new Object[] {1}, new Object[] {1_000_000});
    }

    @Parameter public int cacheSize;

    @Override
    protected StateBackendWrapperWithLRUCache getStateBackend() throws Exception {
        EmbeddedRocksDBStateBackend rocks = new EmbeddedRocksDBStateBackend(true);
        rocks.setDbStoragePath(
                Files.createTempDirectory(tempFolder, "lru-rocks").toAbsolutePath().toString());
        return new StateBackendWrapperWithLRUCache(rocks, cacheSize);
    }
}
