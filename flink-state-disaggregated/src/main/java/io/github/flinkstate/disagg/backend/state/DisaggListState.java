package io.github.flinkstate.disagg.backend.state;

import io.github.flinkstate.disagg.backend.RegisteredKvState;
import io.github.flinkstate.disagg.backend.StateAccess;
import io.github.flinkstate.disagg.engine.iterator.LsmIterator;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.ListSerializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.internal.InternalListState;
import org.apache.flink.runtime.state.ttl.TtlAwareSerializer;
import org.apache.flink.util.Preconditions;

/**
 * {@code ListState}: engine entries under the list's (key, namespace) prefix followed by the
 * engine's append sequence number ({@code LsmStore.append}), each holding one or more elements
 * ({@link ListEntryValues}). {@code add} is one write and never reads the list; {@code addAll} is
 * one write too (one per element for TTL states); {@code get} is one prefix scan returning elements
 * in append order; {@code update} and {@code clear} write one prefix tombstone ({@code update} then
 * appends like {@code addAll}).
 *
 * <p>Thread safety: task thread only.
 */
public final class DisaggListState<K, N, V> extends AbstractDisaggState<K, N, List<V>>
        implements InternalListState<K, N, V> {

    public DisaggListState(StateAccess<K> backend, RegisteredKvState info) {
        super(backend, info);
    }

    private TypeSerializer<V> elementSerializer() {
        return ((ListSerializer<V>) getValueSerializer()).getElementSerializer();
    }

    @Override
    public Iterable<V> get() throws Exception {
        return getInternal();
    }

    @Override
    public List<V> getInternal() {
        try {
            return readList(prefix(), elementSerializer());
        } catch (IOException e) {
            throw io(e);
        }
    }

    private List<V> readList(byte[] prefix, TypeSerializer<V> ser) throws IOException {
        List<V> out = null;
        try (LsmIterator it = store().scanPrefix(prefix)) {
            for (; it.isValid(); it.next()) {
                if (out == null) {
                    out = new ArrayList<>();
                }
                ListEntryValues.readInto(it.value(), ser, out);
            }
        }
        return out;
    }

    @Override
    public void add(V value) throws Exception {
        Preconditions.checkNotNull(value, "You cannot add null to a ListState.");
        store().append(prefix(), serialize(value, elementSerializer()));
    }

    @Override
    public void addAll(List<V> values) throws Exception {
        Preconditions.checkNotNull(values, "List of values to add cannot be null.");
        appendAll(prefix(), values);
    }

    private void appendAll(byte[] prefix, List<V> values) throws IOException {
        TypeSerializer<V> ser = elementSerializer();
        for (V v : values) {
            Preconditions.checkNotNull(v, "You cannot add null to a ListState.");
        }
        if (values.isEmpty()) {
            return;
        }
        if (values.size() == 1 || TtlAwareSerializer.isSerializerTtlEnabled(getValueSerializer())) {
            for (V v : values) {
                store().append(prefix, serialize(v, ser));
            }
        } else {
            store().append(prefix, ListEntryValues.write(values, ser));
        }
    }

    @Override
    public void update(List<V> values) throws Exception {
        Preconditions.checkNotNull(values, "List of values to add cannot be null.");
        updateInternal(values);
    }

    @Override
    public void updateInternal(List<V> values) {
        try {
            if (values != null) {
                for (V v : values) {
                    Preconditions.checkNotNull(v, "You cannot add null to a ListState.");
                }
            }
            byte[] p = prefix();
            store().deletePrefix(p);
            if (values != null) {
                appendAll(p, values);
            }
        } catch (IOException e) {
            throw io(e);
        }
    }

    @Override
    public void clear() {
        try {
            store().deletePrefix(prefix());
        } catch (IOException e) {
            throw io(e);
        }
    }

    @Override
    public void mergeNamespaces(N target, Collection<N> sources) throws Exception {
        if (sources == null || sources.isEmpty()) {
            return;
        }
        byte[] t = prefix(target);
        for (N source : sources) {
            if (source == null) {
                continue;
            }
            byte[] s = prefix(source);
            List<byte[]> values = new ArrayList<>();
            try (LsmIterator it = store().scanPrefix(s)) {
                for (; it.isValid(); it.next()) {
                    values.add(it.value());
                }
            }
            if (!values.isEmpty()) {
                store().deletePrefix(s);
                for (byte[] v : values) {
                    store().append(t, v);
                }
            }
        }
    }

    @Override
    protected byte[] serializedValueAt(byte[] prefix, TypeSerializer<List<V>> safeValueSerializer)
            throws Exception {
        TypeSerializer<V> element =
                ((ListSerializer<V>) safeValueSerializer).getElementSerializer();
        List<V> list = readList(prefix, element);
        if (list == null) {
            return null;
        }
        // queryable-state list format: elements separated by one delimiter byte
        DataOutputSerializer out = new DataOutputSerializer(64);
        for (int i = 0; i < list.size(); i++) {
            if (i > 0) {
                out.writeByte(',');
            }
            element.serialize(list.get(i), out);
        }
        return out.getCopyOfBuffer();
    }
}
