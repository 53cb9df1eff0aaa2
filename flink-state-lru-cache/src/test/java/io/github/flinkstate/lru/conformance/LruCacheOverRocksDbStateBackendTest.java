package io.github.flinkstate.lru.conformance;

import io.github.flinkstate.lru.StateBackendWrapperWithLRUCache;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collection;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.ConfigurableStateBackend;
import org.apache.flink.runtime.state.StateBackendTestBase;
import org.apache.flink.runtime.state.storage.JobManagerCheckpointStorage;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameter;
import org.apache.flink.testutils.junit.extensions.parameterized.ParameterizedTestExtension;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameters;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Flink's own keyed-backend conformance suite for the LRU cache over RocksDB: with a 1-entry and a
 * 16-entry cache (nearly every access evicts) and with a cache large enough for 100% hits.
 */
@ExtendWith(ParameterizedTestExtension.class)
public class LruCacheOverRocksDbStateBackendTest
        extends StateBackendTestBase<StateBackendWrapperWithLRUCache> {

    @Parameters(name = "cacheSize={0}")
    public static Collection<Object[]> parameters() {
        return Arrays.asList(new Object[] {1}, new Object[] {16}, new Object[] {1_000_000});
    }

    @Parameter public int cacheSize;

    @TempDir Path tmp;

    @Override
    protected ConfigurableStateBackend getStateBackend() throws Exception {
        EmbeddedRocksDBStateBackend rocks = new EmbeddedRocksDBStateBackend(true);
        rocks.setDbStoragePath(Files.createTempDirectory(tmp, "rocks").toString());
        return new StateBackendWrapperWithLRUCache(rocks, cacheSize);
    }

    @Override
    protected CheckpointStorage getCheckpointStorage() {
        return new JobManagerCheckpointStorage();
    }

    @Override
    protected boolean isSerializerPresenceRequiredOnRestore() {
        return false;
    }

    @Override
    protected boolean supportsAsynchronousSnapshots() {
        return true;
    }
}
