package io.github.flinkstate.lru.state;

import static io.github.flinkstate.lru.support.KeyedBackendHarness.state;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.lru.StateBackendWrapperWithLRUCache;
import io.github.flinkstate.lru.support.KeyedBackendHarness;
import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeHint;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.internal.InternalMapState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Map user keys without value equality (a {@code byte[]}, a POJO that keeps {@code Object.equals}):
 * RocksDB finds entries by their serialized bytes, so two equal arrays are one key there, while a
 * cache that finds entries by {@code equals} and {@code hashCode} sees two. Found in a review: a
 * get with an equal but different array missed the value, and two puts of equal arrays left two
 * dirty cache entries for one RocksDB key, the older written back last, so the later write was
 * lost. The cache now leaves such a map state to the delegate; the results are RocksDB's.
 */
@Timeout(60)
class MapUserKeyEqualityTest {

    /** A POJO key without equals or hashCode (Flink does not require them of user keys). */
    public static class Id {
        public int id;

        public Id() {}

        public Id(int id) {
            this.id = id;
        }
    }

    @TempDir File tmp;

    @Test
    void byteArrayUserKeys_behaveAsOnRocksDb() throws Exception {
        MapStateDescriptor<byte[], Integer> desc =
                new MapStateDescriptor<>(
                        "bytes", BytePrimitiveArraySerializer.INSTANCE, IntSerializer.INSTANCE);
        check(desc, i -> new byte[] {(byte) i});
    }

    @Test
    void pojoUserKeysWithoutEquals_behaveAsOnRocksDb() throws Exception {
        TypeSerializer<Id> ids =
                TypeInformation.of(Id.class).createSerializer(new SerializerConfigImpl());
        check(new MapStateDescriptor<>("ids", ids, IntSerializer.INSTANCE), Id::new);
    }

    /**
     * A key class whose {@code equals} compares an array component by identity (a {@code Tuple2}
     * with a {@code byte[]}, a record with an array): it declares {@code equals}, so the class
     * check alone let it be cached, and two equal keys were two entries for one RocksDB key. Found
     * in a review.
     */
    @Test
    void tupleKeysWithAnArrayField_behaveAsOnRocksDb() throws Exception {
        TypeSerializer<Tuple2<String, byte[]>> tuples =
                TypeInformation.of(new TypeHint<Tuple2<String, byte[]>>() {})
                        .createSerializer(new SerializerConfigImpl());
        check(
                new MapStateDescriptor<>("tuples", tuples, IntSerializer.INSTANCE),
                i -> Tuple2.of("k", new byte[] {(byte) i}));
    }

    /** A mutable key with value equality (equals and hashCode on its field). */
    public static class Key {
        public int id;

        public Key() {}

        public Key(int id) {
            this.id = id;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && k.id == id;
        }

        @Override
        public int hashCode() {
            return id;
        }
    }

    /**
     * A job that reuses one key object for its map reads (safe on RocksDB and HashMap, which keep
     * nothing of a read's key): the cache kept the probe object as the entry's key, so changing the
     * probe moved the cached entry (and a later write to it) to another user key. Found in a
     * review; the cache now keeps a copy of a read's key.
     */
    @Test
    void aReusedProbeKey_doesNotMoveCachedEntries() throws Exception {
        TypeSerializer<Key> keys =
                TypeInformation.of(Key.class).createSerializer(new SerializerConfigImpl());
        MapStateDescriptor<Key, Integer> desc =
                new MapStateDescriptor<>("probe", keys, IntSerializer.INSTANCE);
        try (KeyedBackendHarness h = new KeyedBackendHarness(tmp)) {
            AbstractKeyedStateBackend<Integer> b = overRocksDb(h, tmp, 1_000_000, List.of());
            InternalMapState<Integer, VoidNamespace, Key, Integer> map = state(b, desc);
            b.setCurrentKey(7);
            Key probe = new Key(1);
            assertThat(map.contains(probe)).isFalse(); // caches "absent" for user key 1
            map.put(new Key(1), 10);
            probe.id = 2; // the job reuses its probe
            assertThat(map.contains(probe)).isFalse();
            assertThat(map.get(new Key(1))).isEqualTo(10);
            assertThat(map.get(new Key(2))).isNull();

            KeyedStateHandle checkpoint =
                    h.snapshot(b, CheckpointOptions.forCheckpointWithDefaultLocation());
            AbstractKeyedStateBackend<Integer> restored =
                    overRocksDb(h, new File(tmp, "r"), 1_000_000, List.of(checkpoint));
            InternalMapState<Integer, VoidNamespace, Key, Integer> rm = state(restored, desc);
            restored.setCurrentKey(7);
            assertThat(rm.get(new Key(1))).isEqualTo(10);
            assertThat(rm.get(new Key(2))).isNull();
        }
    }

    /** A cache of {@code entries} over RocksDB in {@code dir}, restored from {@code handles}. */
    private static AbstractKeyedStateBackend<Integer> overRocksDb(
            KeyedBackendHarness h, File dir, int entries, List<KeyedStateHandle> handles)
            throws Exception {
        return h.create(
                new StateBackendWrapperWithLRUCache(
                        KeyedBackendHarness.delegate("rocksdb", dir), entries),
                handles);
    }

    private <UK> void check(
            MapStateDescriptor<UK, Integer> desc, java.util.function.IntFunction<UK> newKey)
            throws Exception {
        try (KeyedBackendHarness h = new KeyedBackendHarness(tmp)) {
            AbstractKeyedStateBackend<Integer> b = overRocksDb(h, tmp, 2, List.of());
            InternalMapState<Integer, VoidNamespace, UK, Integer> map = state(b, desc);
            b.setCurrentKey(7);
            map.put(newKey.apply(1), 1);
            assertThat(map.get(newKey.apply(1))).as("an equal key finds the value").isEqualTo(1);
            assertThat(map.contains(newKey.apply(1))).isTrue();
            map.put(newKey.apply(1), 2); // the same RocksDB key: replaces the value
            for (int k = 10; k < 20; k++) { // more user keys than the cache holds
                b.setCurrentKey(k);
                map.put(newKey.apply(k), k);
            }
            b.setCurrentKey(7);
            assertThat(map.get(newKey.apply(1))).as("the later write wins").isEqualTo(2);
            List<Integer> values = new ArrayList<>();
            for (Map.Entry<UK, Integer> e : map.entries()) {
                values.add(e.getValue());
            }
            assertThat(values).as("one entry per RocksDB key").containsExactly(2);
            map.remove(newKey.apply(1));
            assertThat(map.isEmpty()).isTrue();
            map.put(newKey.apply(1), 3);

            KeyedStateHandle checkpoint =
                    h.snapshot(b, CheckpointOptions.forCheckpointWithDefaultLocation());
            AbstractKeyedStateBackend<Integer> restored =
                    overRocksDb(h, new File(tmp, "r"), 2, List.of(checkpoint));
            InternalMapState<Integer, VoidNamespace, UK, Integer> rm = state(restored, desc);
            restored.setCurrentKey(7);
            assertThat(rm.get(newKey.apply(1))).isEqualTo(3);
            restored.setCurrentKey(15);
            assertThat(rm.get(newKey.apply(15))).isEqualTo(15);
        }
    }
}
