package io.github.flinkstate.disagg.backend;

import io.github.flinkstate.disagg.backend.restore.InheritedFileCopier;
import io.github.flinkstate.disagg.backend.savepoint.CanonicalSavepointResources;
import io.github.flinkstate.disagg.backend.snapshot.DisaggSnapshotOperation;
import io.github.flinkstate.disagg.backend.state.AbstractDisaggState;
import io.github.flinkstate.disagg.backend.state.DisaggAggregatingState;
import io.github.flinkstate.disagg.backend.state.DisaggReducingState;
import io.github.flinkstate.disagg.backend.state.DisaggValueState;
import io.github.flinkstate.disagg.backend.ttl.TtlCompactionFilters;
import io.github.flinkstate.disagg.engine.LsmStore;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.RunnableFuture;
import java.util.stream.Stream;
import javax.annotation.Nonnull;
import org.apache.flink.annotation.VisibleForTesting;
import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.state.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.State;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.query.TaskKvStateRegistry;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.HeapPriorityQueuesManager;
import org.apache.flink.runtime.state.InternalKeyContext;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.runtime.state.Keyed;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.PriorityComparable;
import org.apache.flink.runtime.state.RegisteredKeyValueStateBackendMetaInfo;
import org.apache.flink.runtime.state.SavepointResources;
import org.apache.flink.runtime.state.SnapshotExecutionType;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.StateSnapshotTransformer.StateSnapshotTransformFactory;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueElement;
import org.apache.flink.runtime.state.metrics.LatencyTrackingStateConfig;
import org.apache.flink.runtime.state.metrics.SizeTrackingStateConfig;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.apache.flink.util.FlinkRuntimeException;
import org.apache.flink.util.IOUtils;

/**
 * The keyed state backend over one {@link LsmStore}: Flink's synchronous state API mapped onto
 * engine keys ({@link KeyLayout}), timers in Flink's heap priority queues (written into the
 * backend's own snapshot), checkpoints that reference the engine's files in place ({@link
 * DisaggSnapshotOperation}).
 *
 * <p>Thread safety: like every keyed backend, confined to the task thread, except {@link
 * #snapshot}'s asynchronous part and the streams returned by {@link #getKeys}, which read an engine
 * snapshot.
 *
 * <p>Invariants:
 *
 * <ol>
 *   <li>Every registered state has a distinct state id ({@link KeyLayout#stateId}).
 *   <li>All engine keys written belong to this backend's key-group range.
 * </ol>
 */
