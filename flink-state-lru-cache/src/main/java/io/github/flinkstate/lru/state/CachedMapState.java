package io.github.flinkstate.lru.state;

import io.github.flinkstate.lru.cow.CacheEntry;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.MapSerializer;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.queryablestate.client.state.serialization.KvStateSerializer;
import org.apache.flink.runtime.state.internal.InternalMapState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Cached {@link InternalMapState}: one cache entry per user key (value, {@code null} value, or
 * {@link CacheEntry#ABSENT}). Point operations use the cache. Whole-map reads ({@code
 * entries/keys/values/iterator}, and {@code isEmpty} unless a cached user key is present) merge the
 * cached entries of that key and namespace over the delegate's iterator (cached values replace the
 * delegate's, cached deletions hide them); nothing is written back for a read. A map whose user
 * keys are all known to be cached (its row is <em>complete</em>: an iteration found no delegate
 * entry the cache lacked, and since then no entry of it left the cache and no write went past the
 * cache) is read from the cache alone. The returned iterables belong to the key and namespace
 * current when they were obtained, and each iteration shows the map as it is when the iteration
 * starts. Iteration order: the delegate's order for the user keys the delegate has, then cached
 * user keys it lacks (Flink leaves map order unspecified). A map state whose user keys compare by
 * identity (arrays, classes without {@code equals}, or with an {@code equals} that compares a
 * component by identity) is left to the delegate once such a key is seen ({@link UserKeyEquality}).
 *
 * <p>Thread safety: task thread only.
 *
 * <p>Invariants: {@link #rows} holds, per (key, namespace), exactly the user keys this state has
 * live cache entries for and how many of those entries are dirty; a row without cached user keys
 * and without dirty entries is absent. A row marked complete has a cache entry (a value or a
 * deletion) for every user key the delegate holds for its key and namespace.
 */
public final class CachedMapState<K, N, UK, UV>
        extends AbstractCachedState<K, N, Map<UK, UV>, InternalMapState<K, N, UK, UV>>
        implements InternalMapState<K, N, UK, UV> {

    private static final Logger LOG = LoggerFactory.getLogger(CachedMapState.class);

    /** Marks an iteration element whose value is still the delegate entry's (read lazily). */
    private static final Object DELEGATE_VALUE = new Object();

    /** Concurrent only so that queryable-state reads on other threads see a consistent set. */
    private final Map<RowKey, Row> rows = new ConcurrentHashMap<>();

    private TypeSerializer<UV> userValueSerializer;
    private TypeSerializer<UK> userKeySerializer;

    /**
     * True once a user key without value equality was seen ({@link UserKeyEquality}): the cache
     * finds entries by {@code equals} and {@code hashCode}, the delegate (RocksDB) by the
     * serialized key, so two equal arrays would be two cache entries for one delegate key. From
     * then on this state is the delegate's alone: nothing of it is cached.
     */
    private boolean uncached;

    private final UserKeyEquality userKeyEquality = new UserKeyEquality();

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
        this.userKeySerializer = userKeySerializerOf(valueSerializer);
    }

    @Override
    protected void onRebind(StateDescriptor<?, ?> newDescriptor) {
        this.userValueSerializer = userValueSerializerOf(valueSerializer);
        this.userKeySerializer = userKeySerializerOf(valueSerializer);
    }

    @SuppressWarnings("unchecked")
    private static <UK, UV> TypeSerializer<UK> userKeySerializerOf(
            TypeSerializer<Map<UK, UV>> serializer) {
        return ((MapSerializer<UK, UV>) serializer).getKeySerializer();
    }

    @SuppressWarnings("unchecked")
    private static <UK, UV> TypeSerializer<UV> userValueSerializerOf(
            TypeSerializer<Map<UK, UV>> serializer) {
        return ((MapSerializer<UK, UV>) serializer).getValueSerializer();
    }

    // ------------------------------------------------------------------------------------------
    // point operations
    // ------------------------------------------------------------------------------------------

    /**
     * Whether this state leaves {@code userKey} (and from now on every user key) to the delegate;
     * the first key without value equality writes back and drops what this state has cached.
     */
    @SuppressWarnings("unchecked")
    private boolean uncached(Object userKey) throws Exception {
        if (!uncached
                && userKey != null
                && !userKeyEquality.byValue(
                        userKey, (TypeSerializer<Object>) (TypeSerializer<?>) userKeySerializer)) {
            flushAndDropEntries();
            uncached = true;
            LOG.info(
                    "Map state {} has user keys of {}, which compare by identity: the cache"
                            + " leaves this state to the delegate",
                    name,
                    userKey.getClass().getName());
        }
        return uncached;
    }

    @Override
    @SuppressWarnings("unchecked")
    public UV get(UK key) throws Exception {
        if (uncached(key)) {
            return delegateForCurrentKey().get(key);
        }
        CacheEntry e = entry(key);
        if (e == null) { // not admitted: the delegate's value, uncached
            return (UV) copyLoaded(delegateForCurrentKey().get(key), userValueSerializer);
        }
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
        if (uncached(key)) {
            delegateForCurrentKey().put(key, value);
            return;
        }
        UV stored = copyForWrite(value, userValueSerializer);
        CacheEntry e = lookupForWrite(key);
        if (e != null) {
            cache.setValue(e, stored, true);
        } else if (readWasRefused(key)) {
            // the delegate gets a user key the cache lacks: the row is no longer complete
            Row row = rows.get(currentRow());
            if (row != null) {
                row.invalidate();
            }
            // copies as for the cache (state.backend.cache.copy-values-on-write): a heap delegate
            // keeps the objects it is given
            delegateForCurrentKey().put(copyForWrite(key, userKeySerializer), stored);
        } else {
            // the row learns of the new user key in onInserted
            insert(copyForWrite(key, userKeySerializer), stored, true);
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
        if (uncached(key)) {
            delegateForCurrentKey().remove(key);
            return;
        }
        CacheEntry e = lookupForWrite(key);
        if (e != null) {
            cache.setValue(e, CacheEntry.ABSENT, true);
        } else {
            delegateForCurrentKey().remove(key);
        }
    }

    @Override
    public boolean contains(UK key) throws Exception {
        if (uncached(key)) {
            return delegateForCurrentKey().contains(key);
        }
        CacheEntry e = entry(key);
        return e == null ? delegateForCurrentKey().contains(key) : !e.isAbsent();
    }

    // ------------------------------------------------------------------------------------------
    // whole-map operations
    // ------------------------------------------------------------------------------------------

    @Override
    public boolean isEmpty() throws Exception {
        Row row = rows.get(currentRow());
        if (row == null || row.isEmpty()) {
            return delegateForCurrentKey().isEmpty();
        }
        // a cached present user key answers without touching the delegate
        for (Object userKey : row.userKeys()) {
            CacheEntry e = cache.peek(this, context.currentKey(), currentNamespace, userKey);
            if (e != null && !e.isAbsent()) {
                return false;
            }
        }
        // only cached deletions: the delegate's entries minus those
        return !new RowView(context.currentKey(), currentNamespace, context.currentKeyGroup())
                .iterator()
                .hasNext();
    }

    @Override
    public void clear() {
        try {
            Row row = rows.get(currentRow());
            if (row != null) {
                for (Object userKey : row.userKeys()) {
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
    public Iterable<Map.Entry<UK, UV>> entries() {
        return new RowView(context.currentKey(), currentNamespace, context.currentKeyGroup());
    }

    @Override
    public Iterable<UK> keys() {
        RowView row = entries0();
        return () -> new MappingIterator<>(row.iterator(), Map.Entry::getKey);
    }

    @Override
    public Iterable<UV> values() {
        RowView row = entries0();
        return () -> new MappingIterator<>(row.iterator(), Map.Entry::getValue);
    }

    @Override
    public Iterator<Map.Entry<UK, UV>> iterator() {
        return entries().iterator();
    }

    private RowView entries0() {
        return new RowView(context.currentKey(), currentNamespace, context.currentKeyGroup());
    }

    /**
     * Queryable state for a whole map, on a thread other than the task's: the delegate's map of
     * that key and namespace with this state's cached entries of it laid over, serialized as the
     * delegate does. Writes nothing back and does not move the delegate's key; see {@link
     * AbstractCachedState#getSerializedValue}.
     */
    @Override
    @SuppressWarnings("unchecked")
    public byte[] getSerializedValue(
            byte[] serializedKeyAndNamespace,
            TypeSerializer<K> safeKeySerializer,
            TypeSerializer<N> safeNamespaceSerializer,
            TypeSerializer<Map<UK, UV>> safeValueSerializer)
            throws Exception {
        Tuple2<K, N> keyAndNamespace =
                KvStateSerializer.deserializeKeyAndNamespace(
                        serializedKeyAndNamespace, safeKeySerializer, safeNamespaceSerializer);
        MapSerializer<UK, UV> mapSerializer = (MapSerializer<UK, UV>) safeValueSerializer;
        byte[] fromDelegate =
                delegate.getSerializedValue(
                        serializedKeyAndNamespace,
                        safeKeySerializer,
                        safeNamespaceSerializer,
                        safeValueSerializer);
        Row row = rows.get(new RowKey(keyAndNamespace.f0, keyAndNamespace.f1));
        Object[] cachedUserKeys = row == null ? new Object[0] : row.userKeys().toArray();
        if (cachedUserKeys.length == 0) {
            return fromDelegate;
        }
        Map<UK, UV> merged = new HashMap<>();
        if (fromDelegate != null) {
            Map<UK, UV> delegateMap =
                    KvStateSerializer.deserializeMap(
                            fromDelegate,
                            mapSerializer.getKeySerializer(),
                            mapSerializer.getValueSerializer());
            if (delegateMap != null) {
                merged.putAll(delegateMap);
            }
        }
        for (Object userKey : cachedUserKeys) {
            CacheEntry e =
                    cache.peekFromOtherThread(
                            this, keyAndNamespace.f0, keyAndNamespace.f1, userKey);
            if (e == null) {
                continue;
            }
            Object value = e.value();
            if (value == CacheEntry.ABSENT) {
                merged.remove((UK) userKey);
            } else {
                merged.put((UK) userKey, (UV) value);
            }
        }
        return merged.isEmpty()
                ? null
                : KvStateSerializer.serializeMap(
                        merged.entrySet(),
                        mapSerializer.getKeySerializer(),
                        mapSerializer.getValueSerializer());
    }

    // ------------------------------------------------------------------------------------------
    // cache bookkeeping
    // ------------------------------------------------------------------------------------------

    /**
     * The live entry of {@code userKey} under the current key and namespace, loaded on a miss; null
     * when the miss was not admitted by a full cache ({@link
     * io.github.flinkstate.lru.cow.CowLruMap#admitRead}, as for value state): the caller then reads
     * the delegate, and a {@code put} of the same entry that follows goes to the delegate too.
     */
    private CacheEntry entry(UK userKey) throws Exception {
        CacheEntry e = lookupForRead(userKey);
        cache.recordRead(e != null);
        if (e != null) {
            return e;
        }
        if (!cache.admitRead()) {
            rememberRefusedRead(
                    userKeySerializer.isImmutableType()
                            ? userKey
                            : userKeySerializer.copy(userKey));
            return null;
        }
        InternalMapState<K, N, UK, UV> d = delegateForCurrentKey();
        UV value = d.get(userKey);
        Object cached;
        if (value != null) {
            cached = copyLoaded(value, userValueSerializer);
        } else {
            cached = d.contains(userKey) ? null : CacheEntry.ABSENT;
        }
        // the entry keeps its key: a copy, since the caller may reuse its object for other reads
        // (safe with RocksDB and HashMap, which keep nothing of a read's key)
        UK key =
                userKey == null || userKeySerializer.isImmutableType()
                        ? userKey
                        : userKeySerializer.copy(userKey);
        return insert(key, cached, false);
    }

    @Override
    public void onInserted(CacheEntry entry) {
        // called inside insert(), before it evicts: a failing write-back of a victim leaves the
        // new entry live, and its row must list it
        rows.computeIfAbsent(new RowKey(entry.key(), entry.namespace()), r -> new Row())
                .add(entry.userKey());
    }

    @Override
    public void onRemoved(CacheEntry entry) {
        RowKey key = new RowKey(entry.key(), entry.namespace());
        Row row = rows.get(key);
        if (row == null) {
            return;
        }
        row.remove(entry.userKey());
        row.invalidate(); // the delegate may hold this user key, the cache no longer does
        if (entry.isDirty()) {
            row.dirty--;
        }
        if (row.isEmpty() && row.dirty == 0) {
            rows.remove(key);
        }
    }

    @Override
    public void onDirtyChanged(CacheEntry entry, boolean dirty) {
        // called from inside insert(), after onInserted created the row
        Row row = rows.computeIfAbsent(new RowKey(entry.key(), entry.namespace()), r -> new Row());
        row.dirty += dirty ? 1 : -1;
    }

    private RowKey currentRow() {
        return new RowKey(context.currentKey(), currentNamespace);
    }

    /** Identifies the map of one key and namespace. */
    private record RowKey(Object key, Object namespace) {}

    /**
     * The cached user keys of one key and namespace, and how many of their entries are dirty. A
     * null user key (which HashMap and RocksDB accept, e.g. with a {@code StringSerializer}) is
     * held as {@link #NULL_USER_KEY}, as the concurrent set takes no null.
     */
    private static final class Row {
        private static final Object NULL_USER_KEY = new Object();
        private final Set<Object> userKeys = ConcurrentHashMap.newKeySet();
        int dirty;

        /**
         * Whether every user key the delegate holds for this row is cached, so that a whole-map
         * read needs no delegate. Set by an iteration that found no delegate entry the cache
         * lacked; cleared by {@link #invalidate}. Task thread only.
         */
        boolean complete;

        /** Counts {@link #invalidate} calls, so an iteration can tell none happened. */
        int invalidations;

        /** An entry of this row left the cache, or a write of it went past the cache. */
        void invalidate() {
            complete = false;
            invalidations++;
        }

        void add(Object userKey) {
            userKeys.add(userKey == null ? NULL_USER_KEY : userKey);
        }

        void remove(Object userKey) {
            userKeys.remove(userKey == null ? NULL_USER_KEY : userKey);
        }

        boolean isEmpty() {
            return userKeys.isEmpty();
        }

        /** A copy of the cached user keys, null ones included, in the set's order. */
        List<Object> userKeys() {
            List<Object> keys = new ArrayList<>(userKeys.size());
            for (Object k : userKeys) {
                keys.add(k == NULL_USER_KEY ? null : k);
            }
            return keys;
        }
    }

    /**
     * The map of one key and namespace, fixed when a whole-map read was called. Each {@link
     * #iterator()} shows the map as it is then: the delegate's entries with the cached entries laid
     * over them (cached values replace the delegate's, cached deletions hide them, cached user keys
     * the delegate lacks follow at the end). Nothing is written back for a read.
     */
    private final class RowView implements Iterable<Map.Entry<UK, UV>> {
        private final Object key;
        private final N namespace;
        private final int keyGroup;

        RowView(Object key, N namespace, int keyGroup) {
            this.key = key;
            this.namespace = namespace;
            this.keyGroup = keyGroup;
        }

        @Override
        public Iterator<Map.Entry<UK, UV>> iterator() {
            Row row = rows.get(new RowKey(key, namespace));
            List<Object> cachedUserKeys = row == null || row.isEmpty() ? List.of() : row.userKeys();
            if (row != null && row.complete) {
                // every user key of the map is cached: the delegate has nothing more to add
                return new OverlayIterator(
                        this, Collections.emptyIterator(), cachedUserKeys, false, null);
            }
            context.setDelegateKey(key, keyGroup);
            delegate.setCurrentNamespace(namespace);
            Iterable<Map.Entry<UK, UV>> fromDelegate;
            try {
                fromDelegate = delegate.entries();
            } catch (Exception e) {
                throw new RuntimeException("Error while iterating map state " + name, e);
            }
            if (fromDelegate == null) {
                return new OverlayIterator(
                        this, Collections.emptyIterator(), cachedUserKeys, false, row);
            }
            if (context.copyOnLoad()) {
                // the delegate's map is a live heap object that evictions during the iteration
                // may change: iterate a copy of its entries, and record changes in the cache
                List<Map.Entry<UK, UV>> copy = new ArrayList<>();
                for (Map.Entry<UK, UV> e : fromDelegate) {
                    copy.add(new AbstractMap.SimpleEntry<>(e.getKey(), e.getValue()));
                }
                return new OverlayIterator(this, copy.iterator(), cachedUserKeys, false, row);
            }
            return new OverlayIterator(this, fromDelegate.iterator(), cachedUserKeys, true, row);
        }

        CacheEntry cached(Object userKey) {
            return cache.peek(CachedMapState.this, key, namespace, userKey);
        }

        /** Whether {@code row} is still this map's row in {@link #rows}. */
        boolean isLive(Row row) {
            return rows.get(new RowKey(key, namespace)) == row;
        }

        /** Point read of one user key from the delegate; {@link CacheEntry#ABSENT} if absent. */
        Object readDelegate(Object userKey) {
            context.setDelegateKey(key, keyGroup);
            delegate.setCurrentNamespace(namespace);
            try {
                @SuppressWarnings("unchecked")
                UK uk = (UK) userKey;
                UV value = delegate.get(uk);
                if (value != null) {
                    return copyLoaded(value, userValueSerializer);
                }
                return delegate.contains(uk) ? null : CacheEntry.ABSENT;
            } catch (Exception e) {
                throw new RuntimeException("Error while reading map state " + name, e);
            }
        }

        /**
         * Records a change of one user key of this row in the cache (write-back), or in the
         * delegate when this state is {@link #uncached}.
         */
        @SuppressWarnings("unchecked")
        void write(Object userKey, Object value) {
            try {
                if (uncached(userKey)) {
                    context.setDelegateKey(key, keyGroup);
                    delegate.setCurrentNamespace(namespace);
                    if (value == CacheEntry.ABSENT) {
                        delegate.remove((UK) userKey);
                    } else {
                        delegate.put((UK) userKey, (UV) value);
                    }
                    return;
                }
            } catch (RuntimeException ex) {
                throw ex;
            } catch (Exception ex) {
                throw new RuntimeException("Error while writing map state " + name, ex);
            }
            CacheEntry e = cached(userKey);
            if (e != null) {
                cache.setValue(e, value, true);
                return;
            }
            try {
                cache.insert(CachedMapState.this, key, namespace, userKey, keyGroup, value, true);
            } catch (Exception ex) {
                throw new RuntimeException("Error while writing map state " + name, ex);
            }
        }
    }

    /**
     * Iterates a {@link RowView}: first the delegate's entries (replaced or hidden by cached ones),
     * then the cached user keys the delegate did not return.
     *
     * <p>{@code remove()} and {@code setValue} act on the row the iterator belongs to: a change of
     * an entry that came from the delegate goes through the delegate's own iterator or entry while
     * that is still positioned on it, every other change is recorded in the cache.
     */
    private final class OverlayIterator implements Iterator<Map.Entry<UK, UV>> {
        private final RowView row;
        private final Iterator<Map.Entry<UK, UV>> delegateIterator;

        /** The user keys cached when the iteration started. */
        private final List<Object> cachedAtStart;

        /**
         * Those of {@link #cachedAtStart} the delegate has not returned (yet); built at the first
         * entry the delegate returns, so an iteration without delegate entries copies nothing.
         */
        private Set<Object> cachedOnly;

        /** Whether changes of delegate elements may go through the delegate's iterator/entry. */
        private final boolean changeThroughDelegate;

        private Iterator<Object> cachedOnlyIterator;

        private OverlayEntry next;
        private OverlayEntry last;

        /** True while the delegate iterator's last returned element is {@link #last}'s source. */
        private boolean delegatePositionedOnLast;

        /**
         * The row to mark complete if the delegate's entries run out without one the cache lacked
         * and without an invalidation of the row since this iterator was made; null: none.
         */
        private Row toComplete;

        private final int invalidationsAtStart;
        private boolean delegateHadUncachedEntry;

        OverlayIterator(
                RowView row,
                Iterator<Map.Entry<UK, UV>> delegateIterator,
                List<Object> cachedAtStart,
                boolean changeThroughDelegate,
                Row toComplete) {
            this.row = row;
            this.changeThroughDelegate = changeThroughDelegate;
            this.delegateIterator = delegateIterator;
            this.cachedAtStart = cachedAtStart;
            this.toComplete = toComplete;
            this.invalidationsAtStart = toComplete == null ? 0 : toComplete.invalidations;
        }

        @Override
        public boolean hasNext() {
            if (next == null) {
                next = advance();
            }
            return next != null;
        }

        @Override
        public Map.Entry<UK, UV> next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            last = next;
            next = null;
            delegatePositionedOnLast = last.fromDelegate != null;
            return last;
        }

        @Override
        public void remove() {
            if (last == null) {
                throw new IllegalStateException("next() has not been called");
            }
            if (changeThroughDelegate
                    && last.fromDelegate != null
                    && delegatePositionedOnLast
                    && row.cached(last.userKey) == null) {
                delegateIterator.remove();
            } else {
                row.write(last.userKey, CacheEntry.ABSENT);
            }
            last = null;
        }

        private OverlayEntry advance() {
            // the delegate's entries, with the cache laid over them
            while (delegateIterator.hasNext()) {
                Map.Entry<UK, UV> d = delegateIterator.next();
                delegatePositionedOnLast = false;
                if (cachedOnly == null) {
                    cachedOnly =
                            cachedAtStart.isEmpty() ? Set.of() : new LinkedHashSet<>(cachedAtStart);
                }
                if (!cachedOnly.isEmpty() && cachedOnly.remove(d.getKey())) {
                    Object value = currentValue(d.getKey());
                    if (value == CacheEntry.ABSENT) {
                        continue;
                    }
                    return new OverlayEntry(d.getKey(), value, d);
                }
                delegateHadUncachedEntry = true;
                return new OverlayEntry(d.getKey(), DELEGATE_VALUE, d);
            }
            markCompleteIfAllCached();
            // then cached user keys the delegate does not have
            if (cachedOnlyIterator == null) {
                cachedOnlyIterator =
                        cachedOnly == null ? cachedAtStart.iterator() : cachedOnly.iterator();
            }
            while (cachedOnlyIterator.hasNext()) {
                Object userKey = cachedOnlyIterator.next();
                Object value = currentValue(userKey);
                if (value != CacheEntry.ABSENT) {
                    return new OverlayEntry(userKey, value, null);
                }
            }
            return null;
        }

        /** Marks the row complete once, if the delegate showed nothing the cache lacked. */
        private void markCompleteIfAllCached() {
            if (toComplete != null
                    && !delegateHadUncachedEntry
                    && toComplete.invalidations == invalidationsAtStart
                    && row.isLive(toComplete)) {
                toComplete.complete = true;
            }
            toComplete = null;
        }

        /**
         * The value of a user key that was cached when the iteration started: the cached value, or,
         * if the entry was evicted since (and so written back), the delegate's current value.
         */
        private Object currentValue(Object userKey) {
            CacheEntry e = row.cached(userKey);
            if (e != null) {
                return e.isAbsent() ? CacheEntry.ABSENT : readable(e);
            }
            return row.readDelegate(userKey);
        }

        /** The cached value, made private first if a running snapshot may read it. */
        @SuppressWarnings("unchecked")
        private Object readable(CacheEntry e) {
            if (!userValueSerializer.isImmutableType()) {
                e = cache.privateValue(e, (TypeSerializer<Object>) userValueSerializer);
            }
            return e.value();
        }

        /** One element of the iteration; setValue writes through to the row. */
        private final class OverlayEntry implements Map.Entry<UK, UV> {
            private final Object userKey;
            private Object value;
            private final Map.Entry<UK, UV> fromDelegate;

            OverlayEntry(Object userKey, Object value, Map.Entry<UK, UV> fromDelegate) {
                this.userKey = userKey;
                this.value = value;
                this.fromDelegate = fromDelegate;
            }

            @Override
            @SuppressWarnings("unchecked")
            public UK getKey() {
                return (UK) userKey;
            }

            @Override
            @SuppressWarnings("unchecked")
            public UV getValue() {
                if (value == DELEGATE_VALUE) {
                    // the delegate's value is read only when asked for (keys() never deserializes
                    // it); a heap delegate's value is its own object, which a running snapshot
                    // may still serialize (an entry evicted after the barrier is such an object),
                    // so it is copied once, as every other read from a heap delegate is
                    value = copyLoaded(fromDelegate.getValue(), userValueSerializer);
                }
                return (UV) value;
            }

            @Override
            @SuppressWarnings("unchecked")
            public UV setValue(UV newValue) {
                UV old = getValue();
                if (changeThroughDelegate && fromDelegate != null && row.cached(userKey) == null) {
                    fromDelegate.setValue(newValue);
                } else {
                    row.write(userKey, copyForWrite(newValue, userValueSerializer));
                }
                value = newValue;
                return old;
            }

            @Override
            public boolean equals(Object o) {
                if (!(o instanceof Map.Entry)) {
                    return false;
                }
                Map.Entry<?, ?> other = (Map.Entry<?, ?>) o;
                return Objects.equals(userKey, other.getKey())
                        && Objects.equals(getValue(), other.getValue());
            }

            @Override
            public int hashCode() {
                return Objects.hashCode(userKey) ^ Objects.hashCode(getValue());
            }

            @Override
            public String toString() {
                return userKey + "=" + getValue();
            }
        }
    }

    /** An iterator that maps each element and passes {@code remove()} through. */
    private static final class MappingIterator<F, T> implements Iterator<T> {
        private final Iterator<F> source;
        private final Function<F, T> mapping;

        MappingIterator(Iterator<F> source, Function<F, T> mapping) {
            this.source = source;
            this.mapping = mapping;
        }

        @Override
        public boolean hasNext() {
            return source.hasNext();
        }

        @Override
        public T next() {
            return mapping.apply(source.next());
        }

        @Override
        public void remove() {
            source.remove();
        }
    }
}
