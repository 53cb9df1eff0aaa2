package io.github.flinkstate.benchmarks.common;

import java.util.Collection;
import java.util.Collections;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.core.fs.Path;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.state.CheckpointStorageAccess;
import org.apache.flink.runtime.state.CheckpointableKeyedStateBackend;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;

/**
 * Builds a keyed state backend with {@code Long} keys the way a Flink task builds it, on Flink's
 * {@link MockEnvironment} (no job, no operator), owning all {@link #MAX_PARALLELISM} key groups:
 * the part the JMH fixture and the backend-level scenarios share.
 *
 * <p>Stateless.
 */
public final class MockTaskKeyedBackends {

    public static final int MAX_PARALLELISM = 128;

    private MockTaskKeyedBackends() {}

    /**
     * Gives {@code env} a file-system checkpoint storage at {@code checkpointDir} (the changelog,
     * ForSt and disaggregated backends ask the environment for it; ForSt fails without) and returns
     * it.
     */
    public static CheckpointStorageAccess attachCheckpointStorage(
            MockEnvironment env, JobID jobId, Path checkpointDir) throws Exception {
        CheckpointStorageAccess storage =
                new FileSystemCheckpointStorage(checkpointDir).createCheckpointStorage(jobId);
        env.setCheckpointStorageAccess(storage);
        return storage;
    }

    /**
     * The keyed backend {@code stateBackend} creates for operator {@code operator} on {@code env},
     * restored from {@code handles} (null or empty: a fresh one).
     */
    public static CheckpointableKeyedStateBackend<Long> create(
            StateBackend stateBackend,
            MockEnvironment env,
            JobID jobId,
            String operator,
            Collection<KeyedStateHandle> handles)
            throws Exception {
        return stateBackend.createKeyedStateBackend(
                new KeyedStateBackendParametersImpl<>(
                        env,
                        jobId,
                        operator,
                        LongSerializer.INSTANCE,
                        MAX_PARALLELISM,
                        new KeyGroupRange(0, MAX_PARALLELISM - 1),
                        env.getTaskKvStateRegistry(),
                        TtlTimeProvider.DEFAULT,
                        new UnregisteredMetricsGroup(),
                        handles == null ? Collections.emptyList() : handles,
                        new CloseableRegistry()));
    }
}
