package io.github.flinkstate.lru.conformance;

import io.github.flinkstate.lru.StateBackendWrapperWithLRUCache;
import java.lang.reflect.Constructor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collection;
import org.apache.flink.runtime.state.ChangelogWrappedStateBackendTestBase;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.ConfigurableStateBackend;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.TestTaskStateManager;
import org.apache.flink.runtime.state.changelog.inmemory.InMemoryStateChangelogStorage;
import org.apache.flink.runtime.state.storage.JobManagerCheckpointStorage;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameter;
import org.apache.flink.testutils.junit.extensions.parameterized.ParameterizedTestExtension;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameters;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Flink's conformance suite for Flink's own {@code ChangelogStateBackend} with the LRU cache (over
 * RocksDB) as its delegate: the changelog wrapper casts the delegate to AbstractKeyedStateBackend,
 * re-registers states with {@code allowFutureMetadataUpdates}, and materializes through the cache's
 * snapshots.
 */
@ExtendWith(ParameterizedTestExtension.class)
public class ChangelogOverLruCacheStateBackendTest extends ChangelogWrappedStateBackendTestBase {

    @Parameters(name = "cacheSize={0}")
    public static Collection<Object[]> parameters() {
        return Arrays.asList(new Object[] {16}, new Object[] {1_000_000});
    }

    @Parameter public int cacheSize;

    /** RocksDB's working directories; a temp directory of its own per backend leaked 576 a run. */
    @TempDir Path rocksDirs;

    /**
     * Periodic materialization runs on a timer thread that would race the test thread, and Flink's
     * changelog backend stops it only on close(), which the suite does not always call. The
     * materialization path (our snapshot) is covered by the other suites.
     */
    @BeforeEach
    void disablePeriodicMaterialization() {
        env.getExecutionConfig().enablePeriodicMaterialize(false);
    }

    @Override
    protected TestTaskStateManager getTestTaskStateManager() {
        return TestTaskStateManager.builder()
                .setStateChangelogStorage(new InMemoryStateChangelogStorage())
                .build();
    }

    @Override
    protected ConfigurableStateBackend getStateBackend() throws Exception {
        EmbeddedRocksDBStateBackend rocks = new EmbeddedRocksDBStateBackend(true);
        rocks.setDbStoragePath(Files.createTempDirectory(rocksDirs, "rocks").toString());
        StateBackend lru = new StateBackendWrapperWithLRUCache(rocks, cacheSize);
        // Flink's ChangelogStateBackend constructor is package-private; Flink itself builds it
        // reflectively (StateBackendLoader), and so do we.
        Constructor<?> constructor =
                Class.forName("org.apache.flink.state.changelog.ChangelogStateBackend")
                        .getDeclaredConstructor(StateBackend.class);
        constructor.setAccessible(true);
        return (ConfigurableStateBackend) constructor.newInstance(lru);
    }

    /** A changelog checkpoint writes to the changelog storage, not to the stream factory. */
    @Override
    protected boolean snapshotUsesStreamFactory() {
        return false;
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
