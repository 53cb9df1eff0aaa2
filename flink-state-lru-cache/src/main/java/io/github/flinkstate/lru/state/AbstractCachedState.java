package io.github.flinkstate.lru.state;

import io.github.flinkstate.lru.cow.CacheEntry;
import io.github.flinkstate.lru.cow.CacheOwner;
import io.github.flinkstate.lru.cow.CowLruMap;
import io.github.flinkstate.lru.cow.PartialValue;
import java.util.Objects;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.queryablestate.client.state.serialization.KvStateSerializer;
import org.apache.flink.runtime.state.RegisteredKeyValueStateBackendMetaInfo;
import org.apache.flink.runtime.state.StateSnapshotTransformer;
import org.apache.flink.runtime.state.StateSnapshotTransformer.StateSnapshotTransformFactory;
import org.apache.flink.runtime.state.internal.InternalKvState;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;

/**
 * Base of the cached state objects: a state that first looks in the shared {@link CowLruMap} and
 * falls back to the same-named state of the delegate backend, loading what it reads.
 *
 * <p>Thread safety: task thread only, like every Flink keyed state object.
 *
 * <p>Invariants:
 *
 * <ol>
 *   <li>The logical content of this state is the delegate's content overlaid by this state's cache
 *       entries; a clean entry equals what the delegate holds.
 *   <li>Before any call on {@link #delegate}, the delegate's key is synchronized and its namespace
 *       set, because evictions move the delegate to other keys and namespaces.
 * </ol>
 *
 * @param <K> key type
 * @param <N> namespace type
 * @param <SV> the state's value type (for maps: the whole map)
 * @param <D> the delegate's state type
 */
