package io.github.flinkstate.lru.backend;

import io.github.flinkstate.lru.cow.CacheEntry;
import io.github.flinkstate.lru.cow.CowLruMap;
import io.github.flinkstate.lru.cow.CowSnapshot;
import io.github.flinkstate.lru.metrics.CacheStatistics;
import io.github.flinkstate.lru.snapshot.CachePinningSavepointResources;
import io.github.flinkstate.lru.snapshot.CacheSnapshotCallable;
import io.github.flinkstate.lru.snapshot.SnapshotStates;
import io.github.flinkstate.lru.state.AbstractCachedState;
import io.github.flinkstate.lru.state.CacheContext;
import io.github.flinkstate.lru.state.CachedAggregatingState;
import io.github.flinkstate.lru.state.CachedListState;
import io.github.flinkstate.lru.state.CachedMapState;
import io.github.flinkstate.lru.state.CachedReducingState;
import io.github.flinkstate.lru.state.CachedValueState;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RunnableFuture;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.annotation.Nonnull;
import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.state.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.State;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.SnapshotType;
import org.apache.flink.runtime.query.TaskKvStateRegistry;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.InternalKeyContextImpl;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.runtime.state.Keyed;
import org.apache.flink.runtime.state.KeyedStateFunction;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.PriorityComparable;
import org.apache.flink.runtime.state.SavepointResources;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.StateSnapshotTransformer.StateSnapshotTransformFactory;
import org.apache.flink.runtime.state.heap.HeapKeyedStateBackend;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueElement;
import org.apache.flink.runtime.state.internal.InternalAggregatingState;
import org.apache.flink.runtime.state.internal.InternalKvState;
import org.apache.flink.runtime.state.internal.InternalListState;
import org.apache.flink.runtime.state.internal.InternalMapState;
import org.apache.flink.runtime.state.internal.InternalReducingState;
import org.apache.flink.runtime.state.internal.InternalValueState;
import org.apache.flink.runtime.state.metrics.LatencyTrackingStateConfig;
import org.apache.flink.runtime.state.metrics.SizeTrackingStateConfig;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.apache.flink.util.IOUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The keyed state backend of {@code StateBackendWrapperWithLRUCache}: a write-back, object-level
 * LRU cache ({@link CowLruMap}) in front of a delegate keyed backend (FLIP-325).
 *
 * <p>Reads and writes of keyed state go to the cache; a miss loads from the delegate; evicting a
 * dirty entry writes it to the delegate. Timers (priority queues) live in the delegate. A
 * checkpoint freezes the cache (O(buckets)) and takes the delegate's snapshot in the synchronous
 * phase; the asynchronous phase writes the dirty entries and packs both into one Flink handle.
 * Operations over all keys ({@code getKeys}, {@code numKeyValueStateEntries}) and canonical
 * savepoints first write dirty entries to the delegate.
 *
 * <p>Thread safety: like every keyed backend, used by the task thread only; snapshots' async parts
 * read frozen cache entries from another thread (see {@link CowLruMap}).
 *
 * <p>Invariants:
 *
 * <ol>
 *   <li>The logical state is the delegate's state overlaid by the cache's entries.
 *   <li>When {@code delegateKeyInSync} is true, the delegate's current key equals ours.
 * </ol>
 */
