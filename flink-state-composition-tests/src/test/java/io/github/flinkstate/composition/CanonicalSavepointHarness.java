package io.github.flinkstate.composition;

import java.io.File;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.local.LocalFileSystem;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.SavepointType;
import org.apache.flink.runtime.checkpoint.metadata.MetadataRoundTrip;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.CheckpointableKeyedStateBackend;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SavepointResources;
import org.apache.flink.runtime.state.SavepointSnapshotStrategy;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.SnapshotStrategyRunner;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.TestTaskStateManager;
import org.apache.flink.runtime.state.changelog.StateChangelogStorage;
import org.apache.flink.runtime.state.filesystem.FsCheckpointStreamFactory;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;

/**
 * Keyed backends ({@code String} keys) of any backend a {@link Configuration} names, created on one
 * {@link MockEnvironment} with a checkpoint storage and a task state manager that holds the
 * changelog storage a configuration names (Flink's changelog backend needs both); canonical
 * savepoints of them taken as Flink's {@code StreamOperatorStateHandler} takes them ({@code
 * savepoint()} of the outermost keyed backend on the task thread, then a {@link
 * SavepointSnapshotStrategy} run by a {@link SnapshotStrategyRunner}); the handles round-tripped
 * through checkpoint metadata and clipped to a subtask's key groups as Flink's state assignment
 * clips them.
 *
 * <p>Thread safety: test thread only. Lifecycle: {@link #close()} disposes every backend it
 * created, then the changelog storage and the environment.
 */
final class CanonicalSavepointHarness implements AutoCloseable {

    private final File dir;
    private final int maxParallelism;
    private final StateChangelogStorage<?> changelogStorage;
    private final MockEnvironment env;
    private final List<CheckpointableKeyedStateBackend<?>> created = new ArrayList<>();
    private long nextSavepointId = 1;

    /**
     * @param dir savepoints are written under {@code dir/savepoint}
     * @param changelogConfig names the changelog storage (our DSTL) of every backend created here
     */
    CanonicalSavepointHarness(File dir, int maxParallelism, Configuration changelogConfig)
            throws Exception {
        this.dir = dir;
        this.maxParallelism = maxParallelism;
        this.changelogStorage = ComposedBackends.changelogStorage(changelogConfig);
        this.env =
                MockEnvironment.builder()
                        .setManagedMemorySize(64L << 20)
                        .setTaskStateManager(
                                TestTaskStateManager.builder()
                                        .setStateChangelogStorage(changelogStorage)
                                        .build())
                        .build();
        // Flink's changelog backend asks the environment for its checkpoint storage on creation
        env.setCheckpointStorageAccess(
                new FileSystemCheckpointStorage(new File(dir, "checkpoints").toURI().toString())
                        .createCheckpointStorage(new JobID()));
    }

    /** The key groups of subtask {@code index} of {@code parallelism}. */
    KeyGroupRange range(int parallelism, int index) {
        return KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex(
                maxParallelism, parallelism, index);
    }

    /** A keyed backend of {@code config}'s state backend, restored from {@code handles}. */
    @SuppressWarnings("unchecked")
    CheckpointableKeyedStateBackend<String> create(
            Configuration config, KeyGroupRange range, List<KeyedStateHandle> handles)
            throws Exception {
        StateBackend backend = ComposedBackends.load(config);
        CheckpointableKeyedStateBackend<String> b =
                backend.createKeyedStateBackend(
                        new KeyedStateBackendParametersImpl<>(
                                env,
                                new JobID(),
                                "savepointed-operator",
                                StringSerializer.INSTANCE,
                                maxParallelism,
                                range,
                                env.getTaskKvStateRegistry(),
                                TtlTimeProvider.DEFAULT,
                                new UnregisteredMetricsGroup(),
                                handles,
                                new CloseableRegistry()));
        created.add(b);
        return b;
    }

    /**
     * A canonical savepoint of {@code b} (null if {@code b} holds no state), after a round trip
     * through checkpoint metadata.
     */
    KeyedStateHandle savepoint(CheckpointableKeyedStateBackend<String> b) throws Exception {
        SavepointResources<String> resources = b.savepoint();
        var future =
                new SnapshotStrategyRunner<>(
                                "canonical savepoint",
                                new SavepointSnapshotStrategy<>(resources.getSnapshotResources()),
                                new CloseableRegistry(),
                                resources.getPreferredSnapshotExecutionType())
                        .snapshot(
                                nextSavepointId++,
                                System.currentTimeMillis(),
                                savepointStreams(),
                                new CheckpointOptions(
                                        SavepointType.savepoint(SavepointFormatType.CANONICAL),
                                        CheckpointStorageLocationReference.getDefault()));
        if (!future.isDone()) {
            future.run(); // the asynchronous part, here on the test thread
        }
        SnapshotResult<KeyedStateHandle> result = future.get();
        KeyedStateHandle handle = result.getJobManagerOwnedSnapshot();
        return handle == null
                ? null
                : MetadataRoundTrip.roundTrip(handle, savepointDir().toURI().toString());
    }

    /** {@code handles} clipped to {@code range}, as Flink assigns them to a subtask. */
    static List<KeyedStateHandle> assign(List<KeyedStateHandle> handles, KeyGroupRange range) {
        List<KeyedStateHandle> assigned = new ArrayList<>();
        for (KeyedStateHandle handle : handles) {
            KeyedStateHandle clipped = ((KeyGroupsStateHandle) handle).getIntersection(range);
            if (clipped != null) {
                assigned.add(clipped);
            }
        }
        return assigned;
    }

    private File savepointDir() {
        return new File(dir, "savepoint");
    }

    /** Streams into the savepoint directory; files of 1 KiB and more, smaller state inline. */
    private FsCheckpointStreamFactory savepointStreams() throws Exception {
        File sp = savepointDir();
        sp.mkdirs();
        // relative file handles resolve against the directory of the savepoint's metadata file
        new File(sp, "_metadata").createNewFile();
        Path path = new Path(sp.toURI());
        return new FsCheckpointStreamFactory(
                LocalFileSystem.getSharedInstance(), path, path, 1024, 4096);
    }

    @Override
    public void close() throws Exception {
        for (CheckpointableKeyedStateBackend<?> b : created) {
            b.dispose();
        }
        changelogStorage.close();
        env.close();
    }
}