public abstract class AbstractCachedState<K, N, SV, D extends InternalKvState<K, N, ?>>
        implements InternalKvState<K, N, SV>, CacheOwner {

    protected final CacheContext<K> context;
    protected final CowLruMap cache;

    /** The last refused read's identity (null key: none); see {@link #rememberRefusedRead}. */
    private Object refusedKey;

    private Object refusedNamespace;
    private Object refusedUserKey;
    protected final StateDescriptor.Type type;
    protected final String name;

    protected D delegate;
    protected TypeSerializer<N> namespaceSerializer;
    protected TypeSerializer<SV> valueSerializer;
    protected N currentNamespace;
    private StateSnapshotTransformFactory<?> snapshotTransformFactory =
            StateSnapshotTransformFactory.noTransform();

    protected AbstractCachedState(
            CacheContext<K> context,
            StateDescriptor.Type type,
            String name,
            D delegate,
            TypeSerializer<N> namespaceSerializer,
            TypeSerializer<SV> valueSerializer) {
        this.context = context;
        this.cache = context.cache();
        this.type = type;
        this.name = name;
        this.delegate = delegate;
        this.namespaceSerializer = namespaceSerializer;
        this.valueSerializer = valueSerializer;
    }

    /**
     * Rebinds this state after the same name was registered again (new serializers or functions).
     */
    @SuppressWarnings("unchecked")
    public void rebind(
            D newDelegate,
            TypeSerializer<N> newNamespaceSerializer,
            StateDescriptor<?, ?> newDescriptor) {
        this.delegate = newDelegate;
        this.namespaceSerializer = newNamespaceSerializer;
        this.valueSerializer = (TypeSerializer<SV>) newDelegate.getValueSerializer();
        onRebind(newDescriptor);
    }

    /**
     * Sets the snapshot transformer (e.g. TTL cleanup in full snapshots) of this state's values.
     */
    public void setSnapshotTransformFactory(StateSnapshotTransformFactory<?> factory) {
        this.snapshotTransformFactory = factory;
    }

    /**
     * A new transformer for one snapshot, applied to values (for lists: to each element, for maps:
     * to each user value), or null if this state has none.
     */
    @SuppressWarnings("unchecked")
    public StateSnapshotTransformer<Object> newSnapshotTransformer() {
        return (StateSnapshotTransformer<Object>)
                snapshotTransformFactory.createForDeserializedState().orElse(null);
    }

    /** Picks up functions (reduce, aggregate) of a re-registered descriptor. */
    protected void onRebind(StateDescriptor<?, ?> newDescriptor) {}

    public String name() {
        return name;
    }

    public StateDescriptor.Type type() {
        return type;
    }

    public D delegate() {
        return delegate;
    }

    /** Meta data describing this state in a snapshot of the cache. */
    public StateMetaInfoSnapshot metaInfoSnapshot() {
        return new RegisteredKeyValueStateBackendMetaInfo<>(
                        type, name, namespaceSerializer, valueSerializer)
                .snapshot();
    }

    // ------------------------------------------------------------------------------------------
    // InternalKvState
    // ------------------------------------------------------------------------------------------

    @Override
    public TypeSerializer<K> getKeySerializer() {
        return delegate.getKeySerializer();
    }

    @Override
    public TypeSerializer<N> getNamespaceSerializer() {
        return namespaceSerializer;
    }

    @Override
    public TypeSerializer<SV> getValueSerializer() {
        return valueSerializer;
    }

    @Override
    public void setCurrentNamespace(N namespace) {
        this.currentNamespace = namespace;
    }

    @Override
    public StateIncrementalVisitor<K, N, SV> getStateIncrementalVisitor(
            int recommendedMaxNumberOfReturnedRecords) {
        // Like RocksDB: TTL incremental cleanup is not offered (Flink then skips it).
        throw new UnsupportedOperationException(
                "The LRU cache backend does not support TTL incremental cleanup; "
                        + "use cleanup in full snapshot or compaction filter of the delegate.");
    }

    /**
     * Answers a queryable-state request, which Flink makes on a thread other than the task's: the
     * cached entry of the key and namespace if there is one, else the delegate's answer. Writes
     * nothing back and never moves the delegate's current key, so the task's state is untouched;
     * O(1) (for maps: O(size of that map)). Like the HashMap backend's, the read is not
     * synchronized with the task thread: a value being changed at that moment may be seen before or
     * after the change.
     */
    @Override
    public byte[] getSerializedValue(
            byte[] serializedKeyAndNamespace,
            TypeSerializer<K> safeKeySerializer,
            TypeSerializer<N> safeNamespaceSerializer,
            TypeSerializer<SV> safeValueSerializer)
            throws Exception {
        Tuple2<K, N> keyAndNamespace =
                KvStateSerializer.deserializeKeyAndNamespace(
                        serializedKeyAndNamespace, safeKeySerializer, safeNamespaceSerializer);
        CacheEntry cached =
                cache.peekFromOtherThread(this, keyAndNamespace.f0, keyAndNamespace.f1, null);
        if (cached != null) {
            Object value = cached.value();
            if (value == CacheEntry.ABSENT) {
                return null;
            }
            if (!(value instanceof PartialValue partial)) {
                return serializeForQuery(value, safeValueSerializer);
            }
            byte[] fromDelegate =
                    delegate.getSerializedValue(
                            serializedKeyAndNamespace,
                            safeKeySerializer,
                            safeNamespaceSerializer,
                            (TypeSerializer) safeValueSerializer);
            return serializePartialForQuery(partial, fromDelegate, safeValueSerializer);
        }
        return delegate.getSerializedValue(
                serializedKeyAndNamespace,
                safeKeySerializer,
                safeNamespaceSerializer,
                (TypeSerializer) safeValueSerializer);
    }

    /**
     * Serializes a partial cached value laid over the delegate's answer ({@code fromDelegate}, null
     * if the delegate has nothing) the way the delegate's {@code getSerializedValue} would.
     */
    protected byte[] serializePartialForQuery(
            PartialValue partial, byte[] fromDelegate, TypeSerializer<SV> safeValueSerializer)
            throws Exception {
        throw new IllegalStateException("State " + name + " has a partial cache entry " + partial);
    }

    /** Serializes a cached value the way the delegate's {@code getSerializedValue} would. */
    @SuppressWarnings("unchecked")
    protected byte[] serializeForQuery(Object value, TypeSerializer<SV> safeValueSerializer)
            throws Exception {
        return KvStateSerializer.serializeValue((SV) value, safeValueSerializer);
    }

    // ------------------------------------------------------------------------------------------
    // CacheOwner
    // ------------------------------------------------------------------------------------------

    @Override
    public void writeBack(CacheEntry entry) throws Exception {
        context.setDelegateKey(entry.key(), entry.keyGroup());
        delegate.setCurrentNamespace(castNamespace(entry.namespace()));
        DelegateWrites.write(type, delegate, entry.userKey(), entry.value());
    }

    /** Writes every dirty entry of this state to the delegate and marks it clean. */
    public void flushDirtyEntries() throws Exception {
        for (CacheEntry stale : cache.liveEntries(e -> e.owner() == this && e.isDirty())) {
            CacheEntry live = cache.findLive(stale);
            writeBack(live);
            cache.markClean(live);
        }
    }

    /** Drops all of this state's entries, writing dirty ones back first. */
    public void flushAndDropEntries() throws Exception {
        for (CacheEntry stale : cache.liveEntries(e -> e.owner() == this)) {
            CacheEntry live = cache.findLive(stale);
            if (live.isDirty()) {
                writeBack(live);
            }
            cache.remove(live);
        }
    }

    // ------------------------------------------------------------------------------------------
    // helpers for subclasses
    // ------------------------------------------------------------------------------------------

    /**
     * Looks up the entry of the current key and namespace for a read, counting a hit or a miss: the
     * hit ratio counts reads only, because a write-back cache never needs the delegate to write.
     */
    protected final CacheEntry lookupForRead(Object userKey) {
        CacheEntry e = cache.get(this, context.currentKey(), currentNamespace, userKey);
        context.statistics().record(e != null);
        return e;
    }

    /**
     * Remembers the current identity ({@code userKey} null for single-value states) as the last
     * read that a full cache did not admit ({@link
     * io.github.flinkstate.lru.cow.CowLruMap#admitRead}): a write to it while it is not cached goes
     * to the delegate ({@link #readWasRefused}). The caller passes a user key it may not change (a
     * copy of a mutable one).
     */
    protected final void rememberRefusedRead(Object userKey) {
        refusedKey = context.currentKey();
        refusedNamespace = currentNamespace;
        refusedUserKey = userKey;
    }

    /** Whether the current identity is the last read a full cache did not admit. */
    protected final boolean readWasRefused(Object userKey) {
        return refusedKey != null
                && refusedKey.equals(context.currentKey())
                && Objects.equals(refusedNamespace, currentNamespace)
                && Objects.equals(refusedUserKey, userKey);
    }

    /** Looks up the entry of the current key and namespace for a write (not counted). */
    protected final CacheEntry lookupForWrite(Object userKey) {
        return cache.get(this, context.currentKey(), currentNamespace, userKey);
    }

    /** Prepares the delegate for an access under the current key and namespace. */
    protected final D delegateForCurrentKey() {
        context.syncDelegateKey();
        delegate.setCurrentNamespace(currentNamespace);
        return delegate;
    }

    /** Caches a value for the current key and namespace. */
    protected final CacheEntry insert(Object userKey, Object value, boolean dirty)
            throws Exception {
        return cache.insert(
                this,
                context.currentKey(),
                currentNamespace,
                userKey,
                context.currentKeyGroup(),
                value,
                dirty);
    }

    /** Copies a value loaded from the delegate when the delegate keeps that same object. */
    @SuppressWarnings("unchecked")
    protected final Object copyLoaded(Object value, TypeSerializer<?> serializer) {
        return value != null && context.copyOnLoad()
                ? ((TypeSerializer<Object>) serializer).copy(value)
                : value;
    }

    /**
     * The object to cache for a value the job writes: a copy when {@code
     * state.backend.cache.copy-values-on-write} is on and the type is mutable, else the object.
     */
    protected final <T> T copyForWrite(T value, TypeSerializer<T> serializer) {
        return value != null && context.copyValuesOnWrite() && !serializer.isImmutableType()
                ? serializer.copy(value)
                : value;
    }

    @SuppressWarnings("unchecked")
    protected final N castNamespace(Object namespace) {
        return (N) namespace;
    }

    @SuppressWarnings("unchecked")
    protected final TypeSerializer<Object> valueSerializerAsObject() {
        return (TypeSerializer<Object>) (TypeSerializer<?>) valueSerializer;
    }

    protected static Object toCached(Object value) {
        return value == null ? CacheEntry.ABSENT : value;
    }

    protected static Object fromCached(Object value) {
        return value == CacheEntry.ABSENT ? null : value;
    }
}
