package io.github.flinkstate.lru.state;

import io.github.flinkstate.lru.cow.PartialValue;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.typeutils.TypeSerializer;

/**
 * The cached value of a list that the cache has not read: the elements appended to it since it was
 * last written back, in order. The delegate holds the rest of the list (possibly nothing). Appends
 * need no read of the delegate, so a job that appends to lists and reads them later (windows)
 * appends in memory even when the lists were never loaded.
 *
 * <p>Write-back appends the elements to the delegate's list ({@code addAll}, a merge in RocksDB)
 * and drops the entry; a read loads the delegate's list once and replaces this value with the whole
 * list (still dirty); a snapshot writes the elements as an append record (format version 2). See
 * {@link PartialValue} for the invariants.
 *
 * <p>Thread safety: task thread only; snapshots read a frozen instance (copy-on-write through the
 * cache).
 */
public final class PendingAppends implements PartialValue {

    private final ArrayList<Object> elements;

    PendingAppends(List<?> first) {
        this.elements = new ArrayList<>(first);
    }

    private PendingAppends(ArrayList<Object> elements) {
        this.elements = elements;
    }

    /** The appended elements, oldest first; not to be modified by callers. */
    public List<Object> elements() {
        return elements;
    }

    void add(Object element) {
        elements.add(element);
    }

    void addAll(List<?> more) {
        elements.addAll(more);
    }

    @Override
    @SuppressWarnings("unchecked")
    public PartialValue copy(TypeSerializer<Object> serializer) {
        // the list serializer deep-copies the elements into a new ArrayList
        Object copied = serializer.copy(elements);
        return new PendingAppends(
                copied instanceof ArrayList
                        ? (ArrayList<Object>) copied
                        : new ArrayList<>((List<Object>) copied));
    }

    @Override
    public String toString() {
        return "PendingAppends" + elements;
    }
}
