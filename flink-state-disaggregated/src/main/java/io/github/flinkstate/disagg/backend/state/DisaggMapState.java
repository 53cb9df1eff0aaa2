package io.github.flinkstate.disagg.backend.state;

import io.github.flinkstate.disagg.backend.RegisteredKvState;
import io.github.flinkstate.disagg.backend.StateAccess;
import io.github.flinkstate.disagg.engine.iterator.LsmIterator;
import io.github.flinkstate.disagg.engine.key.Bytes;
import io.github.flinkstate.disagg.engine.key.KeyRange;
import java.io.IOException;
import java.util.AbstractMap;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import javax.annotation.Nullable;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.MapSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.queryablestate.client.state.serialization.KvStateSerializer;
import org.apache.flink.runtime.state.internal.InternalMapState;
import org.apache.flink.util.FlinkRuntimeException;

/**
 * {@code MapState}: one engine entry per user key, {@code prefix | serialized user key}; the value
 * is a null flag byte and the serialized user value. Iteration reads batches of 128 entries by
 * prefix scan (writes made while it runs may show up in a later batch, as with RocksDB's map
 * iterator); {@code clear} is one prefix tombstone.
 *
 * <p>Thread safety: task thread only.
 */
public final class DisaggMapState<K, N, UK, UV> extends AbstractDisaggState<K, N, Map<UK, UV>>
        implements InternalMapState<K, N, UK, UV> {

    private static final int BATCH = 128;

    private final DataOutputSerializer valueOut = new DataOutputSerializer(64);

    public DisaggMapState(StateAccess<K> backend, RegisteredKvState info) {
        super(backend, info);
    }

    private MapSerializer<UK, UV> mapSerializer() {
        return (MapSerializer<UK, UV>) getValueSerializer();
    }

    private byte[] entryKey(UK userKey) {
        return backend.layout().withSuffix(prefix(), userKey, mapSerializer().getKeySerializer());
    }

    private byte[] encodeValue(UV value, TypeSerializer<UV> ser) throws IOException {
        valueOut.clear();
        valueOut.writeBoolean(value == null);
        if (value != null) {
            ser.serialize(value, valueOut);
        }
        return valueOut.getCopyOfBuffer();
    }

    private static <T> T decodeValue(byte[] bytes, TypeSerializer<T> ser) throws IOException {
        DataInputDeserializer in = new DataInputDeserializer(bytes);
        return in.readBoolean() ? null : ser.deserialize(in);
    }

    @Override
    public UV get(UK key) throws Exception {
        byte[] v = store().get(entryKey(key));
        return v == null ? null : decodeValue(v, mapSerializer().getValueSerializer());
    }

    @Override
    public void put(UK key, UV value) throws Exception {
        store().put(entryKey(key), encodeValue(value, mapSerializer().getValueSerializer()));
    }

    @Override
    public void putAll(Map<UK, UV> map) throws Exception {
        if (map == null) {
            return;
        }
        for (Map.Entry<UK, UV> e : map.entrySet()) {
            put(e.getKey(), e.getValue());
        }
    }

    @Override
    public void remove(UK key) throws Exception {
        store().delete(entryKey(key));
    }

    @Override
    public boolean contains(UK key) throws Exception {
        return store().get(entryKey(key)) != null;
    }

    @Override
    public Iterable<Map.Entry<UK, UV>> entries() {
        byte[] p = prefix();
        return () -> new EntryIterator(p);
    }

    @Override
    public Iterable<UK> keys() {
        Iterable<Map.Entry<UK, UV>> entries = entries();
        return () -> map(entries.iterator(), true);
    }

    @Override
    public Iterable<UV> values() {
        Iterable<Map.Entry<UK, UV>> entries = entries();
        return () -> map(entries.iterator(), false);
    }

    @Override
    public Iterator<Map.Entry<UK, UV>> iterator() {
        return new EntryIterator(prefix());
    }

    @Override
    public boolean isEmpty() throws Exception {
        return !anyUnder(prefix());
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
    protected byte[] serializedValueAt(
            byte[] prefix, TypeSerializer<Map<UK, UV>> safeValueSerializer) throws Exception {
        MapSerializer<UK, UV> safe = (MapSerializer<UK, UV>) safeValueSerializer;
        Map<UK, UV> all = new HashMap<>();
        EntryIterator it = new EntryIterator(prefix, safe);
        while (it.hasNext()) {
            Map.Entry<UK, UV> e = it.next();
            all.put(e.getKey(), e.getValue());
        }
        return all.isEmpty()
                ? null
                : KvStateSerializer.serializeMap(
                        all.entrySet(), safe.getKeySerializer(), safe.getValueSerializer());
    }

    @SuppressWarnings("unchecked")
    private static <T, UK, UV> Iterator<T> map(Iterator<Map.Entry<UK, UV>> it, boolean keys) {
        return new Iterator<>() {
            @Override
            public boolean hasNext() {
                return it.hasNext();
            }

            @Override
            public T next() {
                Map.Entry<UK, UV> e = it.next();
                return (T) (keys ? e.getKey() : e.getValue());
            }

            @Override
            public void remove() {
                it.remove();
            }
        };
    }

    /**
     * Iterates the entries under one prefix in batches of {@link #BATCH} engine entries; each batch
     * is read with a short-lived engine iterator, so an abandoned map iterator pins no files.
     */
    private final class EntryIterator implements Iterator<Map.Entry<UK, UV>> {
        private final byte[] prefix;
        private final byte[] limit;
        private final ArrayDeque<byte[][]> batch = new ArrayDeque<>();
        private byte[] resumeFrom;
        private boolean exhausted;
        private byte[] lastKey;

        /** The entry {@link #next} returned last; marked deleted by {@link #remove}. */
        private Entry lastEntry;

        /** Null: the state's own (task thread); else a query thread's duplicate. */
        @Nullable private final MapSerializer<UK, UV> serializer;

        EntryIterator(byte[] prefix) {
            this(prefix, null);
        }

        EntryIterator(byte[] prefix, @Nullable MapSerializer<UK, UV> serializer) {
            this.serializer = serializer;
            this.prefix = prefix;
            this.limit = Bytes.prefixLimit(prefix);
            this.resumeFrom = prefix;
        }

        private void fill() {
            if (!batch.isEmpty() || exhausted) {
                return;
            }
            try (LsmIterator it = store().scan(new KeyRange(resumeFrom, limit))) {
                for (; it.isValid() && batch.size() < BATCH; it.next()) {
                    batch.add(new byte[][] {it.key(), it.value()});
                }
                if (!it.isValid()) {
                    exhausted = true;
                } else {
                    resumeFrom = it.key();
                }
            } catch (IOException e) {
                throw io(e);
            }
        }

        @Override
        public boolean hasNext() {
            fill();
            return !batch.isEmpty();
        }

        @Override
        public Map.Entry<UK, UV> next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            byte[][] kv = batch.poll();
            try {
                byte[] k = kv[0];
                MapSerializer<UK, UV> ser = serializer != null ? serializer : mapSerializer();
                DataInputDeserializer in =
                        new DataInputDeserializer(k, prefix.length, k.length - prefix.length);
                UK userKey = ser.getKeySerializer().deserialize(in);
                UV value = decodeValue(kv[1], ser.getValueSerializer());
                lastKey = k;
                lastEntry = new Entry(k, userKey, value);
                return lastEntry;
            } catch (IOException e) {
                throw new FlinkRuntimeException("Could not read map state " + name(), e);
            }
        }

        @Override
        public void remove() {
            if (lastKey == null) {
                throw new IllegalStateException("next() not called");
            }
            try {
                store().delete(lastKey);
            } catch (IOException e) {
                throw io(e);
            }
            lastKey = null;
            lastEntry.deleted = true;
        }
    }

    /**
     * A map entry whose {@code setValue} writes through to the engine; once its iterator removed
     * it, {@code getValue} returns null and {@code setValue} fails (as with RocksDB), so the
     * mapping stays removed.
     */
    private final class Entry extends AbstractMap.SimpleEntry<UK, UV> {
        private final byte[] engineKey;
        private boolean deleted;

        Entry(byte[] engineKey, UK key, UV value) {
            super(key, value);
            this.engineKey = engineKey;
        }

        @Override
        public UV getValue() {
            return deleted ? null : super.getValue();
        }

        @Override
        public UV setValue(UV value) {
            if (deleted) {
                throw new IllegalStateException("The entry was removed through its iterator");
            }
            UV old = super.setValue(value);
            try {
                store().put(engineKey, encodeValue(value, mapSerializer().getValueSerializer()));
            } catch (IOException e) {
                throw io(e);
            }
            return old;
        }
    }
}
