package io.github.flinkstate.lru.support;

import io.github.flinkstate.lru.StateBackendWrapperWithLRUCache;
import io.github.flinkstate.lru.backend.LruCacheKeyedStateBackend;
import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RunnableFuture;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.state.State;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.local.LocalFileSystem;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.metadata.MetadataRoundTrip;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.operators.testutils.MockEnvironmentBuilder;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SavepointResources;
import org.apache.flink.runtime.state.SavepointSnapshotStrategy;
import org.apache.flink.runtime.state.SharedStateRegistry;
import org.apache.flink.runtime.state.SharedStateRegistryImpl;
import org.apache.flink.runtime.state.SnapshotExecutionType;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.SnapshotStrategyRunner;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.filesystem.FsCheckpointStreamFactory;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;

/**
 * Test helper: creates Integer-keyed backends over all key groups, takes checkpoints and canonical
 * savepoints the way a task does (split into the synchronous and the asynchronous part), and
 * round-trips the handles through checkpoint metadata. Disposes everything in {@link #close()}.
 */
public final class KeyedBackendHarness implements AutoCloseable {

    public static final int MAX_PARALLELISM = 128;
    public static final KeyGroupRange ALL = KeyGroupRange.of(0, MAX_PARALLELISM - 1);

    private final File dir;
    private final List<AbstractKeyedStateBackend<?>> toDispose = new ArrayList<>();
    private final SharedStateRegistry sharedStateRegistry = new SharedStateRegistryImpl();
    private MockEnvironment env;
    private long nextCheckpointId = 1;

    public KeyedBackendHarness(File dir) {
        this.dir = dir;
    }

    @SuppressWarnings("unchecked")
    public AbstractKeyedStateBackend<Integer> create(
            StateBackend backend, List<KeyedStateHandle> handles) throws Exception {
        if (env == null) {
            env = new MockEnvironmentBuilder().setManagedMemorySize(64L << 20).build();
        }
        AbstractKeyedStateBackend<Integer> b =
                (AbstractKeyedStateBackend<Integer>)
                        backend.createKeyedStateBackend(
                                new KeyedStateBackendParametersImpl<>(
                                        env,
                                        new JobID(),
                                        "test-op",
                                        IntSerializer.INSTANCE,
                                        MAX_PARALLELISM,
                                        ALL,
                                        env.getTaskKvStateRegistry(),
                                        TtlTimeProvider.DEFAULT,
                                        new UnregisteredMetricsGroup(),
                                        handles,
                                        new CloseableRegistry()));
        toDispose.add(b);
        return b;
    }

    /**
     * A delegate backend: "hashmap", or "rocksdb" (incremental) with its files under {@code dir}.
     */
    public static StateBackend delegate(String kind, File dir) {
        if (kind.equals("hashmap")) {
            return new HashMapStateBackend();
        }
        EmbeddedRocksDBStateBackend rocks = new EmbeddedRocksDBStateBackend(true);
        rocks.setDbStoragePath(new File(dir, "rocks").getAbsolutePath());
        return rocks;
    }

    /**
     * The LRU cache of {@code entries} entries over {@link #delegate(String, File)} (files under
     * this harness's directory), restored from {@code restoreFrom} unless it is null.
     */
    public LruCacheKeyedStateBackend<Integer> cached(
            String delegate, int entries, KeyedStateHandle restoreFrom) throws Exception {
        return (LruCacheKeyedStateBackend<Integer>)
                create(
                        new StateBackendWrapperWithLRUCache(delegate(delegate, dir), entries),
                        restoreFrom == null ? List.of() : List.of(restoreFrom));
    }

    /** The state of {@code descriptor} in the void namespace. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public static <S extends State> S state(
            AbstractKeyedStateBackend<Integer> b, StateDescriptor<?, ?> descriptor)
            throws Exception {
        return (S)
                b.getPartitionedState(
                        VoidNamespace.INSTANCE,
                        VoidNamespaceSerializer.INSTANCE,
                        (StateDescriptor) descriptor);
    }

    /** A stream factory writing to this harness's directory (files above 4 KiB). */
    public FsCheckpointStreamFactory streamFactory() throws Exception {
        File chk = new File(dir, "chk");
        File shared = new File(dir, "shared");
        chk.mkdirs();
        shared.mkdirs();
        // a restore resolves relative handles against the checkpoint directory's metadata file
        new File(chk, "_metadata").createNewFile();
        return new FsCheckpointStreamFactory(
                LocalFileSystem.getSharedInstance(),
                new Path(chk.toURI()),
                new Path(shared.toURI()),
                0,
                4096);
    }

    /**
     * The synchronous part of checkpoint {@code checkpointId} (default location); run the returned
     * future for the asynchronous part, then {@link #finish} the result.
     */
    public RunnableFuture<SnapshotResult<KeyedStateHandle>> startCheckpoint(
            AbstractKeyedStateBackend<Integer> b, long checkpointId) throws Exception {
        return b.snapshot(
                checkpointId,
                0L,
                streamFactory(),
                CheckpointOptions.forCheckpointWithDefaultLocation());
    }

    /** Takes a checkpoint with the given options, runs it to the end, returns the handle. */
    public KeyedStateHandle snapshot(AbstractKeyedStateBackend<Integer> b, CheckpointOptions o)
            throws Exception {
        long checkpointId = nextCheckpointId++;
        RunnableFuture<SnapshotResult<KeyedStateHandle>> future =
                b.snapshot(checkpointId, 0L, streamFactory(), o);
        future.run();
        return finish(future.get(), checkpointId);
    }

    /**
     * The synchronous part of a canonical savepoint, as Flink's operator state handler runs it; run
     * the returned future for the asynchronous part, then {@link #finish} the result.
     */
    public RunnableFuture<SnapshotResult<KeyedStateHandle>> startCanonicalSavepoint(
            AbstractKeyedStateBackend<Integer> b, CheckpointOptions options) throws Exception {
        SavepointResources<Integer> resources = b.savepoint();
        SnapshotStrategyRunner<KeyedStateHandle, ?> runner =
                new SnapshotStrategyRunner<>(
                        "canonical savepoint",
                        new SavepointSnapshotStrategy<>(resources.getSnapshotResources()),
                        new CloseableRegistry(),
                        SnapshotExecutionType.ASYNCHRONOUS);
        return runner.snapshot(nextCheckpointId++, 0L, streamFactory(), options);
    }

    /** Registers shared files (as the JobManager does) and round-trips through metadata. */
    public KeyedStateHandle finish(SnapshotResult<KeyedStateHandle> result, long checkpointId)
            throws Exception {
        KeyedStateHandle handle = result.getJobManagerOwnedSnapshot();
        if (handle == null) {
            return null;
        }
        handle.registerSharedStates(sharedStateRegistry, checkpointId);
        return MetadataRoundTrip.roundTrip(handle, new File(dir, "chk").toURI().toString());
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
