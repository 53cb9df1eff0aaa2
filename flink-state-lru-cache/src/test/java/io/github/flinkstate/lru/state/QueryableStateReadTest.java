package io.github.flinkstate.lru.state;

import static io.github.flinkstate.lru.support.KeyedBackendHarness.state;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.lru.StateBackendWrapperWithLRUCache;
import io.github.flinkstate.lru.backend.LruCacheKeyedStateBackend;
import io.github.flinkstate.lru.cow.CacheEntry;
import io.github.flinkstate.lru.support.KeyedBackendHarness;
import java.io.File;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.MapSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.queryablestate.client.state.serialization.KvStateSerializer;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.runtime.state.internal.InternalKvState;
import org.apache.flink.runtime.state.internal.InternalMapState;
import org.apache.flink.runtime.state.internal.InternalValueState;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code getSerializedValue} (queryable state) is called on another thread than the task's: it must
 * answer from the cache overlaid on the delegate without writing anything back and without moving
 * the delegate's current key (issue 12, finding 3).
 */
@Timeout(60)
class QueryableStateReadTest {

    private static final ValueStateDescriptor<Long> VALUE =
            new ValueStateDescriptor<>("value", LongSerializer.INSTANCE);
    private static final MapStateDescriptor<Integer, String> MAP =
            new MapStateDescriptor<>("map", IntSerializer.INSTANCE, StringSerializer.INSTANCE);

    @TempDir File tmp;

    @ParameterizedTest(name = "delegate {0}")
    @ValueSource(strings = {"hashmap", "rocksdb"})
    void readsFromAnotherThreadWithoutTouchingTheTasksState(String delegate) throws Exception {
        try (KeyedBackendHarness h = new KeyedBackendHarness(tmp)) {
            LruCacheKeyedStateBackend<Integer> b =
                    (LruCacheKeyedStateBackend<Integer>)
                            h.create(
                                    new StateBackendWrapperWithLRUCache(
                                            delegate(delegate), 1_000_000),
                                    List.of());
            InternalValueState<Integer, VoidNamespace, Long> value = state(b, VALUE);
            InternalMapState<Integer, VoidNamespace, Integer, String> map = state(b, MAP);
            b.setCurrentKey(1);
            map.put(1, "old1");
            map.put(2, "old2");
            b.numKeyValueStateEntries(); // key 1's map now also in the delegate
            value.update(5L);
            map.put(1, "new1");
            map.remove(2);
            map.put(3, "three");

            b.setCurrentKey(2);
            assertThat(value.value()).isNull(); // a miss: the delegate is now on key 2
            int dirty = b.getCache().liveEntries(CacheEntry::isDirty).size();

            byte[] key1 =
                    KvStateSerializer.serializeKeyAndNamespace(
                            1,
                            IntSerializer.INSTANCE,
                            VoidNamespace.INSTANCE,
                            VoidNamespaceSerializer.INSTANCE);
            byte[] serializedValue = onOtherThread(value, key1, LongSerializer.INSTANCE);
            byte[] serializedMap =
                    onOtherThread(
                            map,
                            key1,
                            new MapSerializer<>(IntSerializer.INSTANCE, StringSerializer.INSTANCE));

            assertThat(KvStateSerializer.deserializeValue(serializedValue, LongSerializer.INSTANCE))
                    .isEqualTo(5L);
            Map<Integer, String> expected = new HashMap<>();
            expected.put(1, "new1");
            expected.put(3, "three");
            assertThat(
                            KvStateSerializer.deserializeMap(
                                    serializedMap,
                                    IntSerializer.INSTANCE,
                                    StringSerializer.INSTANCE))
                    .isEqualTo(expected);

            assertThat(b.getDelegate().getCurrentKey()).as("delegate's key").isEqualTo(2);
            assertThat(b.getCache().liveEntries(CacheEntry::isDirty))
                    .as("nothing written back")
                    .hasSize(dirty);
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static byte[] onOtherThread(
            InternalKvState<Integer, VoidNamespace, ?> state,
            byte[] keyAndNamespace,
            org.apache.flink.api.common.typeutils.TypeSerializer<?> valueSerializer)
            throws Exception {
        return CompletableFuture.supplyAsync(
                        () -> {
                            try {
                                return ((InternalKvState) state)
                                        .getSerializedValue(
                                                keyAndNamespace,
                                                IntSerializer.INSTANCE,
                                                VoidNamespaceSerializer.INSTANCE,
                                                valueSerializer);
                            } catch (Exception e) {
                                throw new RuntimeException(e);
                            }
                        })
                .get(30, TimeUnit.SECONDS);
    }

    private StateBackend delegate(String kind) {
        if (kind.equals("hashmap")) {
            return new HashMapStateBackend();
        }
        EmbeddedRocksDBStateBackend rocks = new EmbeddedRocksDBStateBackend(true);
        rocks.setDbStoragePath(new File(tmp, "rocks").getAbsolutePath());
        return rocks;
    }
}