public class LruCacheKeyedStateBackend<K> extends AbstractKeyedStateBackend<K>
        implements CacheContext<K> {

    private static final Logger LOG = LoggerFactory.getLogger(LruCacheKeyedStateBackend.class);

    private final AbstractKeyedStateBackend<K> delegate;

    /** Null when the cache size is 0: then states are the delegate's own (pass-through). */
    private final CowLruMap cache;

    private final CacheStatistics statistics;
    private final boolean copyOnLoad;
    private final boolean copyValuesOnWrite;
    private final Map<String, AbstractCachedState<K, ?, ?, ?>> cachedStates = new LinkedHashMap<>();
    private boolean delegateKeyInSync;
    private boolean disposed;

    public LruCacheKeyedStateBackend(
            AbstractKeyedStateBackend<K> delegate,
            int maxEntries,
            boolean copyValuesOnWrite,
            boolean scanResistant,
            CacheStatistics statistics,
            TaskKvStateRegistry kvStateRegistry,
            TypeSerializer<K> keySerializer,
            ClassLoader userCodeClassLoader,
            ExecutionConfig executionConfig,
            TtlTimeProvider ttlTimeProvider,
            LatencyTrackingStateConfig latencyTrackingStateConfig,
            SizeTrackingStateConfig sizeTrackingStateConfig,
            CloseableRegistry cancelStreamRegistry) {
        super(
                kvStateRegistry,
                keySerializer,
                userCodeClassLoader,
                executionConfig,
                ttlTimeProvider,
                latencyTrackingStateConfig,
                sizeTrackingStateConfig,
                cancelStreamRegistry,
                delegate.getKeyGroupCompressionDecorator(),
                new InternalKeyContextImpl<>(
                        delegate.getKeyGroupRange(), delegate.getNumberOfKeyGroups()));
        this.delegate = delegate;
        this.cache = maxEntries > 0 ? new CowLruMap(maxEntries, scanResistant) : null;
        this.statistics = statistics;
        // the heap backend keeps the objects we read and write: copy what we load from it
        this.copyOnLoad = delegate instanceof HeapKeyedStateBackend;
        this.copyValuesOnWrite = copyValuesOnWrite;
        this.delegateKeyInSync = false;
    }

    public AbstractKeyedStateBackend<K> getDelegate() {
        return delegate;
    }

    /** The cache, or null in pass-through mode. Visible for tests and metrics. */
    public CowLruMap getCache() {
        return cache;
    }

    // ------------------------------------------------------------------------------------------
    // key context
    // ------------------------------------------------------------------------------------------

    @Override
    public void setCurrentKey(K newKey) {
        super.setCurrentKey(newKey);
        if (cache == null) {
            delegate.setCurrentKeyAndKeyGroup(newKey, getCurrentKeyGroupIndex());
        } else {
            delegateKeyInSync = false;
        }
    }

    @Override
    public void setCurrentKeyAndKeyGroup(K newKey, int newKeyGroupIndex) {
        super.setCurrentKeyAndKeyGroup(newKey, newKeyGroupIndex);
        if (cache == null) {
            delegate.setCurrentKeyAndKeyGroup(newKey, newKeyGroupIndex);
        } else {
            delegateKeyInSync = false;
        }
    }

    @Override
    public void setCurrentKeyGroupIndex(int currentKeyGroupIndex) {
        super.setCurrentKeyGroupIndex(currentKeyGroupIndex);
        delegate.setCurrentKeyGroupIndex(currentKeyGroupIndex);
        delegateKeyInSync = false;
    }

    @Override
    public CowLruMap cache() {
        return cache;
    }

    @Override
    public CacheStatistics statistics() {
        return statistics;
    }

    @Override
    public K currentKey() {
        return getCurrentKey();
    }

    @Override
    public int currentKeyGroup() {
        return getCurrentKeyGroupIndex();
    }

    @Override
    public void syncDelegateKey() {
        if (!delegateKeyInSync) {
            delegate.setCurrentKeyAndKeyGroup(getCurrentKey(), getCurrentKeyGroupIndex());
            delegateKeyInSync = true;
        }
    }

    @Override
    @SuppressWarnings("unchecked")
    public void setDelegateKey(Object key, int keyGroup) {
        delegate.setCurrentKeyAndKeyGroup((K) key, keyGroup);
        delegateKeyInSync = false;
    }

    @Override
    public boolean copyOnLoad() {
        return copyOnLoad;
    }

    @Override
    public boolean copyValuesOnWrite() {
        return copyValuesOnWrite;
    }

    // ------------------------------------------------------------------------------------------
    // state creation
    // ------------------------------------------------------------------------------------------

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
        AbstractCachedState existing = cache == null ? null : cachedStates.get(stateDesc.getName());
        if (existing != null) {
            // registered again (TTL or serializer change, changelog restore): write back and
            // forget what is cached under the old registration before the delegate changes
            existing.flushAndDropEntries();
        }
        InternalKvState<K, N, SV> delegateState =
                (InternalKvState<K, N, SV>)
                        delegate.createOrUpdateInternalState(
                                namespaceSerializer,
                                stateDesc,
                                snapshotTransformFactory,
                                allowFutureMetadataUpdates);
        if (cache == null) {
            return (IS) delegateState;
        }
        // The delegate's state holds the serializers that are valid after a restore: when the
        // restored snapshot required reconfiguration, those are the reconfigured instances and the
        // ones passed in must not be used any more (not for the cache stream either).
        TypeSerializer<N> registeredNamespaceSerializer = delegateState.getNamespaceSerializer();
        if (existing != null) {
            existing.rebind(delegateState, registeredNamespaceSerializer, stateDesc);
            existing.setSnapshotTransformFactory(snapshotTransformFactory);
            return (IS) existing;
        }
        AbstractCachedState<K, N, ?, ?> state;
        switch (stateDesc.getType()) {
            case VALUE:
                state =
                        new CachedValueState<>(
                                this,
                                (ValueStateDescriptor) stateDesc,
                                (InternalValueState) delegateState,
                                registeredNamespaceSerializer);
                break;
            case LIST:
                state =
                        new CachedListState<>(
                                this,
                                stateDesc.getName(),
                                (InternalListState) delegateState,
                                registeredNamespaceSerializer);
                break;
            case MAP:
                state =
                        new CachedMapState<>(
                                this,
                                stateDesc.getName(),
                                (InternalMapState) delegateState,
                                registeredNamespaceSerializer);
                break;
            case REDUCING:
                state =
                        new CachedReducingState<>(
                                this,
                                (ReducingStateDescriptor) stateDesc,
                                (InternalReducingState) delegateState,
                                registeredNamespaceSerializer);
                break;
            case AGGREGATING:
                state =
                        new CachedAggregatingState<>(
                                this,
                                (AggregatingStateDescriptor) stateDesc,
                                (InternalAggregatingState) delegateState,
                                registeredNamespaceSerializer);
                break;
            default:
                throw new UnsupportedOperationException(
                        "State "
                                + stateDesc.getName()
                                + " has unsupported type "
                                + stateDesc.getType());
        }
        state.setSnapshotTransformFactory(snapshotTransformFactory);
        cachedStates.put(stateDesc.getName(), state);
        return (IS) state;
    }

    @Nonnull
    @Override
    public <T extends HeapPriorityQueueElement & PriorityComparable<? super T> & Keyed<?>>
            KeyGroupedInternalPriorityQueue<T> create(
                    @Nonnull String stateName,
                    @Nonnull TypeSerializer<T> byteOrderedElementSerializer) {
        return delegate.create(stateName, byteOrderedElementSerializer);
    }

    @Override
    public <T extends HeapPriorityQueueElement & PriorityComparable<? super T> & Keyed<?>>
            KeyGroupedInternalPriorityQueue<T> create(
                    @Nonnull String stateName,
                    @Nonnull TypeSerializer<T> byteOrderedElementSerializer,
                    boolean allowFutureMetadataUpdates) {
        return delegate.create(stateName, byteOrderedElementSerializer, allowFutureMetadataUpdates);
    }

    // ------------------------------------------------------------------------------------------
    // operations over all keys: make the delegate exact first
    // ------------------------------------------------------------------------------------------

    /** Writes every dirty cache entry to the delegate; entries stay cached, now clean. */
    public void flushAll() throws Exception {
        if (cache == null) {
            return;
        }
        int flushed = 0;
        for (CacheEntry stale : cache.liveEntries(CacheEntry::isDirty)) {
            CacheEntry live = cache.findLive(stale);
            live.owner().writeBack(live);
            cache.markClean(live);
            flushed++;
        }
        LOG.debug("Flushed {} dirty cache entries to the delegate backend", flushed);
    }

    private void flushState(String stateName) {
        AbstractCachedState<K, ?, ?, ?> state = cache == null ? null : cachedStates.get(stateName);
        if (state != null) {
            try {
                state.flushDirtyEntries();
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new RuntimeException(
                        "Could not write cached entries of state " + stateName, e);
            }
        }
    }

    @Override
    public <N> Stream<K> getKeys(String state, N namespace) {
        flushState(state);
        return delegate.getKeys(state, namespace);
    }

    @Override
    public <N> Stream<K> getKeys(List<String> states, N namespace) {
        states.forEach(this::flushState);
        return delegate.getKeys(states, namespace);
    }

    @Override
    public <N> Stream<Tuple2<K, N>> getKeysAndNamespaces(String state) {
        flushState(state);
        return delegate.getKeysAndNamespaces(state);
    }

    @Override
    public <N, S extends State, T> void applyToAllKeys(
            N namespace,
            TypeSerializer<N> namespaceSerializer,
            StateDescriptor<S, T> stateDescriptor,
            KeyedStateFunction<K, S> function)
            throws Exception {
        // collect first: the function may change or clear the state it visits
        List<K> keys;
        try (Stream<K> stream = getKeys(stateDescriptor.getName(), namespace)) {
            keys = stream.collect(Collectors.toList());
        }
        S state = getPartitionedState(namespace, namespaceSerializer, stateDescriptor);
        for (K key : keys) {
            setCurrentKey(key);
            function.process(key, state);
        }
    }

    @Override
    public int numKeyValueStateEntries() {
        try {
            flushAll();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new RuntimeException("Could not write cached entries to the delegate", e);
        }
        return delegate.numKeyValueStateEntries();
    }

    // ------------------------------------------------------------------------------------------
    // snapshots
    // ------------------------------------------------------------------------------------------

    @Nonnull
    @Override
    public RunnableFuture<SnapshotResult<KeyedStateHandle>> snapshot(
            long checkpointId,
            long timestamp,
            @Nonnull CheckpointStreamFactory streamFactory,
            @Nonnull CheckpointOptions checkpointOptions)
            throws Exception {
        checkNotDisposed();
        CowSnapshot frozen = cache == null ? null : cache.snapshot();
        try {
            SnapshotStates states =
                    frozen == null
                            ? null
                            : new SnapshotStates(keySerializer, cachedStates.values());
            RunnableFuture<SnapshotResult<KeyedStateHandle>> delegateFuture =
                    delegate.snapshot(checkpointId, timestamp, streamFactory, checkpointOptions);
            return new CacheSnapshotCallable(
                            delegateFuture,
                            cache,
                            frozen,
                            states,
                            keyGroupRange,
                            checkpointId,
                            streamFactory)
                    .toFuture(cancelStreamRegistry);
        } catch (Exception | Error e) {
            if (frozen != null) {
                cache.release(frozen.version());
            }
            throw e;
        }
    }

    @Nonnull
    @Override
    public SavepointResources<K> savepoint() throws Exception {
        checkNotDisposed();
        // canonical savepoints are the delegate's: give it everything first
        flushAll();
        if (cache == null) {
            return delegate.savepoint();
        }
        // then pin the cache until the savepoint is written: a delegate that keeps objects now
        // shares ours, and the pin makes the cache copy a value before it may be mutated
        CowSnapshot pin = cache.snapshot();
        try {
            SavepointResources<K> resources = delegate.savepoint();
            return new SavepointResources<>(
                    new CachePinningSavepointResources<>(
                            resources.getSnapshotResources(), cache, pin.version()),
                    resources.getPreferredSnapshotExecutionType());
        } catch (Exception | Error e) {
            cache.release(pin.version());
            throw e;
        }
    }

    @Override
    public boolean requiresLegacySynchronousTimerSnapshots(SnapshotType checkpointType) {
        return delegate.requiresLegacySynchronousTimerSnapshots(checkpointType);
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) throws Exception {
        delegate.notifyCheckpointComplete(checkpointId);
    }

    @Override
    public void notifyCheckpointAborted(long checkpointId) throws Exception {
        delegate.notifyCheckpointAborted(checkpointId);
    }

    @Override
    public void notifyCheckpointSubsumed(long checkpointId) throws Exception {
        delegate.notifyCheckpointSubsumed(checkpointId);
    }

    @Override
    public String getBackendTypeIdentifier() {
        return "lru-cache";
    }

    @Override
    public boolean isSafeToReuseKVState() {
        return false;
    }

    // ------------------------------------------------------------------------------------------
    // lifecycle
    // ------------------------------------------------------------------------------------------

    /**
     * Cancels our snapshots first, then disposes the delegate, for the reason given at {@link
     * #close()}: Flink's operator state handler disposes a backend before it closes it.
     */
    @Override
    public void dispose() {
        if (disposed) {
            return;
        }
        disposed = true;
        cachedStates.clear();
        IOUtils.closeQuietly(cancelStreamRegistry); // super.dispose() closes it again: a no-op
        IOUtils.closeQuietly(delegate::dispose);
        super.dispose();
    }

    /**
     * Cancels our snapshots first, then closes the delegate. The other order lets a checkpointing
     * thread that sees the delegate's cancellation complete our future with it as an ordinary
     * failure before our cancellation arrives: Flink then reports a failed, not a cancelled,
     * checkpoint ({@code CloseCancelsSnapshotTest}).
     */
    @Override
    public void close() throws IOException {
        try {
            super.close();
        } finally {
            delegate.close();
        }
    }

    /**
     * A snapshot of a disposed backend would reach a closed delegate (for RocksDB: freed native
     * memory); Flink's changelog backend can still trigger one from its materialization timer.
     */
    private void checkNotDisposed() {
        if (disposed) {
            throw new IllegalStateException(
                    "The LRU cache keyed backend is disposed; cannot snapshot");
        }
    }
}
