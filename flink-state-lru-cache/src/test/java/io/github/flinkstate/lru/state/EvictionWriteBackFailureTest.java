package io.github.flinkstate.lru.state;

import static io.github.flinkstate.lru.support.KeyedBackendHarness.state;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.lru.StateBackendWrapperWithLRUCache;
import io.github.flinkstate.lru.support.KeyedBackendHarness;
import java.io.File;
import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.internal.InternalMapState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A write that makes the cache evict a dirty entry whose write-back fails (here the delegate's
 * serializer refuses the evicted value) fails, but the written entry is cached already: a map state
 * must still know it as one of its row's user keys, or a job that catches the exception reads a map
 * without it. Found in a review: the row's bookkeeping was updated only after the insert returned,
 * so iteration, {@code isEmpty} and {@code keys} missed the new entry.
 */
@Timeout(60)
class EvictionWriteBackFailureTest {

    @TempDir File tmp;

    @Test
    void aWriteWhoseEvictionFails_isStillSeenByTheMapsIteration() throws Exception {
        MapStateDescriptor<String, Integer> desc =
                new MapStateDescriptor<>(
                        "m", StringSerializer.INSTANCE, RefusingNegativeSerializer.INSTANCE);
        try (KeyedBackendHarness h = new KeyedBackendHarness(tmp)) {
            AbstractKeyedStateBackend<Integer> b =
                    h.create(
                            new StateBackendWrapperWithLRUCache(
                                    KeyedBackendHarness.delegate("rocksdb", tmp), 1),
                            List.of());
            InternalMapState<Integer, VoidNamespace, String, Integer> map = state(b, desc);
            b.setCurrentKey(7);
            map.put("a", -1); // cached and dirty: its write-back will fail
            assertThatThrownBy(() -> map.put("b", 2))
                    .as("the write evicts 'a', whose write-back fails")
                    .hasStackTraceContaining("refused value -1");

            Map<String, Integer> seen = new HashMap<>();
            for (Map.Entry<String, Integer> e : map.entries()) {
                seen.put(e.getKey(), e.getValue());
            }
            assertThat(seen).containsOnly(Map.entry("a", -1), Map.entry("b", 2));
            assertThat(map.keys()).containsExactlyInAnyOrder("a", "b");
            assertThat(map.get("b")).isEqualTo(2);
            map.remove("a");
            map.remove("b");
            assertThat(map.isEmpty()).isTrue();
        }
    }

    /** An int serializer that refuses to serialize negative values (a failing user serializer). */
    public static final class RefusingNegativeSerializer extends TypeSerializerSingleton<Integer> {
        public static final RefusingNegativeSerializer INSTANCE = new RefusingNegativeSerializer();

        @Override
        public boolean isImmutableType() {
            return true;
        }

        @Override
        public Integer createInstance() {
            return 0;
        }

        @Override
        public Integer copy(Integer from) {
            return from;
        }

        @Override
        public Integer copy(Integer from, Integer reuse) {
            return from;
        }

        @Override
        public int getLength() {
            return 4;
        }

        @Override
        public void serialize(Integer record, DataOutputView target) throws IOException {
            if (record < 0) {
                throw new IOException("refused value " + record);
            }
            target.writeInt(record);
        }

        @Override
        public Integer deserialize(DataInputView source) throws IOException {
            return source.readInt();
        }

        @Override
        public Integer deserialize(Integer reuse, DataInputView source) throws IOException {
            return source.readInt();
        }

        @Override
        public void copy(DataInputView source, DataOutputView target) throws IOException {
            target.writeInt(source.readInt());
        }

        @Override
        public TypeSerializerSnapshot<Integer> snapshotConfiguration() {
            return new Snapshot();
        }

        /** Restores the singleton. */
        public static final class Snapshot extends SimpleTypeSerializerSnapshot<Integer> {
            public Snapshot() {
                super(() -> INSTANCE);
            }
        }
    }
}
