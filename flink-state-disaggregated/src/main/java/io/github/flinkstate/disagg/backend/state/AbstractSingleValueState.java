package io.github.flinkstate.disagg.backend.state;

import io.github.flinkstate.disagg.backend.RegisteredKvState;
import io.github.flinkstate.disagg.backend.StateAccess;
import java.io.IOException;
import org.apache.flink.api.common.typeutils.TypeSerializer;

/**
 * A state stored as one engine entry per (key, namespace): value, reducing and aggregating state.
 * {@code SV} is the stored type.
 *
 * <p>Thread safety: task thread only.
 */
abstract class AbstractSingleValueState<K, N, SV> extends AbstractDisaggState<K, N, SV> {

    AbstractSingleValueState(StateAccess<K> backend, RegisteredKvState info) {
        super(backend, info);
    }

    final SV read(byte[] prefix) throws IOException {
        byte[] bytes = store().get(prefix);
        return bytes == null ? null : deserialize(bytes, getValueSerializer());
    }

    final void write(byte[] prefix, SV value) throws IOException {
        if (value == null) {
            store().delete(prefix);
        } else {
            store().put(prefix, serialize(value, getValueSerializer()));
        }
    }

    public SV getInternal() {
        try {
            return read(prefix());
        } catch (IOException e) {
            throw io(e);
        }
    }

    public void updateInternal(SV value) {
        try {
            write(prefix(), value);
        } catch (IOException e) {
            throw io(e);
        }
    }

    @Override
    public void clear() {
        try {
            store().delete(prefix());
        } catch (IOException e) {
            throw io(e);
        }
    }

    @Override
    protected byte[] serializedValueAt(byte[] prefix, TypeSerializer<SV> safeValueSerializer)
            throws Exception {
        // the stored bytes are the value in the serializer's format: no serializer needed
        return store().get(prefix);
    }

    /** Merges {@code sources} into {@code target} with {@code merge}, deleting the sources. */
    final void mergeInto(N target, java.util.Collection<N> sources, Merge<SV> merge)
            throws Exception {
        if (sources == null || sources.isEmpty()) {
            return;
        }
        SV acc = null;
        for (N source : sources) {
            if (source == null) {
                continue;
            }
            byte[] p = prefix(source);
            SV v = read(p);
            if (v != null) {
                store().delete(p);
                acc = acc == null ? v : merge.apply(acc, v);
            }
        }
        if (acc != null) {
            byte[] t = prefix(target);
            SV existing = read(t);
            write(t, existing == null ? acc : merge.apply(existing, acc));
        }
    }

    @FunctionalInterface
    interface Merge<T> {
        T apply(T a, T b) throws Exception;
    }
}