public final class DisaggregatedKeyedStateBackend<K> extends AbstractKeyedStateBackend<K>
        implements StateAccess<K> {

    private final LsmStore store;
    private final TtlCompactionFilters ttlFilters;
    private final KeyLayout layout = new KeyLayout();
    private final Map<String, RegisteredKvState> kvStates;
    private final Map<Integer, String> stateNamesById = new HashMap<>();
    private final Map<String, State> createdStates = new HashMap<>();
    private final HeapPriorityQueuesManager priorityQueues;
    private final DisaggSnapshotOperation<K> snapshots;
    private final StateFactories<K> factories = new StateFactories<>();
    private final StateMigration<K> migration;

    /**
     * Closes the store, its local disk cache and the lease on the slot's shared memory (in that
     * order), on dispose or when the backend was dropped without one.
     */
    private final AbandonedBackendRelease release;

    private byte[] currentKeyBytes;
    private K currentKeyOfBytes;

    DisaggregatedKeyedStateBackend(
            TaskKvStateRegistry kvStateRegistry,
            TypeSerializer<K> keySerializer,
            ClassLoader userCodeClassLoader,
            ExecutionConfig executionConfig,
            TtlTimeProvider ttlTimeProvider,
            LatencyTrackingStateConfig latencyTrackingStateConfig,
            SizeTrackingStateConfig sizeTrackingStateConfig,
            CloseableRegistry cancelStreamRegistry,
            InternalKeyContext<K> keyContext,
            LsmStore store,
            TtlCompactionFilters ttlFilters,
            Map<String, RegisteredKvState> kvStates,
            HeapPriorityQueuesManager priorityQueues,
            DisaggSnapshotOperation.Factory<K> snapshotFactory,
            AutoCloseable memoryLease) {
        super(
                kvStateRegistry,
                keySerializer,
                userCodeClassLoader,
                executionConfig,
                ttlTimeProvider,
                latencyTrackingStateConfig,
                sizeTrackingStateConfig,
                cancelStreamRegistry,
                keyContext);
        this.store = store;
        this.ttlFilters = ttlFilters;
        this.kvStates = new LinkedHashMap<>(kvStates);
        kvStates.values().forEach(s -> stateNamesById.put(s.stateId(), s.metaInfo().getName()));
        this.priorityQueues = priorityQueues;
        this.migration = new StateMigration<>(this, ttlTimeProvider);
        // nothing the snapshot operation holds may reference this backend: the release closes it
        Map<String, RegisteredKvState> states = this.kvStates;
        this.snapshots =
                snapshotFactory.create(
                        store,
                        keySerializer,
                        keyGroupRange,
                        () -> new ArrayList<>(states.values()),
                        priorityQueues::getRegisteredPQStates,
                        cancelStreamRegistry,
                        keyGroupCompressionDecorator);
        this.release =
                AbandonedBackendRelease.register(
                        this,
                        "the disaggregated keyed backend of key groups "
                                + keyGroupRange.getStartKeyGroup()
                                + "-"
                                + keyGroupRange.getEndKeyGroup()
                                + " writing to "
                                + store.primaryDir(),
                        releaseAction(snapshots, store, memoryLease));
    }

    /** What {@link #release} runs; a static method, so that it cannot capture this backend. */
    private static Runnable releaseAction(
            DisaggSnapshotOperation<?> snapshots, LsmStore store, AutoCloseable memoryLease) {
        return () -> {
            snapshots.close(); // closes the store
            IOUtils.closeQuietly(store.blockCache().disk()); // its local disk tier, if any
            IOUtils.closeQuietly(memoryLease);
        };
    }

    // ------------------------------------------------------------------ key context

    @Override
    public void setCurrentKey(K newKey) {
        super.setCurrentKey(newKey);
        currentKeyBytes = null;
    }

    @Override
    public void setCurrentKeyAndKeyGroup(K newKey, int newKeyGroupIndex) {
        super.setCurrentKeyAndKeyGroup(newKey, newKeyGroupIndex);
        currentKeyBytes = null;
    }

    /** How many file names the snapshots remember as named by a checkpoint, for memory tests. */
    @VisibleForTesting
    public int namedFilesHeld() {
        return snapshots.namedFilesHeld();
    }

    /** The background copy of restored files of another job (done at once when there is none). */
    public InheritedFileCopier inheritedCopy() {
        return snapshots.inheritedCopy();
    }

    @Override
    public LsmStore store() {
        return store;
    }

    @Override
    public KeyLayout layout() {
        return layout;
    }

    @Override
    public <N> byte[] currentPrefix(
            int stateId, N namespace, TypeSerializer<N> namespaceSerializer) {
        return layout.prefix(
                keyContext.getCurrentKeyGroupIndex(),
                stateId,
                keyContext.getCurrentKey(),
                keySerializer,
                namespace,
                namespaceSerializer);
    }

    @Override
    public <N> byte[] prefixOf(
            K key,
            TypeSerializer<K> keySerializer,
            int stateId,
            N namespace,
            TypeSerializer<N> namespaceSerializer) {
        int kg = KeyGroupRangeAssignment.assignToKeyGroup(key, numberOfKeyGroups);
        // a fresh layout: queryable-state lookups call this from other threads
        return new KeyLayout()
                .prefix(kg, stateId, key, keySerializer, namespace, namespaceSerializer);
    }

    // ------------------------------------------------------------------ state registration

    @Nonnull
    @Override
    public <N, SV, SEV, S extends State, IS extends S> IS createOrUpdateInternalState(
            @Nonnull TypeSerializer<N> namespaceSerializer,
            @Nonnull StateDescriptor<S, SV> stateDesc,
            @Nonnull StateSnapshotTransformFactory<SEV> snapshotTransformFactory)
            throws Exception {
        return createOrUpdateInternalState(
                namespaceSerializer, stateDesc, snapshotTransformFactory, false);
    }

    @Nonnull
    @Override
    @SuppressWarnings({"unchecked", "rawtypes"})
    public <N, SV, SEV, S extends State, IS extends S> IS createOrUpdateInternalState(
            @Nonnull TypeSerializer<N> namespaceSerializer,
            @Nonnull StateDescriptor<S, SV> stateDesc,
            @Nonnull StateSnapshotTransformFactory<SEV> snapshotTransformFactory,
            boolean allowFutureMetadataUpdates)
            throws Exception {
        // TTL compaction filter: none while the values may be migrated to a new serializer
        ttlFilters.remove(KeyLayout.stateId(stateDesc.getName()));
        RegisteredKvState info =
                register(namespaceSerializer, stateDesc, allowFutureMetadataUpdates);
        ttlFilters.configure(info.stateId(), stateDesc);
        // TTL's cleanup in full snapshots: applied when a canonical savepoint is written
        ((RegisteredKeyValueStateBackendMetaInfo) info.metaInfo())
                .updateSnapshotTransformFactory(snapshotTransformFactory);
        State existing = createdStates.get(stateDesc.getName());
        if (existing == null) {
            existing = factories.create(stateDesc, this, info);
            if (existing instanceof DisaggValueState) {
                ((DisaggValueState<K, N, SV>) existing)
                        .setDefaultValue(stateDesc.getDefaultValue());
            }
            createdStates.put(stateDesc.getName(), existing);
        } else if (existing instanceof DisaggValueState) {
            ((DisaggValueState<K, N, SV>) existing).setDefaultValue(stateDesc.getDefaultValue());
        } else if (existing instanceof DisaggReducingState) {
            ((DisaggReducingState<K, N, SV>) existing)
                    .setReduceFunction(
                            ((ReducingStateDescriptor<SV>) stateDesc).getReduceFunction());
        } else if (existing instanceof DisaggAggregatingState) {
            ((DisaggAggregatingState<K, N, Object, SV, Object>) existing)
                    .setAggregateFunction(
                            ((AggregatingStateDescriptor<Object, SV, Object>) stateDesc)
                                    .getAggregateFunction());
        }
        return (IS) existing;
    }

    private <N, SV> RegisteredKvState register(
            TypeSerializer<N> namespaceSerializer,
            StateDescriptor<?, SV> stateDesc,
            boolean allowFutureMetadataUpdates)
            throws Exception {
        RegisteredKvState info = kvStates.get(stateDesc.getName());
        TypeSerializer<SV> stateSerializer = stateDesc.getSerializer();
        if (info != null) {
            @SuppressWarnings("unchecked")
            RegisteredKeyValueStateBackendMetaInfo<N, SV> restored =
                    (RegisteredKeyValueStateBackendMetaInfo<N, SV>) info.metaInfo();
            RegisteredKeyValueStateBackendMetaInfo<N, SV> updated =
                    migration.updateRestoredMetaInfo(
                            info, restored, namespaceSerializer, stateDesc, stateSerializer);
            info.setMetaInfo(
                    allowFutureMetadataUpdates ? updated.withSerializerUpgradesAllowed() : updated);
            return info;
        }
        int id = KeyLayout.stateId(stateDesc.getName());
        String clash = stateNamesById.get(id);
        if (clash != null && !clash.equals(stateDesc.getName())) {
            throw new FlinkRuntimeException(
                    "States '"
                            + clash
                            + "' and '"
                            + stateDesc.getName()
                            + "' have the same state id in the disaggregated backend; rename one.");
        }
        RegisteredKeyValueStateBackendMetaInfo<N, SV> meta =
                new RegisteredKeyValueStateBackendMetaInfo<>(
                        stateDesc.getType(),
                        stateDesc.getName(),
                        namespaceSerializer,
                        stateSerializer,
                        StateSnapshotTransformFactory.noTransform());
        info =
                new RegisteredKvState(
                        id,
                        allowFutureMetadataUpdates ? meta.withSerializerUpgradesAllowed() : meta);
        kvStates.put(stateDesc.getName(), info);
        stateNamesById.put(id, stateDesc.getName());
        return info;
    }

    Map<String, RegisteredKvState> kvStates() {
        return kvStates;
    }

    // ------------------------------------------------------------------ timers

    @Nonnull
    @Override
    public <T extends HeapPriorityQueueElement & PriorityComparable<? super T> & Keyed<?>>
            KeyGroupedInternalPriorityQueue<T> create(
                    @Nonnull String stateName,
                    @Nonnull TypeSerializer<T> byteOrderedElementSerializer) {
        return priorityQueues.createOrUpdate(stateName, byteOrderedElementSerializer);
    }

    @Override
    public <T extends HeapPriorityQueueElement & PriorityComparable<? super T> & Keyed<?>>
            KeyGroupedInternalPriorityQueue<T> create(
                    @Nonnull String stateName,
                    @Nonnull TypeSerializer<T> byteOrderedElementSerializer,
                    boolean allowFutureMetadataUpdates) {
        return priorityQueues.createOrUpdate(
                stateName, byteOrderedElementSerializer, allowFutureMetadataUpdates);
    }

    // ------------------------------------------------------------------ keys

    @Override
    public <N> Stream<K> getKeys(String state, N namespace) {
        RegisteredKvState info = kvStates.get(state);
        if (info == null) {
            return Stream.empty();
        }
        return StateKeyStream.keys(store, keyGroupRange, info, keySerializer, namespace);
    }

    @Override
    public <N> Stream<K> getKeys(List<String> states, N namespace) {
        Set<K> seen = new HashSet<>();
        Stream<K> all = Stream.empty();
        for (String s : states) {
            all = Stream.concat(all, getKeys(s, namespace));
        }
        return all.filter(seen::add);
    }

    @Override
    public <N> Stream<Tuple2<K, N>> getKeysAndNamespaces(String state) {
        RegisteredKvState info = kvStates.get(state);
        if (info == null) {
            return Stream.empty();
        }
        return StateKeyStream.keysAndNamespaces(store, keyGroupRange, info, keySerializer);
    }

    /** Number of (key, namespace, user key) entries; a list counts once per (key, namespace). */
    public int numKeyValueStateEntries() {
        long n = 0;
        for (RegisteredKvState info : kvStates.values()) {
            n += StateKeyStream.countEntries(store, keyGroupRange, info);
        }
        return (int) n;
    }

    /**
     * Flushes the memtable and compacts the whole store now, on the calling thread (for tests and
     * tools; compactions normally run in the background): afterwards every entry live at the call
     * has passed the TTL compaction filter, so expired entries of TTL states with cleanup in the
     * background are physically gone. Checkpoints taken before keep their files and content.
     */
    public void compactAll() throws IOException {
        store.flush();
        store.compactAll();
    }

    /** For tests: the TTL compaction filter of this backend. */
    public TtlCompactionFilters ttlFilters() {
        return ttlFilters;
    }

    // ------------------------------------------------------------------ snapshots

    @Nonnull
    @Override
    public RunnableFuture<SnapshotResult<KeyedStateHandle>> snapshot(
            long checkpointId,
            long timestamp,
            @Nonnull CheckpointStreamFactory streamFactory,
            @Nonnull CheckpointOptions checkpointOptions)
            throws Exception {
        return snapshots.snapshot(checkpointId, streamFactory, checkpointOptions);
    }

    @Nonnull
    @Override
    public SavepointResources<K> savepoint() throws IOException {
        // canonical savepoint: Flink's SavepointSnapshotStrategy writes it from these resources
        return new SavepointResources<>(
                CanonicalSavepointResources.capture(
                        store,
                        keySerializer,
                        keyGroupRange,
                        numberOfKeyGroups,
                        keyGroupCompressionDecorator,
                        new ArrayList<>(kvStates.values()),
                        priorityQueues.getRegisteredPQStates()),
                SnapshotExecutionType.ASYNCHRONOUS);
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
        snapshots.notifyCheckpointComplete(checkpointId);
    }

    @Override
    public void notifyCheckpointAborted(long checkpointId) {
        snapshots.notifyCheckpointAborted(checkpointId);
    }

    @Override
    public boolean requiresLegacySynchronousTimerSnapshots(
            org.apache.flink.runtime.checkpoint.SnapshotType checkpointType) {
        return false;
    }

    @Override
    public boolean isSafeToReuseKVState() {
        return false;
    }

    @Override
    public String getBackendTypeIdentifier() {
        return "disaggregated";
    }

    // ------------------------------------------------------------------ lifecycle

    @Override
    public void dispose() {
        IOUtils.closeQuietly(cancelStreamRegistry);
        release.releaseNow();
        super.dispose();
    }

    @Override
    public String toString() {
        return "DisaggregatedKeyedStateBackend{" + keyGroupRange + ", " + store.describe() + "}";
    }

    /** For tests: the registered state ids by name. */
    public Map<String, Integer> stateIds() {
        Map<String, Integer> m = new HashMap<>();
        kvStates.forEach((k, v) -> m.put(k, v.stateId()));
        return m;
    }

    static String describe(AbstractDisaggState<?, ?, ?> s) {
        return s.getClass().getSimpleName();
    }
}
