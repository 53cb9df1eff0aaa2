package io.github.flinkstate.lru.state;

import io.github.flinkstate.lru.cow.CacheEntry;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.MapSerializer;
import org.apache.flink.runtime.state.internal.InternalMapState;

/**
 * Cached {@link InternalMapState}: one cache entry per user key (value, {@code null} value, or
 * {@link CacheEntry#ABSENT}). Point operations use the cache; operations over the whole map of a
 * key and namespace ({@code entries/keys/values/iterator}, and {@code isEmpty} unless a cached user
 * key is present) first write that row's dirty entries to the delegate and then read the delegate,
 * so cached, dirty, deleted and uncached entries all appear exactly once. Changes made through an
 * iterator go to the delegate and drop the affected cache entry.
 *
 * <p>Thread safety: task thread only.
 *
 * <p>Invariants: {@link #rows} holds, per (key, namespace), exactly the user keys this state has
 * live cache entries for and how many of those entries are dirty; a row without cached user keys
 * and without dirty entries is absent. A row with no dirty entry needs no write-back before
 * iterating, which keeps whole-map reads of fully cached maps cheap.
 */
public final class CachedMapState<K, N, UK, UV>
        extends AbstractCachedState<K, N, Map<UK, UV>, InternalMapState<K, N, UK, UV>>
        implements InternalMapState<K, N, UK, UV> {

    private final Map<RowKey, Row> rows = new HashMap<>();
    private TypeSerializer<UV> userValueSerializer;

    public CachedMapState(
            CacheContext<K> context,
            String name,
            InternalMapState<K, N, UK, UV> delegate,
            TypeSerializer<N> namespaceSerializer) {
        super(
                context,
                StateDescriptor.Type.MAP,
                name,
                delegate,
                namespaceSerializer,
                delegate.getValueSerializer());
        this.userValueSerializer = userValueSerializerOf(valueSerializer);
    }

    @Override
    protected void onRebind(StateDescriptor<?, ?> newDescriptor) {
        this.userValueSerializer = userValueSerializerOf(valueSerializer);
    }

    @SuppressWarnings("unchecked")
    private static <UK, UV> TypeSerializer<UV> userValueSerializerOf(
            TypeSerializer<Map<UK, UV>> serializer) {
        return ((MapSerializer<UK, UV>) serializer).getValueSerializer();
    }

    // ------------------------------------------------------------------------------------------
    // point operations
    // ------------------------------------------------------------------------------------------

    @Override
    @SuppressWarnings("unchecked")
    public UV get(UK key) throws Exception {
        CacheEntry e = entry(key);
        if (e.isAbsent()) {
            return null;
        }
        if (!userValueSerializer.isImmutableType()) {
            e = cache.privateValue(e, (TypeSerializer<Object>) userValueSerializer);
        }
        return (UV) e.value();
    }

    @Override
    public void put(UK key, UV value) throws Exception {
        CacheEntry e = lookupForWrite(key);
        if (e != null) {
            cache.setValue(e, value, true);
        } else {
            insertUserKey(key, value, true);
        }
    }

    @Override
    public void putAll(Map<UK, UV> map) throws Exception {
        if (map == null) {
            return;
        }
        for (Map.Entry<UK, UV> entry : map.entrySet()) {
            put(entry.getKey(), entry.getValue());
        }
    }

    @Override
    public void remove(UK key) throws Exception {
        CacheEntry e = lookupForWrite(key);
        if (e != null) {
            cache.setValue(e, CacheEntry.ABSENT, true);
        } else {
            delegateForCurrentKey().remove(key);
        }
    }

    @Override
    public boolean contains(UK key) throws Exception {
        return !entry(key).isAbsent();
    }

    // ------------------------------------------------------------------------------------------
    // whole-map operations
    // ------------------------------------------------------------------------------------------

    @Override
    public boolean isEmpty() throws Exception {
        // a cached present user key answers without touching the delegate
        Row row = rows.get(currentRow());
        if (row != null) {
            for (Object userKey : row.userKeys) {
                CacheEntry e = cache.peek(this, context.currentKey(), currentNamespace, userKey);
                if (e != null && !e.isAbsent()) {
                    return false;
                }
            }
        }
        flushRow();
        return delegateForCurrentKey().isEmpty();
    }

    @Override
    public void clear() {
        try {
            Row row = rows.get(currentRow());
            if (row != null) {
                for (Object userKey : new ArrayList<>(row.userKeys)) {
                    CacheEntry e =
                            cache.peek(this, context.currentKey(), currentNamespace, userKey);
                    if (e != null) {
                        cache.remove(e);
                    }
                }
            }
            delegateForCurrentKey().clear();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new RuntimeException("Error while clearing map state " + name, e);
        }
    }

    @Override
    public Iterable<Map.Entry<UK, UV>> entries() throws Exception {
        flushRow();
        Iterable<Map.Entry<UK, UV>> entries = delegateForCurrentKey().entries();
        RowOwner owner = rowOwner();
        return wrap(
                entries, owner, Map.Entry::getKey, entry -> new InvalidatingEntry(entry, owner));
    }

    @Override
    public Iterable<UK> keys() throws Exception {
        flushRow();
        return wrap(delegateForCurrentKey().keys(), rowOwner(), k -> k, Function.identity());
    }

    @Override
    public Iterable<UV> values() throws Exception {
        flushRow();
        // values() cannot tell which user key an iterator.remove() hits: drop the whole row's cache
        RowOwner owner = rowOwner();
        Iterable<UV> values = delegateForCurrentKey().values();
        return () -> new InvalidatingIterator<>(values.iterator(), owner, v -> null, v -> v);
    }

    @Override
    public Iterator<Map.Entry<UK, UV>> iterator() throws Exception {
        return entries().iterator();
    }

    private <T> Iterable<T> wrap(
            Iterable<T> delegateIterable,
            RowOwner owner,
            Function<T, Object> userKeyOf,
            Function<T, T> elementWrapper) {
        if (delegateIterable == null) {
            return null;
        }
        return () ->
                new InvalidatingIterator<>(
                        delegateIterable.iterator(), owner, userKeyOf, elementWrapper);
    }

    // ------------------------------------------------------------------------------------------
    // cache bookkeeping
    // ------------------------------------------------------------------------------------------

    private CacheEntry entry(UK userKey) throws Exception {
        CacheEntry e = lookupForRead(userKey);
        if (e != null) {
            return e;
        }
        InternalMapState<K, N, UK, UV> d = delegateForCurrentKey();
        UV value = d.get(userKey);
        Object cached;
        if (value != null) {
            cached = copyLoaded(value, userValueSerializer);
        } else {
            cached = d.contains(userKey) ? null : CacheEntry.ABSENT;
        }
        return insertUserKey(userKey, cached, false);
    }

    private CacheEntry insertUserKey(UK userKey, Object value, boolean dirty) throws Exception {
        CacheEntry e = insert(userKey, value, dirty);
        rows.computeIfAbsent(currentRow(), r -> new Row()).userKeys.add(userKey);
        return e;
    }

    @Override
    public void onRemoved(CacheEntry entry) {
        RowKey key = new RowKey(entry.key(), entry.namespace());
        Row row = rows.get(key);
        if (row == null) {
            return;
        }
        row.userKeys.remove(entry.userKey());
        if (entry.isDirty()) {
            row.dirty--;
        }
        if (row.userKeys.isEmpty() && row.dirty == 0) {
            rows.remove(key);
        }
    }

    @Override
    public void onDirtyChanged(CacheEntry entry, boolean dirty) {
        // called from inside insert() before the user key is added to the row: create the row
        Row row = rows.computeIfAbsent(new RowKey(entry.key(), entry.namespace()), r -> new Row());
        row.dirty += dirty ? 1 : -1;
    }

    /** Writes the dirty entries of the current key and namespace to the delegate. */
    private void flushRow() throws Exception {
        Row row = rows.get(currentRow());
        if (row == null || row.dirty == 0) {
            return;
        }
        // write-back and markClean never add or remove cache entries, so no copy of the set
        for (Object userKey : row.userKeys) {
            CacheEntry e = cache.peek(this, context.currentKey(), currentNamespace, userKey);
            if (e != null && e.isDirty()) {
                writeBack(e);
                cache.markClean(e);
            }
        }
    }

    private RowKey currentRow() {
        return new RowKey(context.currentKey(), currentNamespace);
    }

    private RowOwner rowOwner() {
        return new RowOwner(context.currentKey(), currentNamespace);
    }

    /** Identifies the map of one key and namespace. */
    private record RowKey(Object key, Object namespace) {}

    /** The cached user keys of one key and namespace, and how many of their entries are dirty. */
    private static final class Row {
        final Set<Object> userKeys = new HashSet<>();
        int dirty;
    }

    /** The row an iterator was created for; drops cache entries the iterator changed. */
    private final class RowOwner {
        private final Object key;
        private final Object namespace;

        RowOwner(Object key, Object namespace) {
            this.key = key;
            this.namespace = namespace;
        }

        void invalidate(Object userKey) {
            if (userKey == null) {
                Row row = rows.get(new RowKey(key, namespace));
                if (row != null) {
                    for (Object uk : new ArrayList<>(row.userKeys)) {
                        invalidate(uk);
                    }
                }
                return;
            }
            CacheEntry e = cache.peek(CachedMapState.this, key, namespace, userKey);
            if (e != null) {
                // clean (the row was flushed before iterating) unless changed meanwhile
                if (e.isDirty()) {
                    throw new IllegalStateException(
                            "Map state " + name + " was modified while being iterated");
                }
                cache.remove(e);
            }
        }
    }

    /** Passes through a delegate iterator; a remove() also drops the cached entry. */
    private final class InvalidatingIterator<T> implements Iterator<T> {
        private final Iterator<T> delegate;
        private final RowOwner owner;
        private final Function<T, Object> userKeyOf;
        private final Function<T, T> elementWrapper;
        private T last;

        InvalidatingIterator(
                Iterator<T> delegate,
                RowOwner owner,
                Function<T, Object> userKeyOf,
                Function<T, T> elementWrapper) {
            this.delegate = delegate;
            this.owner = owner;
            this.userKeyOf = userKeyOf;
            this.elementWrapper = elementWrapper;
        }

        @Override
        public boolean hasNext() {
            return delegate.hasNext();
        }

        @Override
        public T next() {
            last = delegate.next();
            return elementWrapper.apply(last);
        }

        @Override
        public void remove() {
            delegate.remove();
            owner.invalidate(userKeyOf.apply(last));
        }
    }

    /** A delegate map entry whose setValue also drops the cached entry. */
    private final class InvalidatingEntry implements Map.Entry<UK, UV> {
        private final Map.Entry<UK, UV> delegate;
        private final RowOwner owner;

        InvalidatingEntry(Map.Entry<UK, UV> delegate, RowOwner owner) {
            this.delegate = delegate;
            this.owner = owner;
        }

        @Override
        public UK getKey() {
            return delegate.getKey();
        }

        @Override
        public UV getValue() {
            return delegate.getValue();
        }

        @Override
        public UV setValue(UV value) {
            UV old = delegate.setValue(value);
            owner.invalidate(delegate.getKey());
            return old;
        }

        @Override
        public boolean equals(Object o) {
            return delegate.equals(o);
        }

        @Override
        public int hashCode() {
            return delegate.hashCode();
        }

        @Override
        public String toString() {
            return delegate.toString();
        }
    }
}
