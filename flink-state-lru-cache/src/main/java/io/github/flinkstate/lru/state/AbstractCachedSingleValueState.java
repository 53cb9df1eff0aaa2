package io.github.flinkstate.lru.state;

import io.github.flinkstate.lru.cow.CacheEntry;
import io.github.flinkstate.lru.cow.PartialValue;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.internal.InternalAppendingState;
import org.apache.flink.runtime.state.internal.InternalKvState;
import org.apache.flink.runtime.state.internal.InternalMergingState;

/**
 * Base of states with one value per key and namespace (value, list, reducing, aggregating): one
 * cache entry holds the whole value, so a cached list is always the complete list.
 *
 * <p>Thread safety: task thread only.
 */
abstract class AbstractCachedSingleValueState<K, N, SV, D extends InternalKvState<K, N, ?>>
        extends AbstractCachedState<K, N, SV, D> {

    AbstractCachedSingleValueState(
            CacheContext<K> context,
            StateDescriptor.Type type,
            String name,
            D delegate,
            TypeSerializer<N> namespaceSerializer,
            TypeSerializer<SV> valueSerializer) {
        super(context, type, name, delegate, namespaceSerializer, valueSerializer);
    }

    /** Reads the value from the delegate under the current key and namespace (null if none). */
    protected abstract SV loadFromDelegate() throws Exception;

    /**
     * Completes an entry whose value is a {@link PartialValue} (only list state has them) with the
     * delegate's value; returns the live entry, now holding the whole value.
     */
    protected CacheEntry completePartial(CacheEntry partial) throws Exception {
        throw new IllegalStateException("State " + name + " has a partial cache entry " + partial);
    }

    /**
     * The live entry of the current key and namespace with the whole value, loaded into the cache
     * on a miss. An entry with a partial value counts as a miss (it needs the delegate).
     */
    protected final CacheEntry entry() throws Exception {
        CacheEntry e = cache.get(this, context.currentKey(), currentNamespace, null);
        // only lists have partial values; other states must not load the value object here (a
        // memory access a hit does not otherwise need)
        boolean hit =
                e != null
                        && (type != StateDescriptor.Type.LIST
                                || !(e.value() instanceof PartialValue));
        context.statistics().record(hit);
        if (hit) {
            return e;
        }
        if (e != null) {
            return completePartial(e);
        }
        SV loaded = loadFromDelegate();
        return insert(null, toCached(copyLoaded(loaded, valueSerializer)), false);
    }

    /**
     * The current value, or null. The object is the cached one (object reuse, as with the HashMap
     * backend); if a running snapshot still reads it, the cache switches to a copy first. A miss
     * that the full cache does not admit ({@link io.github.flinkstate.lru.cow.CowLruMap#admitRead})
     * returns the delegate's value, uncached, and remembers the identity so that its writes go to
     * the delegate too (lists are admitted by their own rule and always go through {@link
     * #entry()}).
     */
    @SuppressWarnings("unchecked")
    protected final SV getCachedValue() throws Exception {
        CacheEntry e;
        if (type == StateDescriptor.Type.LIST) {
            e = entry();
        } else {
            e = cache.get(this, context.currentKey(), currentNamespace, null);
            boolean hit = e != null;
            context.statistics().record(hit);
            cache.recordRead(hit);
            if (!hit) {
                // the heap delegate may hold an object that the cache wrote back on eviction and
                // that a running cache snapshot still serializes: never hand it out, cached or not
                SV loaded = (SV) copyLoaded(loadFromDelegate(), valueSerializer);
                if (!cache.admitRead()) {
                    rememberRefusedRead(null);
                    return loaded;
                }
                e = insert(null, toCached(loaded), false);
            }
        }
        if (!valueSerializer.isImmutableType()) {
            e = cache.privateValue(e, valueSerializerAsObject());
        }
        return (SV) fromCached(e.value());
    }

    /**
     * Replaces the value of the current key and namespace (null deletes it): in the cache, or in
     * the delegate when the identity is not cached and either its last read was not admitted or
     * this is a blind write (nothing read it first) that a full cache does not admit ({@link
     * io.github.flinkstate.lru.cow.CowLruMap#admitBlindUpdate}: only an identity written again soon
     * takes a slot, so a cache that never hits does not insert, evict and write back per write).
     */
    protected final void putCachedValue(SV value) throws Exception {
        CacheEntry e = lookupForWrite(null);
        if (e != null) {
            cache.setValue(e, toCached(value), true);
        } else if (readWasRefused(null)
                || !cache.admitBlindUpdate(this, context.currentKey(), currentNamespace)) {
            DelegateWrites.write(type, delegateForCurrentKey(), null, toCached(value));
        } else {
            insert(null, toCached(value), true);
        }
    }

    /**
     * Leaves the values of the current key in {@code namespaces} to the delegate: a cached one is
     * written back if dirty and dropped, so that an operation the delegate runs next (a namespace
     * merge, an add of null) sees the true values and its results are read from the delegate. Used
     * where HashMap and RocksDB differ (the order of a merge, what adding null does), so that the
     * cache behaves as the backend it wraps.
     */
    protected final void handToDelegate(Collection<N> namespaces) throws Exception {
        for (N namespace : namespaces) {
            CacheEntry e = cache.peek(this, context.currentKey(), namespace, null);
            if (e != null) {
                if (e.isDirty()) {
                    // the delegate may change the value in place (a HashMap merge of mutable
                    // accumulators): a value a running snapshot still writes is copied first
                    e = cache.privateValue(e, valueSerializerAsObject());
                    writeBack(e);
                }
                cache.remove(e);
            }
        }
    }

    /**
     * Adds null to the current key and namespace as the delegate does: HashMap clears the state,
     * RocksDB hands null to the reduce or aggregate function.
     */
    @SuppressWarnings("unchecked")
    protected final void addNullInDelegate() throws Exception {
        handToDelegate(List.of(currentNamespace));
        ((InternalAppendingState<?, N, Object, ?, ?>) delegateForCurrentKey()).add(null);
    }

    /**
     * Merges {@code sources} into {@code target} for the current key as the delegate does: HashMap
     * folds the sources into the target as {@code merge(target, sources)}, RocksDB as {@code
     * merge(sources, target)}, which differs for a function that is not commutative (a "keep the
     * last" reduce). The delegate runs the merge on the true values.
     */
    protected final void mergeInDelegate(N target, Collection<N> sources) throws Exception {
        if (sources == null || sources.isEmpty()) {
            return;
        }
        List<N> namespaces = new ArrayList<>(sources);
        namespaces.add(target);
        handToDelegate(namespaces);
        ((InternalMergingState<?, N, ?, ?, ?>) delegateForCurrentKey())
                .mergeNamespaces(target, sources);
    }

    @Override
    public void clear() {
        try {
            CacheEntry e = lookupForWrite(null);
            if (e != null) {
                cache.setValue(e, CacheEntry.ABSENT, true);
            } else {
                // nothing cached: the delegate is the truth, delete there directly
                delegateForCurrentKey().clear();
            }
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new RuntimeException("Error while clearing state " + name, e);
        }
    }
}
