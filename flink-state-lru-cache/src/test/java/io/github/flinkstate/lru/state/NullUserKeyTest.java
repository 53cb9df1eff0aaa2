package io.github.flinkstate.lru.state;

import static io.github.flinkstate.lru.support.KeyedBackendHarness.state;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.lru.StateBackendWrapperWithLRUCache;
import io.github.flinkstate.lru.support.KeyedBackendHarness;
import java.io.File;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.internal.InternalMapState;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A null map user key, which HashMap and RocksDB both accept (here with a {@code
 * StringSerializer}), works through the cache as it does on the delegate alone: put, get, contains,
 * whole-map reads, remove, clear, eviction and a checkpoint. It used to throw a {@code
 * NullPointerException} from the cache's per-map bookkeeping (a concurrent set, which takes no
 * null) after the entry was already linked. Found in a review.
 */
@Timeout(60)
class NullUserKeyTest {

    private static final MapStateDescriptor<String, String> MAP =
            new MapStateDescriptor<>("m", StringSerializer.INSTANCE, StringSerializer.INSTANCE);

    @TempDir File tmp;

    @ParameterizedTest(name = "delegate {0}, {1} entries")
    @CsvSource({"hashmap,1000000", "rocksdb,1000000", "hashmap,1", "rocksdb,1"})
    void aNullUserKey_behavesAsOnTheDelegate(String delegate, int entries) throws Exception {
        try (KeyedBackendHarness h = new KeyedBackendHarness(tmp)) {
            AbstractKeyedStateBackend<Integer> b =
                    h.create(
                            new StateBackendWrapperWithLRUCache(
                                    KeyedBackendHarness.delegate(delegate, tmp), entries),
                            List.of());
            InternalMapState<Integer, VoidNamespace, String, String> map = state(b, MAP);
            for (int k = 0; k < 3; k++) {
                b.setCurrentKey(k);
                map.put(null, "null-" + k);
                map.put("a", "a-" + k);
            }
            b.setCurrentKey(1);
            assertThat(map.get(null)).isEqualTo("null-1");
            assertThat(map.contains(null)).isTrue();
            assertThat(entries(map)).containsExactlyInAnyOrderEntriesOf(mapOf("null-1", "a-1"));
            map.remove(null);
            assertThat(map.contains(null)).isFalse();
            assertThat(entries(map)).containsExactlyInAnyOrderEntriesOf(Map.of("a", "a-1"));
            b.setCurrentKey(2);
            map.clear();
            assertThat(map.get(null)).isNull();
            assertThat(map.isEmpty()).isTrue();

            KeyedStateHandle handle =
                    h.snapshot(b, CheckpointOptions.forCheckpointWithDefaultLocation());
            AbstractKeyedStateBackend<Integer> restored =
                    h.create(
                            new StateBackendWrapperWithLRUCache(
                                    KeyedBackendHarness.delegate(delegate, tmp), entries),
                            List.of(handle));
            InternalMapState<Integer, VoidNamespace, String, String> after = state(restored, MAP);
            restored.setCurrentKey(0);
            assertThat(entries(after)).containsExactlyInAnyOrderEntriesOf(mapOf("null-0", "a-0"));
            restored.setCurrentKey(1);
            assertThat(entries(after)).containsExactlyInAnyOrderEntriesOf(Map.of("a", "a-1"));
            restored.setCurrentKey(2);
            assertThat(after.isEmpty()).isTrue();
        }
    }

    private static Map<String, String> mapOf(String nullValue, String aValue) {
        Map<String, String> m = new HashMap<>();
        m.put(null, nullValue);
        m.put("a", aValue);
        return m;
    }

    private static Map<String, String> entries(
            InternalMapState<Integer, VoidNamespace, String, String> map) throws Exception {
        Map<String, String> m = new HashMap<>();
        List<String> keys = new ArrayList<>();
        for (Map.Entry<String, String> e : map.entries()) {
            m.put(e.getKey(), e.getValue());
            keys.add(e.getKey());
        }
        assertThat(keys).as("each user key once").doesNotHaveDuplicates();
        return m;
    }
}
