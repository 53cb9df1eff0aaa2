package io.github.flinkstate.lru.state;

import static io.github.flinkstate.lru.support.KeyedBackendHarness.state;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import io.github.flinkstate.lru.StateBackendWrapperWithLRUCache;
import io.github.flinkstate.lru.backend.LruCacheKeyedStateBackend;
import io.github.flinkstate.lru.cow.CacheEntry;
import io.github.flinkstate.lru.support.KeyedBackendHarness;
import java.io.File;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.internal.InternalMapState;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The iterables returned by a cached map state's whole-map reads belong to the key and namespace
 * that were current when they were obtained, and every iteration shows the map as it is then (issue
 * 12, finding 4); iterating writes nothing back to the delegate.
 */
@Timeout(60)
class MapIterationBindingTest {

    private static final MapStateDescriptor<Integer, String> MAP =
            new MapStateDescriptor<>("map", IntSerializer.INSTANCE, StringSerializer.INSTANCE);

    @TempDir File tmp;

    @ParameterizedTest(name = "delegate {0}, cache {1}")
    @CsvSource({"hashmap, 1000000", "hashmap, 1", "rocksdb, 1000000", "rocksdb, 1"})
    void iterableKeptAndIteratedLaterReadsItsOwnKeyAndSeesLaterWrites(String delegate, int cache)
            throws Exception {
        try (KeyedBackendHarness h = new KeyedBackendHarness(tmp)) {
            AbstractKeyedStateBackend<Integer> b =
                    h.create(
                            new StateBackendWrapperWithLRUCache(delegate(delegate), cache),
                            List.of());
            InternalMapState<Integer, VoidNamespace, Integer, String> map = state(b, MAP);
            b.setCurrentKey(1);
            map.put(1, "a1");
            map.put(2, "a2");
            Iterable<Map.Entry<Integer, String>> entries = map.entries();
            Iterable<Integer> keys = map.keys();
            Iterable<String> values = map.values();

            b.setCurrentKey(2);
            map.put(1, "b1");
            assertThat(toMap(entries)).containsOnly(entry(1, "a1"), entry(2, "a2"));
            assertThat(keys).containsExactlyInAnyOrder(1, 2);
            assertThat(values).containsExactlyInAnyOrder("a1", "a2");

            // a write to key 1 after the iterable was obtained: the next iteration sees it
            b.setCurrentKey(1);
            map.put(3, "a3");
            map.remove(1);
            b.setCurrentKey(2);
            assertThat(toMap(entries)).containsOnly(entry(2, "a2"), entry(3, "a3"));
            assertThat(toMap(entries)).containsOnly(entry(2, "a2"), entry(3, "a3"));
            assertThat(keys).containsExactlyInAnyOrder(2, 3);

            // removing through a kept iterable removes from key 1, not from the current key 2
            for (Iterator<Integer> it = keys.iterator(); it.hasNext(); ) {
                if (it.next() == 2) {
                    it.remove();
                }
            }
            assertThat(map.get(1)).isEqualTo("b1");
            b.setCurrentKey(1);
            assertThat(toMap(map.entries())).containsOnly(entry(3, "a3"));
            b.setCurrentKey(2);
            assertThat(toMap(map.entries())).containsOnly(entry(1, "b1"));
        }
    }

    @ParameterizedTest(name = "delegate {0}")
    @CsvSource({"hashmap", "rocksdb"})
    void iteratingMergesCachedEntriesWithoutWritingThemBack(String delegate) throws Exception {
        try (KeyedBackendHarness h = new KeyedBackendHarness(tmp)) {
            LruCacheKeyedStateBackend<Integer> b =
                    (LruCacheKeyedStateBackend<Integer>)
                            h.create(
                                    new StateBackendWrapperWithLRUCache(
                                            delegate(delegate), 1_000_000),
                                    List.of());
            InternalMapState<Integer, VoidNamespace, Integer, String> map = state(b, MAP);
            b.setCurrentKey(1);
            for (int uk = 0; uk < 10; uk++) {
                map.put(uk, "v" + uk);
            }
            b.numKeyValueStateEntries(); // all ten now in the delegate, cached clean
            map.put(3, "changed");
            map.remove(4);
            map.put(10, "new");
            map.put(11, null);
            int dirty = dirtyEntries(b);

            Map<Integer, String> expected = new HashMap<>();
            for (int uk = 0; uk < 10; uk++) {
                expected.put(uk, "v" + uk);
            }
            expected.put(3, "changed");
            expected.remove(4);
            expected.put(10, "new");
            expected.put(11, null);
            assertThat(toMap(map.entries())).isEqualTo(expected);
            assertThat(map.isEmpty()).isFalse();
            assertThat(dirtyEntries(b)).as("nothing written back by a read").isEqualTo(dirty);
        }
    }

    private static int dirtyEntries(LruCacheKeyedStateBackend<Integer> b) {
        return b.getCache().liveEntries(CacheEntry::isDirty).size();
    }

    private static Map<Integer, String> toMap(Iterable<Map.Entry<Integer, String>> entries) {
        Map<Integer, String> m = new HashMap<>();
        List<Integer> seen = new ArrayList<>();
        for (Map.Entry<Integer, String> e : entries) {
            seen.add(e.getKey());
            m.put(e.getKey(), e.getValue());
        }
        assertThat(seen).as("each user key once").doesNotHaveDuplicates();
        return m;
    }

    private StateBackend delegate(String kind) {
        return KeyedBackendHarness.delegate(kind, tmp);
    }
}
