package io.github.flinkstate.disagg.backend.testutil;

import io.github.flinkstate.disagg.DisaggregatedOptions;
import io.github.flinkstate.disagg.DisaggregatedStateBackend;
import io.github.flinkstate.disagg.backend.DisaggregatedKeyedStateBackend;
import java.io.File;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.RunnableFuture;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.StateAssignmentOperation;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.operators.testutils.MockEnvironmentBuilder;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;

/**
 * Test helper: creates Integer-keyed disaggregated keyed backends for a key-group range, from
 * nothing or from handles (a restore or a rescale), the way a task does, and runs their snapshots.
 * Every backend it created and did not {@link #dispose} yet is disposed in {@link #close()}.
 *
 * <p>Thread safety: not thread-safe (test thread only).
 */
public final class DisaggBackends implements AutoCloseable {

    public static final int MAX_PARALLELISM = 128;
    public static final KeyGroupRange ALL = KeyGroupRange.of(0, MAX_PARALLELISM - 1);

    private final DisaggregatedStateBackend backend;
    private final TtlTimeProvider timeProvider;
    private final List<DisaggregatedKeyedStateBackend<Integer>> open = new ArrayList<>();
    private MockEnvironment env;

    public DisaggBackends(DisaggregatedStateBackend backend) {
        this(backend, TtlTimeProvider.DEFAULT);
    }

    /** Backends whose state TTL (and TTL compaction filter) reads {@code timeProvider}. */
    public DisaggBackends(DisaggregatedStateBackend backend, TtlTimeProvider timeProvider) {
        this.backend = backend;
        this.timeProvider = timeProvider;
    }

    /** A backend with its primary directory at {@code primaryDirUri} (any file system URI). */
    public static DisaggregatedStateBackend backend(String primaryDirUri, MemorySize memtable) {
        return new DisaggregatedStateBackend()
                .with(DisaggregatedOptions.PRIMARY_DIRECTORY, primaryDirUri)
                .with(DisaggregatedOptions.MEMTABLE_SIZE, memtable);
    }

    /** Backends with their primary directory in the local directory {@code primaryDir}. */
    public static DisaggBackends inLocalDir(File primaryDir, String memtable) {
        return new DisaggBackends(
                backend(primaryDir.toURI().toString(), MemorySize.parse(memtable)));
    }

    /** The key-group ranges of {@code parallelism} subtasks, as Flink assigns them. */
    public static List<KeyGroupRange> ranges(int parallelism) {
        return StateAssignmentOperation.createKeyGroupPartitions(MAX_PARALLELISM, parallelism);
    }

    /** A keyed backend for {@code range}, restored from {@code handles} (empty: a fresh one). */
    public DisaggregatedKeyedStateBackend<Integer> create(
            KeyGroupRange range, Collection<KeyedStateHandle> handles) throws Exception {
        return create(range, handles, new UnregisteredMetricsGroup());
    }

    /** As {@link #create(KeyGroupRange, Collection)}, registering metrics on {@code metrics}. */
    public DisaggregatedKeyedStateBackend<Integer> create(
            KeyGroupRange range, Collection<KeyedStateHandle> handles, MetricGroup metrics)
            throws Exception {
        return create(range, handles, metrics, IntSerializer.INSTANCE);
    }

    /** As {@link #create(KeyGroupRange, Collection, MetricGroup)}, with this key serializer. */
    @SuppressWarnings("unchecked")
    public DisaggregatedKeyedStateBackend<Integer> create(
            KeyGroupRange range,
            Collection<KeyedStateHandle> handles,
            MetricGroup metrics,
            TypeSerializer<Integer> keySerializer)
            throws Exception {
        MockEnvironment env = environment();
        DisaggregatedKeyedStateBackend<Integer> b =
                (DisaggregatedKeyedStateBackend<Integer>)
                        backend.createKeyedStateBackend(
                                new KeyedStateBackendParametersImpl<>(
                                        env,
                                        new JobID(),
                                        "test-op",
                                        keySerializer,
                                        MAX_PARALLELISM,
                                        range,
                                        env.getTaskKvStateRegistry(),
                                        timeProvider,
                                        metrics,
                                        handles,
                                        new CloseableRegistry()));
        open.add(b);
        return b;
    }

    /** Disposes {@code b} now, as a task does when it ends. */
    public void dispose(DisaggregatedKeyedStateBackend<Integer> b) {
        if (open.remove(b)) {
            b.dispose();
        }
    }

    /**
     * Drops {@code b} without disposing it, as Flink does with a keyed backend whose changelog
     * replay failed: this helper no longer references it, and {@link #close()} leaves it alone.
     */
    public void abandon(DisaggregatedKeyedStateBackend<Integer> b) {
        open.remove(b);
    }

    /** The environment the backends were created in (its slot memory manager, say). */
    public MockEnvironment environment() {
        if (env == null) {
            env = new MockEnvironmentBuilder().build();
        }
        return env;
    }

    /** Takes a snapshot and runs its asynchronous part to the end (Flink's task, no failure). */
    public static SnapshotResult<KeyedStateHandle> snapshot(
            DisaggregatedKeyedStateBackend<Integer> b,
            long checkpointId,
            CheckpointStreamFactory streams,
            CheckpointOptions options)
            throws Exception {
        RunnableFuture<SnapshotResult<KeyedStateHandle>> f =
                b.snapshot(checkpointId, 0L, streams, options);
        f.run();
        return f.get();
    }

    @Override
    public void close() throws Exception {
        for (DisaggregatedKeyedStateBackend<Integer> b : new ArrayList<>(open)) {
            dispose(b);
        }
        if (env != null) {
            env.close();
            env = null;
        }
    }
}
