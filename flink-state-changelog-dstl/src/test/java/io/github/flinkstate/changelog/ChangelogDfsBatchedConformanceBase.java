package io.github.flinkstate.changelog;

import io.github.flinkstate.changelog.testutils.TestStorages;
import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.ChangelogWrappedStateBackendTestBase;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.ConfigurableStateBackend;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.StateBackendTestBase;
import org.apache.flink.runtime.state.TestTaskStateManager;
import org.apache.flink.runtime.state.storage.JobManagerCheckpointStorage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs Flink's {@link StateBackendTestBase} on Flink's {@code ChangelogStateBackend} with the
 * {@code dfs-batched} DSTL on the local file system as its changelog storage. Subclasses choose the
 * delegate. Two tests that Flink's changelog backend fails with any storage are disabled by {@link
 * ChangelogWrappedStateBackendTestBase} (shared with the LRU cache module's tests, from its test
 * jar).
 */
abstract class ChangelogDfsBatchedConformanceBase extends ChangelogWrappedStateBackendTestBase {

    @TempDir static java.nio.file.Path tmp;

    private final List<DfsBatchedChangelogStorage> storages = new ArrayList<>();

    protected abstract StateBackend createDelegate() throws Exception;

    /** The DSTL base directory; subclasses may put it on another file system. */
    protected Path basePath(File dir) {
        return new Path(dir.toURI());
    }

    @Override
    protected ConfigurableStateBackend getStateBackend() throws Exception {
        return (ConfigurableStateBackend)
                ChangelogStateBackendFactory.wrap(createDelegate(), getClass().getClassLoader());
    }

    @Override
    protected CheckpointStorage getCheckpointStorage() {
        return new JobManagerCheckpointStorage();
    }

    @Override
    protected TestTaskStateManager getTestTaskStateManager() throws IOException {
        File dir = new File(tmp.toFile(), UUID.randomUUID().toString());
        DfsBatchedChangelogStorage storage =
                TestStorages.storage(TestStorages.config(basePath(dir)), new File(dir, "local"));
        storages.add(storage);
        return TestTaskStateManager.builder().setStateChangelogStorage(storage).build();
    }

    @Override
    protected boolean snapshotUsesStreamFactory() {
        return false;
    }

    @Override
    protected boolean supportsAsynchronousSnapshots() {
        return false;
    }

    @AfterEach
    void closeStorages() throws Exception {
        for (DfsBatchedChangelogStorage storage : storages) {
            storage.getRegistry().checkInvariants();
            TestStorages.closeAndAwait(storage); // no upload writes into the deleted temp dir
        }
        storages.clear();
    }
}
