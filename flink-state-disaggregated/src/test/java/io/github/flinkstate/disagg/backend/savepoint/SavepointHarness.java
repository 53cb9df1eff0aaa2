package io.github.flinkstate.disagg.backend.savepoint;

import io.github.flinkstate.disagg.DisaggregatedOptions;
import io.github.flinkstate.disagg.DisaggregatedStateBackend;
import io.github.flinkstate.disagg.backend.testutil.CanonicalSavepoints;
import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RunnableFuture;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.local.LocalFileSystem;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.checkpoint.metadata.MetadataRoundTrip;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.operators.testutils.MockEnvironmentBuilder;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SavepointSnapshotStrategy;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.SnapshotStrategyRunner;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.filesystem.FsCheckpointStreamFactory;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;

/**
 * Keyed backends of three kinds (ours, HashMap, RocksDB) with {@code String} keys on a {@link
 * MockEnvironment}, and canonical savepoints taken as Flink's operator state handler takes them
 * ({@code savepoint()} on the task thread, then {@link SavepointSnapshotStrategy} run by a {@link
 * SnapshotStrategyRunner}), their handles round-tripped through Flink's checkpoint metadata and
 * clipped to a new key-group range as Flink's state assignment does.
 *
 * <p>Thread safety: test thread only.
 */
final class SavepointHarness implements AutoCloseable {

    /** The backends under test. */
    enum Kind {
        DISAGGREGATED,
        HASHMAP,
        ROCKSDB
    }

    private final File dir;
    private final int maxParallelism;
    private final List<AbstractKeyedStateBackend<?>> toDispose = new ArrayList<>();
    private MockEnvironment env;
    private long nextId = 1;

    /** The TTL clock of every backend the harness creates; moves only when a test sets it. */
    private volatile long now = 1_000L;

    SavepointHarness(File dir, int maxParallelism) {
        this.dir = dir;
        this.maxParallelism = maxParallelism;
    }

    int maxParallelism() {
        return maxParallelism;
    }

    /** Sets the TTL clock (milliseconds) of all backends of this harness. */
    void setTime(long millis) {
        now = millis;
    }

    /** The key-group range of subtask {@code index} of {@code parallelism}. */
    KeyGroupRange range(int parallelism, int index) {
        return KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex(
                maxParallelism, parallelism, index);
    }

    StateBackend backend(Kind kind) {
        switch (kind) {
            case DISAGGREGATED:
                return new DisaggregatedStateBackend()
                        .with(
                                DisaggregatedOptions.PRIMARY_DIRECTORY,
                                new File(dir, "primary").toURI().toString())
                        // the smallest memtable: state lives in files and memtables at once
                        .with(DisaggregatedOptions.MEMTABLE_SIZE, MemorySize.parse("64kb"));
            case HASHMAP:
                return new HashMapStateBackend();
            case ROCKSDB:
                return new EmbeddedRocksDBStateBackend();
            default:
                throw new IllegalArgumentException(String.valueOf(kind));
        }
    }

    AbstractKeyedStateBackend<String> create(
            Kind kind, KeyGroupRange range, List<KeyedStateHandle> handles) throws Exception {
        return create(backend(kind), range, handles);
    }

    @SuppressWarnings("unchecked")
    <K> AbstractKeyedStateBackend<K> create(
            StateBackend backend,
            KeyGroupRange range,
            List<KeyedStateHandle> handles,
            org.apache.flink.api.common.typeutils.TypeSerializer<K> keySerializer)
            throws Exception {
        if (env == null) {
            env = new MockEnvironmentBuilder().setManagedMemorySize(64L << 20).build();
        }
        AbstractKeyedStateBackend<K> b =
                (AbstractKeyedStateBackend<K>)
                        backend.createKeyedStateBackend(
                                new KeyedStateBackendParametersImpl<>(
                                        env,
                                        new JobID(),
                                        "test-op",
                                        keySerializer,
                                        maxParallelism,
                                        range,
                                        env.getTaskKvStateRegistry(),
                                        (TtlTimeProvider) () -> now,
                                        new UnregisteredMetricsGroup(),
                                        handles,
                                        new CloseableRegistry()));
        toDispose.add(b);
        return b;
    }

    AbstractKeyedStateBackend<String> create(
            StateBackend backend, KeyGroupRange range, List<KeyedStateHandle> handles)
            throws Exception {
        return create(backend, range, handles, StringSerializer.INSTANCE);
    }

    /**
     * The synchronous part of a canonical savepoint, as Flink's operator state handler runs it; run
     * the returned future for the asynchronous part, then {@link #finish} it.
     */
    <K> RunnableFuture<SnapshotResult<KeyedStateHandle>> start(AbstractKeyedStateBackend<K> b)
            throws Exception {
        return CanonicalSavepoints.start(b, nextId++, streamFactory());
    }

    /** Runs the asynchronous part and round-trips the handle through checkpoint metadata. */
    KeyedStateHandle finish(RunnableFuture<SnapshotResult<KeyedStateHandle>> future)
            throws Exception {
        if (!future.isDone()) {
            future.run();
        }
        KeyedStateHandle handle = future.get().getJobManagerOwnedSnapshot();
        if (handle == null) {
            return null;
        }
        return MetadataRoundTrip.roundTrip(handle, new File(dir, "sp").toURI().toString());
    }

    /** A complete canonical savepoint of {@code b}. */
    <K> KeyedStateHandle savepoint(AbstractKeyedStateBackend<K> b) throws Exception {
        return finish(start(b));
    }

    /** The handles for a subtask of {@code range}, clipped as Flink's state assignment clips. */
    static List<KeyedStateHandle> assign(List<KeyedStateHandle> handles, KeyGroupRange range) {
        List<KeyedStateHandle> out = new ArrayList<>();
        for (KeyedStateHandle h : handles) {
            KeyedStateHandle c = ((KeyGroupsStateHandle) h).getIntersection(range);
            if (c != null) {
                out.add(c);
            }
        }
        return out;
    }

    private FsCheckpointStreamFactory streamFactory() throws Exception {
        File sp = new File(dir, "sp");
        sp.mkdirs();
        // a restore resolves relative handles against the savepoint directory's metadata file
        new File(sp, "_metadata").createNewFile();
        return new FsCheckpointStreamFactory(
                LocalFileSystem.getSharedInstance(),
                new Path(sp.toURI()),
                new Path(sp.toURI()),
                1024,
                4096);
    }

    @Override
    public void close() throws Exception {
        for (AbstractKeyedStateBackend<?> b : toDispose) {
            b.dispose();
        }
        if (env != null) {
            env.close();
        }
    }
}
