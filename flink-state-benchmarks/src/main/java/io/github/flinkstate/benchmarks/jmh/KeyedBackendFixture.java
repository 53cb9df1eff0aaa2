package io.github.flinkstate.benchmarks.jmh;

import io.github.flinkstate.benchmarks.common.MockTaskKeyedBackends;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.operators.testutils.MockEnvironmentBuilder;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.CheckpointableKeyedStateBackend;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.TestTaskStateManager;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.changelog.StateChangelogStorage;
import org.apache.flink.util.FileUtils;

/**
 * One keyed state backend with {@code Long} keys, built directly (no job, no operator) on Flink's
 * {@link MockEnvironment}, as a Flink task would build it: 128 key groups, all owned, and 256 MB of
 * managed memory (RocksDB's block cache and write buffers come out of it).
 *
 * <p>Every variant gets a file-system checkpoint storage in the temporary directory as the
 * environment's checkpoint storage access (the changelog, ForSt and disaggregated backends ask for
 * it; the disaggregated backend's primary directory is under it). No checkpoint is taken. The
 * changelog variants get a changelog storage (DSTL) in the temporary directory, handed to the
 * backend through the environment's {@link TestTaskStateManager}, and periodic materialization is
 * disabled in the environment's execution config.
 *
 * <p>Not thread-safe. Lifecycle: {@link #open} creates the backend and a temporary directory;
 * {@link #close} disposes the backend and deletes the directory.
 */
public final class KeyedBackendFixture implements AutoCloseable {

    public static final int MAX_PARALLELISM = MockTaskKeyedBackends.MAX_PARALLELISM;
    public static final long MANAGED_MEMORY_BYTES = 256L << 20;

    private final File dir;
    private final MockEnvironment env;
    private final CheckpointableKeyedStateBackend<Long> backend;
    private final StateChangelogStorage<?> changelogStorage;

    private KeyedBackendFixture(
            File dir,
            MockEnvironment env,
            CheckpointableKeyedStateBackend<Long> backend,
            StateChangelogStorage<?> changelogStorage) {
        this.dir = dir;
        this.env = env;
        this.backend = backend;
        this.changelogStorage = changelogStorage;
    }

    /** Creates the keyed backend of {@code kind}, sized for {@code workingSetEntries}. */
    public static KeyedBackendFixture open(BenchmarkBackend kind, long workingSetEntries)
            throws Exception {
        File dir = Files.createTempDirectory("flinkstate-jmh-").toFile();
        JobID jobId = new JobID();
        StateChangelogStorage<?> changelogStorage = null;
        MockEnvironment env = null;
        try {
            MockEnvironmentBuilder builder =
                    new MockEnvironmentBuilder()
                            .setJobID(jobId)
                            .setManagedMemorySize(MANAGED_MEMORY_BYTES);
            if (kind.isChangelog()) {
                changelogStorage = kind.createChangelogStorage(jobId, new File(dir, "dstl"));
                builder.setTaskStateManager(
                        TestTaskStateManager.builder()
                                .setJobID(jobId)
                                .setStateChangelogStorage(changelogStorage)
                                .build());
            }
            env = builder.build();
            // Materialization off: the benchmarks measure the cost of logging changes.
            env.getExecutionConfig().enablePeriodicMaterialize(false);
            // The changelog, disaggregated and ForSt backends ask the environment for its
            // checkpoint storage (ForSt fails with a NullPointerException without it); no
            // checkpoint is taken. The disaggregated backend keeps its primary directory under it.
            MockTaskKeyedBackends.attachCheckpointStorage(
                    env, jobId, new Path(new File(dir, "checkpoints").toURI()));
            StateBackend stateBackend = kind.create(new File(dir, "db"), workingSetEntries);
            CheckpointableKeyedStateBackend<Long> backend =
                    MockTaskKeyedBackends.create(
                            stateBackend, env, jobId, "jmh-" + kind.name().toLowerCase(), null);
            return new KeyedBackendFixture(dir, env, backend, changelogStorage);
        } catch (Exception e) {
            try {
                if (env != null) {
                    env.close();
                }
                if (changelogStorage != null) {
                    changelogStorage.close();
                }
            } catch (Exception suppressed) {
                e.addSuppressed(suppressed);
            }
            FileUtils.deleteDirectoryQuietly(dir);
            throw e;
        }
    }

    public CheckpointableKeyedStateBackend<Long> backend() {
        return backend;
    }

    /** A stream factory of the environment's checkpoint storage for checkpoint {@code id}. */
    public CheckpointStreamFactory streamFactory(long checkpointId) throws IOException {
        return env.getCheckpointStorageAccess()
                .resolveCheckpointStorageLocation(
                        checkpointId, CheckpointStorageLocationReference.getDefault());
    }

    /** The state of {@code descriptor} in the default namespace. */
    public <S extends org.apache.flink.api.common.state.State> S state(
            StateDescriptor<S, ?> descriptor) throws Exception {
        return backend.getPartitionedState(
                VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, descriptor);
    }

    @Override
    public void close() throws IOException {
        try {
            backend.dispose();
            backend.close();
        } finally {
            try {
                env.close();
                if (changelogStorage != null) {
                    changelogStorage.close();
                }
            } catch (Exception e) {
                throw new IOException(e);
            } finally {
                FileUtils.deleteDirectoryQuietly(dir);
            }
        }
    }
}
