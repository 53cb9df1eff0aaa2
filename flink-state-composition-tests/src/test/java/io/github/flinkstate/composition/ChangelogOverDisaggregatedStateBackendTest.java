package io.github.flinkstate.composition;

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.state.ChangelogWrappedStateBackendTestBase;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.ConfigurableStateBackend;
import org.apache.flink.runtime.state.TestTaskStateManager;
import org.apache.flink.runtime.state.changelog.StateChangelogStorage;
import org.apache.flink.runtime.state.storage.JobManagerCheckpointStorage;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameter;
import org.apache.flink.testutils.junit.extensions.parameterized.ParameterizedTestExtension;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameters;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Flink's {@code StateBackendTestBase} over Flink's changelog backend with the disaggregated
 * backend as its delegate and our {@code dfs-batched} DSTL as its changelog storage, everything
 * loaded from one Flink {@link Configuration} ({@link
 * ComposedBackends#changelogOverDisaggregated}). The two suite methods that Flink's changelog
 * backend fails whatever its delegate and storage are disabled by {@link
 * ChangelogWrappedStateBackendTestBase}, as in the DSTL's and the LRU cache's changelog suites.
 */
@ExtendWith(ParameterizedTestExtension.class)
public class ChangelogOverDisaggregatedStateBackendTest
        extends ChangelogWrappedStateBackendTestBase {

    @TempDir static File tmp;

    @Parameters(name = "lru-cache-between={0}")
    public static List<Object[]> parameters() {
        return List.of(new Object[] {false}, new Object[] {true});
    }

    /**
     * Whether an LRU cache of one entry sits between the changelog and the disaggregated backend.
     */
    @Parameter public boolean lruCacheBetween;

    /** One folder per test case: primary directory and DSTL files. */
    private final File dir = new File(tmp, UUID.randomUUID().toString());

    private final List<StateChangelogStorage<?>> storages = new ArrayList<>();

    private Configuration config() {
        return lruCacheBetween
                ? ComposedBackends.changelogOverLruCacheOverDisaggregated(dir, 1)
                : ComposedBackends.changelogOverDisaggregated(dir);
    }

    @Override
    protected ConfigurableStateBackend getStateBackend() throws Exception {
        return (ConfigurableStateBackend) ComposedBackends.load(config());
    }

    @Override
    protected TestTaskStateManager getTestTaskStateManager() throws IOException {
        StateChangelogStorage<?> storage = ComposedBackends.changelogStorage(config());
        storages.add(storage);
        return TestTaskStateManager.builder().setStateChangelogStorage(storage).build();
    }

    @Override
    protected CheckpointStorage getCheckpointStorage() {
        return new JobManagerCheckpointStorage();
    }

    /** A changelog checkpoint writes to the changelog storage, not to the stream factory. */
    @Override
    protected boolean snapshotUsesStreamFactory() {
        return false;
    }

    @Override
    protected boolean isSerializerPresenceRequiredOnRestore() {
        return false;
    }

    @Override
    protected boolean supportsAsynchronousSnapshots() {
        return false;
    }

    @AfterEach
    void closeStorages() throws Exception {
        for (StateChangelogStorage<?> storage : storages) {
            ComposedBackends.closeAndAwait(storage);
        }
        storages.clear();
    }
}
