package io.github.flinkstate.composition;

import io.github.flinkstate.lru.StateBackendWrapperWithLRUCache;
import java.io.File;
import java.util.List;
import java.util.UUID;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.ConfigurableStateBackend;
import org.apache.flink.runtime.state.StateBackendTestBase;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameter;
import org.apache.flink.testutils.junit.extensions.parameterized.ParameterizedTestExtension;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameters;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Flink's {@code StateBackendTestBase} over the LRU cache with the disaggregated backend as its
 * delegate, loaded from a Flink {@code Configuration} ({@link
 * ComposedBackends#lruCacheOverDisaggregated}); a one-entry cache, so nearly every access evicts to
 * (and reads back from) the disaggregated backend.
 */
@ExtendWith(ParameterizedTestExtension.class)
public class LruCacheOverDisaggregatedStateBackendTest
        extends StateBackendTestBase<StateBackendWrapperWithLRUCache> {

    @TempDir static File tmp;

    @Parameters(name = "max-entries-num={0}")
    public static List<Object[]> parameters() {
        return List.<Object[]>of(new Object[] {1});
    }

    @Parameter public int maxEntries;

    /** One folder per test case: primary directory and checkpoints. */
    private final File dir = new File(tmp, UUID.randomUUID().toString());

    @Override
    protected ConfigurableStateBackend getStateBackend() throws Exception {
        return (ConfigurableStateBackend)
                ComposedBackends.load(ComposedBackends.lruCacheOverDisaggregated(dir, maxEntries));
    }

    @Override
    protected CheckpointStorage getCheckpointStorage() {
        return new FileSystemCheckpointStorage(new File(dir, "checkpoints").toURI().toString());
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
