package io.github.flinkstate.lru.state;

import io.github.flinkstate.lru.cow.CacheEntry;
import io.github.flinkstate.lru.cow.PartialValue;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.ListSerializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.internal.InternalListState;
import org.apache.flink.util.Preconditions;

/**
 * Cached {@link InternalListState}. A cache entry holds either the complete list, which replaces
 * the delegate's list on write-back, or, after {@code add/addAll} on a list that was not cached,
 * only the appended elements ({@link PendingAppends}): an append never reads the delegate, and
 * write-back appends them to the delegate's list. Reads load the delegate's list once and cache the
 * whole list.
 *
 * <p>Thread safety: task thread only.
 */
public final class CachedListState<K, N, V>
        extends AbstractCachedSingleValueState<K, N, List<V>, InternalListState<K, N, V>>
        implements InternalListState<K, N, V> {

    public CachedListState(
            CacheContext<K> context,
            String name,
            InternalListState<K, N, V> delegate,
            TypeSerializer<N> namespaceSerializer) {
        super(
                context,
                StateDescriptor.Type.LIST,
                name,
                delegate,
                namespaceSerializer,
                delegate.getValueSerializer());
    }

    @Override
    protected List<V> loadFromDelegate() throws Exception {
        List<V> list = delegateForCurrentKey().getInternal();
        if (list == null || list.isEmpty()) {
            return null;
        }
        // we append in place later: keep only a private, modifiable list (copyLoaded copies
        // the delegate's object when the delegate keeps it)
        return list instanceof ArrayList || context.copyOnLoad() ? list : new ArrayList<>(list);
    }

    /** Reads the delegate's list once and lays the pending appends over it. */
    @Override
    @SuppressWarnings("unchecked")
    protected CacheEntry completePartial(CacheEntry partial) throws Exception {
        CacheEntry e = cache.privateValue(partial, valueSerializerAsObject());
        PendingAppends pending = (PendingAppends) e.value();
        List<V> whole = (List<V>) copyLoaded(loadFromDelegate(), valueSerializer);
        if (whole == null) {
            whole = new ArrayList<>(pending.elements().size());
        }
        whole.addAll((List<V>) pending.elements());
        return cache.setValue(e, whole, true);
    }

    @Override
    public Iterable<V> get() throws Exception {
        return getInternal();
    }

    @Override
    public List<V> getInternal() throws Exception {
        return getCachedValue();
    }

    @Override
    @SuppressWarnings("unchecked")
    public void add(V value) throws Exception {
        Preconditions.checkNotNull(value, "You cannot add null to a ListState.");
        V element = copyForWrite(value, elementSerializer());
        CacheEntry e = lookupForWrite(null);
        if (e == null || e.isAbsent()) {
            appendAll(e, List.of(element));
            return;
        }
        // the hit path of appendAll for one element, without a temporary list
        e = cache.privateValue(e, valueSerializerAsObject());
        Object list = e.value();
        if (list instanceof PendingAppends pending) {
            pending.add(element);
        } else {
            ((List<V>) list).add(element);
        }
        cache.setValue(e, list, true);
    }

    @Override
    public void addAll(List<V> values) throws Exception {
        Preconditions.checkNotNull(values, "List of values to add cannot be null.");
        if (values.isEmpty()) {
            return;
        }
        CacheEntry e = lookupForWrite(null);
        // sent to the delegate, the caller's list is checked there and serialized (RocksDB) or
        // kept (HashMap: copied first when copy-values-on-write asks, as the cache would)
        if (!appendedToDelegate(e, values, true)) {
            checkElements(values);
            appendTo(e, copyElementsForWrite(values));
        }
    }

    @Override
    public void update(List<V> values) throws Exception {
        checkElements(values);
        if (values.isEmpty()) {
            clear();
            return;
        }
        putCachedValue(copyElementsForWrite(values));
    }

    @Override
    public void updateInternal(List<V> valueToStore) throws Exception {
        update(valueToStore);
    }

    @Override
    @SuppressWarnings("unchecked")
    public void mergeNamespaces(N target, Collection<N> sources) throws Exception {
        if (sources == null || sources.isEmpty()) {
            return;
        }
        N original = currentNamespace;
        try {
            List<V> merged = new ArrayList<>();
            for (N source : sources) {
                setCurrentNamespace(source);
                // a list a running snapshot may still write is copied (its elements too) before
                // its elements move into the merged list, which is handed out for mutation
                CacheEntry e = cache.privateValue(entry(), valueSerializerAsObject());
                List<V> sourceList = (List<V>) fromCached(e.value());
                if (sourceList != null) {
                    merged.addAll(sourceList);
                    putCachedValue(null);
                }
            }
            if (!merged.isEmpty()) {
                setCurrentNamespace(target);
                appendAll(lookupForWrite(null), merged);
            }
        } finally {
            setCurrentNamespace(original);
        }
    }

    /**
     * Lists are answered element by element, separated by a {@code ','} byte, as both RocksDB and
     * the HashMap backend do (Flink's client reads it with {@code
     * KvStateSerializer.deserializeList}).
     */
    @Override
    @SuppressWarnings("unchecked")
    protected byte[] serializeForQuery(Object value, TypeSerializer<List<V>> safeValueSerializer)
            throws Exception {
        TypeSerializer<V> elements =
                ((ListSerializer<V>) safeValueSerializer).getElementSerializer();
        DataOutputSerializer out = new DataOutputSerializer(128);
        boolean first = true;
        for (V element : (List<V>) value) {
            if (!first) {
                out.writeByte(',');
            }
            elements.serialize(element, out);
            first = false;
        }
        return out.getCopyOfBuffer();
    }

    /**
     * When this key's list is not cached ({@code e}, the caller's lookup of the current key and
     * namespace, is null) and the full cache does not admit an append to it (see {@link
     * io.github.flinkstate.lru.cow.CowLruMap#admitBlindWrite}), appends {@code values} to the
     * delegate's list directly (RocksDB: one merge), so a cache that misses costs little, and
     * returns true; otherwise returns false and the caller appends in the cache. {@code
     * callersList}: {@code values} is the job's own list, whose elements a heap delegate would keep
     * (copied first when copy-values-on-write is on); otherwise it holds copies already.
     */
    private boolean appendedToDelegate(CacheEntry e, List<V> values, boolean callersList)
            throws Exception {
        if (e != null || cache.admitBlindWrite(this, context.currentKey(), currentNamespace)) {
            return false;
        }
        List<V> appended = values;
        if (callersList && context.copyValuesOnWrite()) {
            checkElements(values);
            appended = copyElementsForWrite(values);
        }
        DelegateWrites.append(delegateForCurrentKey(), appended);
        return true;
    }

    /** Appends {@code values} (the cache may keep the list) in the cache or to the delegate. */
    private void appendAll(CacheEntry e, List<V> values) throws Exception {
        if (!appendedToDelegate(e, values, false)) {
            appendTo(e, values);
        }
    }

    /**
     * Appends {@code values} (the cache may keep the list) to the live entry {@code e} of the
     * current key and namespace, or, if it is null, caches them as pending appends without reading
     * the delegate (an append needs no read).
     */
    @SuppressWarnings("unchecked")
    private void appendTo(CacheEntry e, List<V> values) throws Exception {
        if (e == null) {
            insert(null, new PendingAppends(values), true);
            return;
        }
        if (e.isAbsent()) {
            cache.setValue(e, new ArrayList<>(values), true);
            return;
        }
        e = cache.privateValue(e, valueSerializerAsObject());
        Object value = e.value();
        if (value instanceof PendingAppends pending) {
            pending.addAll(values);
        } else {
            ((List<V>) value).addAll(values);
        }
        cache.setValue(e, value, true);
    }

    /**
     * The delegate's answer (elements separated by {@code ','}) followed by the pending appends.
     * Like every queryable-state read, not synchronized with the task: the elements are read from a
     * copy of the list's array taken at once.
     */
    @Override
    @SuppressWarnings("unchecked")
    protected byte[] serializePartialForQuery(
            PartialValue partial, byte[] fromDelegate, TypeSerializer<List<V>> safeValueSerializer)
            throws Exception {
        TypeSerializer<V> elements =
                ((ListSerializer<V>) safeValueSerializer).getElementSerializer();
        DataOutputSerializer out = new DataOutputSerializer(128);
        boolean first = true;
        if (fromDelegate != null && fromDelegate.length > 0) {
            out.write(fromDelegate);
            first = false;
        }
        for (Object element : ((PendingAppends) partial).elements().toArray()) {
            if (element == null) {
                continue; // a slot the task is filling right now
            }
            if (!first) {
                out.writeByte(',');
            }
            elements.serialize((V) element, out);
            first = false;
        }
        return first ? null : out.getCopyOfBuffer();
    }

    /** A new modifiable list of the elements (copies if copy-values-on-write is on). */
    private List<V> copyElementsForWrite(List<V> values) {
        TypeSerializer<V> elements = elementSerializer();
        if (!context.copyValuesOnWrite() || elements.isImmutableType()) {
            return new ArrayList<>(values); // one array copy, no per-element call
        }
        List<V> copy = new ArrayList<>(values.size());
        for (V v : values) {
            copy.add(copyForWrite(v, elements));
        }
        return copy;
    }

    private TypeSerializer<V> elementSerializer() {
        return ((ListSerializer<V>) valueSerializer).getElementSerializer();
    }

    private static <V> void checkElements(List<V> values) {
        Preconditions.checkNotNull(values, "List of values to add cannot be null.");
        for (V v : values) {
            Preconditions.checkNotNull(v, "You cannot add null to a ListState.");
        }
    }
}
