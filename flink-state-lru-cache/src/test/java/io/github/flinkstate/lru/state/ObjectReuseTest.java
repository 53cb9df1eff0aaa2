package io.github.flinkstate.lru.state;

import static io.github.flinkstate.lru.support.KeyedBackendHarness.state;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.lru.StateBackendWrapperWithLRUCache;
import io.github.flinkstate.lru.support.KeyedBackendHarness;
import java.io.File;
import java.util.List;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.runtime.state.internal.InternalListState;
import org.apache.flink.runtime.state.internal.InternalMapState;
import org.apache.flink.runtime.state.internal.InternalReducingState;
import org.apache.flink.runtime.state.internal.InternalValueState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A job that reuses one mutable object for the values it writes, safe on RocksDB, is safe with the
 * cache when {@code state.backend.cache.copy-values-on-write} is on (issue 12, finding 6); without
 * it values are stored by reference, as with the HashMap backend (documented).
 */
@Timeout(60)
class ObjectReuseTest {

    /** A mutable POJO (PojoSerializer, not immutable). */
    public static class Box {
        public long n;

        public Box() {}
    }

    static final TypeSerializer<Box> BOX =
            TypeInformation.of(Box.class).createSerializer(new SerializerConfigImpl());
    private static final ValueStateDescriptor<Box> VALUE = new ValueStateDescriptor<>("v", BOX);
    private static final ListStateDescriptor<Box> LIST = new ListStateDescriptor<>("l", BOX);
    private static final MapStateDescriptor<Integer, Box> MAP =
            new MapStateDescriptor<>("m", IntSerializer.INSTANCE, BOX);
    private static final ReducingStateDescriptor<Box> REDUCING =
            new ReducingStateDescriptor<>("r", (a, b) -> b, BOX);

    @TempDir File tmp;

    /**
     * With a cache of one entry, almost every write is one the full cache refuses and sends to the
     * delegate: a refused list {@code addAll} used to hand a heap delegate the job's own objects.
     */
    @ParameterizedTest(name = "delegate {0}, {1} entries")
    @CsvSource({"hashmap,1000000", "rocksdb,1000000", "hashmap,1", "rocksdb,1"})
    void reusingOneObjectAcrossKeysIsSafeWithCopyValuesOnWrite(String delegate, int entries)
            throws Exception {
        try (KeyedBackendHarness h = new KeyedBackendHarness(tmp)) {
            AbstractKeyedStateBackend<Integer> b =
                    h.create(
                            new StateBackendWrapperWithLRUCache(delegate(delegate), entries, true),
                            List.of());
            InternalValueState<Integer, VoidNamespace, Box> value = state(b, VALUE);
            InternalListState<Integer, VoidNamespace, Box> list = state(b, LIST);
            InternalMapState<Integer, VoidNamespace, Integer, Box> map = state(b, MAP);
            InternalReducingState<Integer, VoidNamespace, Box> reducing = state(b, REDUCING);
            Box reused = new Box();
            for (int k = 0; k < 10; k++) {
                b.setCurrentKey(k);
                reused.n = k;
                value.update(reused);
                // addAll first: the first write of a list a full cache refuses goes to the
                // delegate (a second one soon after is admitted)
                list.addAll(List.of(reused));
                list.add(reused);
                map.put(1, reused);
                reducing.add(reused);
            }
            reused.n = -1;
            for (int k = 0; k < 10; k++) {
                b.setCurrentKey(k);
                assertThat(value.value().n).isEqualTo(k);
                assertThat(list.get()).extracting(x -> x.n).containsExactly((long) k, (long) k);
                assertThat(map.get(1).n).isEqualTo(k);
                assertThat(reducing.get().n).isEqualTo(k);
            }
        }
    }

    @Test
    void withoutTheOptionValuesAreStoredByReferenceAsWithHashMap() throws Exception {
        try (KeyedBackendHarness h = new KeyedBackendHarness(tmp)) {
            AbstractKeyedStateBackend<Integer> b =
                    h.create(
                            new StateBackendWrapperWithLRUCache(delegate("rocksdb"), 10),
                            List.of());
            InternalValueState<Integer, VoidNamespace, Box> value = state(b, VALUE);
            Box reused = new Box();
            b.setCurrentKey(1);
            reused.n = 1;
            value.update(reused);
            reused.n = 2;
            assertThat(value.value()).isSameAs(reused);
        }
    }

    @Test
    void optionIsReadFromTheConfiguration() {
        Configuration config = new Configuration();
        config.setString("state.backend.cache.max-entries-num", "100");
        config.setString("state.backend.cache.copy-values-on-write", "true");
        assertThat(
                        StateBackendWrapperWithLRUCache.fromConfig(
                                        config, getClass().getClassLoader())
                                .isCopyValuesOnWrite())
                .isTrue();
        assertThat(
                        new StateBackendWrapperWithLRUCache(new HashMapStateBackend(), 10)
                                .configure(config, getClass().getClassLoader())
                                .isCopyValuesOnWrite())
                .isTrue();
    }

    private StateBackend delegate(String kind) {
        return KeyedBackendHarness.delegate(kind, tmp);
    }
}
