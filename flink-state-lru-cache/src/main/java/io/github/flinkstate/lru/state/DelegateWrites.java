package io.github.flinkstate.lru.state;

import io.github.flinkstate.lru.cow.CacheEntry;
import java.util.List;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.runtime.state.internal.InternalAppendingState;
import org.apache.flink.runtime.state.internal.InternalKvState;
import org.apache.flink.runtime.state.internal.InternalListState;
import org.apache.flink.runtime.state.internal.InternalMapState;
import org.apache.flink.runtime.state.internal.InternalValueState;

/**
 * Writes one cached value (or its deletion) into a delegate state object whose key and namespace
 * are already set. Used both when a dirty entry is evicted or flushed, and when a restored
 * snapshot's cache entries are replayed into the delegate.
 *
 * <p>Stateless; call on the thread that owns the delegate backend.
 */
public final class DelegateWrites {

    private DelegateWrites() {}

    /** Appends restored elements (an append record of the cache stream) to a list state. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public static void append(InternalKvState<?, ?, ?> listDelegate, List<?> elements)
            throws Exception {
        ((InternalListState) listDelegate).addAll(elements);
    }

    /**
     * Writes one value to the delegate.
     *
     * @param type the kind of state
     * @param delegate the delegate's state, key and namespace already set
     * @param userKey the map user key, or null for non-map states
     * @param value the value, {@link CacheEntry#ABSENT} for a deletion, or for list state {@link
     *     PendingAppends} (appended to the delegate's list)
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public static void write(
            StateDescriptor.Type type,
            InternalKvState<?, ?, ?> delegate,
            Object userKey,
            Object value)
            throws Exception {
        boolean delete = value == CacheEntry.ABSENT;
        switch (type) {
            case VALUE:
                if (delete) {
                    delegate.clear();
                } else {
                    ((InternalValueState) delegate).update(value);
                }
                break;
            case LIST:
                if (delete) {
                    delegate.clear();
                } else if (value instanceof PendingAppends pending) {
                    ((InternalListState) delegate).addAll(pending.elements());
                } else {
                    ((InternalListState) delegate).update((List) value);
                }
                break;
            case REDUCING:
            case AGGREGATING:
                if (delete) {
                    delegate.clear();
                } else {
                    ((InternalAppendingState) delegate).updateInternal(value);
                }
                break;
            case MAP:
                if (delete) {
                    ((InternalMapState) delegate).remove(userKey);
                } else {
                    ((InternalMapState) delegate).put(userKey, value);
                }
                break;
            default:
                throw new IllegalStateException("Unsupported state type " + type);
        }
    }
}
