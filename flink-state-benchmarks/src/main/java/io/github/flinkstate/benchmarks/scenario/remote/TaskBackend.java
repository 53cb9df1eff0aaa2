package io.github.flinkstate.benchmarks.scenario.remote;

import io.github.flinkstate.benchmarks.common.MockTaskKeyedBackends;
import java.util.Collection;
import java.util.concurrent.RunnableFuture;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.operators.testutils.MockEnvironmentBuilder;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.CheckpointableKeyedStateBackend;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.StateBackendLoader;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;

/**
 * One keyed state backend with {@code Long} keys and one {@code ValueState<byte[]>}, built the way
 * a Flink task builds it (from {@code state.backend.type} through Flink's loader, on a {@link
 * MockEnvironment} with the given managed memory and a file-system checkpoint storage), owning all
 * 128 key groups, optionally restored from a checkpoint's handle.
 *
 * <p>Not thread-safe (one task thread). {@link #close} disposes the backend and the environment.
 */
final class TaskBackend implements AutoCloseable {

    static final int MAX_PARALLELISM = MockTaskKeyedBackends.MAX_PARALLELISM;
    private static final ValueStateDescriptor<byte[]> VALUE =
            new ValueStateDescriptor<>("value", BytePrimitiveArraySerializer.INSTANCE);

    private final MockEnvironment env;
    private final CheckpointableKeyedStateBackend<Long> backend;
    private final ValueState<byte[]> state;

    private TaskBackend(
            MockEnvironment env,
            CheckpointableKeyedStateBackend<Long> backend,
            ValueState<byte[]> state) {
        this.env = env;
        this.backend = backend;
        this.state = state;
    }

    /**
     * Creates (and, with handles, restores) the backend {@code config} selects.
     *
     * @param checkpointDir the job's checkpoint directory (any file system URI)
     * @param handles the checkpoint's keyed state handles; empty for a fresh backend
     */
    static TaskBackend open(
            Configuration config,
            JobID jobId,
            String checkpointDir,
            long managedMemoryBytes,
            Collection<KeyedStateHandle> handles)
            throws Exception {
        MockEnvironment env =
                new MockEnvironmentBuilder()
                        .setJobID(jobId)
                        .setManagedMemorySize(managedMemoryBytes)
                        .build();
        try {
            MockTaskKeyedBackends.attachCheckpointStorage(env, jobId, new Path(checkpointDir))
                    .initializeBaseLocationsForCheckpoint();
            StateBackend stateBackend =
                    StateBackendLoader.loadStateBackendFromConfig(
                            config, TaskBackend.class.getClassLoader(), null);
            CheckpointableKeyedStateBackend<Long> backend =
                    MockTaskKeyedBackends.create(stateBackend, env, jobId, "remote-read", handles);
            try {
                ValueState<byte[]> state =
                        backend.getPartitionedState(
                                VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, VALUE);
                return new TaskBackend(env, backend, state);
            } catch (Exception e) {
                backend.dispose();
                throw e;
            }
        } catch (Exception e) {
            env.close();
            throw e;
        }
    }

    void put(long key, byte[] value) throws Exception {
        backend.setCurrentKey(key);
        state.update(value);
    }

    byte[] get(long key) throws Exception {
        backend.setCurrentKey(key);
        return state.value();
    }

    /**
     * Takes checkpoint {@code checkpointId} (its asynchronous part run to the end on this thread),
     * confirms it to the backend as completed and returns its handle.
     */
    KeyedStateHandle checkpoint(long checkpointId) throws Exception {
        CheckpointStreamFactory streams =
                env.getCheckpointStorageAccess().initializeLocationForCheckpoint(checkpointId);
        RunnableFuture<SnapshotResult<KeyedStateHandle>> future =
                backend.snapshot(
                        checkpointId,
                        System.currentTimeMillis(),
                        streams,
                        CheckpointOptions.forCheckpointWithDefaultLocation());
        future.run();
        KeyedStateHandle handle = future.get().getJobManagerOwnedSnapshot();
        if (handle == null) {
            throw new IllegalStateException("checkpoint " + checkpointId + " produced no state");
        }
        if (backend instanceof CheckpointListener) {
            ((CheckpointListener) backend).notifyCheckpointComplete(checkpointId);
        }
        return handle;
    }

    @Override
    public void close() throws Exception {
        try {
            backend.dispose();
            backend.close();
        } finally {
            env.close();
        }
    }
}
