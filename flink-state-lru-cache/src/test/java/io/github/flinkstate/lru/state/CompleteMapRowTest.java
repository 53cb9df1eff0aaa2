package io.github.flinkstate.lru.state;

import static io.github.flinkstate.lru.support.KeyedBackendHarness.state;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.lru.backend.LruCacheKeyedStateBackend;
import io.github.flinkstate.lru.support.KeyedBackendHarness;
import java.io.File;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.internal.InternalMapState;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Whole-map reads of a map whose user keys are all cached (a complete row) skip the delegate, and
 * stop doing so as soon as the delegate may hold a user key the cache lacks. To see whether the
 * delegate was read, the tests put an entry into the delegate's own state behind the cache's back:
 * a read from the cache alone does not show it.
 */
@Timeout(120)
class CompleteMapRowTest {

    private static final MapStateDescriptor<Integer, Long> MAP =
            new MapStateDescriptor<>("map", IntSerializer.INSTANCE, LongSerializer.INSTANCE);

    @TempDir File tmp;

    @ParameterizedTest(name = "delegate {0}")
    @ValueSource(strings = {"hashmap", "rocksdb"})
    void aMapWhoseUserKeysAreAllCached_isReadWithoutTheDelegate_untilAnEntryLeavesTheCache(
            String delegate) throws Exception {
        try (KeyedBackendHarness h = new KeyedBackendHarness(tmp)) {
            LruCacheKeyedStateBackend<Integer> b = h.cached(delegate, 16, null);
            InternalMapState<Integer, VoidNamespace, Integer, Long> map = state(b, MAP);
            b.setCurrentKey(1);
            for (int uk = 0; uk < 3; uk++) {
                map.put(uk, 10L + uk);
            }
            // the first iteration reads the delegate (empty for this key) and learns that the
            // cache holds the whole map
            assertThat(entries(map)).isEqualTo(Map.of(0, 10L, 1, 11L, 2, 12L));

            putBehindTheCache(b, map, 1, 99, 99L);
            b.setCurrentKey(1);
            assertThat(entries(map)).as("read from the cache alone").hasSize(3);
            assertThat(map.isEmpty()).isFalse();

            // other keys' entries push one of key 1's out of the cache (written back), the other
            // two stay: the delegate is read again, and shows everything it holds
            for (int key = 100; key < 114; key++) {
                b.setCurrentKey(key);
                map.put(0, (long) key);
            }
            assertThat(b.getCache().evictions()).isEqualTo(1);
            CachedMapState<?, ?, ?, ?> owner = (CachedMapState<?, ?, ?, ?>) map;
            assertThat(b.getCache().peek(owner, 1, VoidNamespace.INSTANCE, 0)).isNull();
            assertThat(b.getCache().peek(owner, 1, VoidNamespace.INSTANCE, 1)).isNotNull();
            b.setCurrentKey(1);
            assertThat(entries(map)).isEqualTo(Map.of(0, 10L, 1, 11L, 2, 12L, 99, 99L));
            b.getCache().checkInvariants();
        }
    }

    @ParameterizedTest(name = "delegate {0}")
    @ValueSource(strings = {"hashmap", "rocksdb"})
    void aMapWithADelegateEntryTheCacheLacks_isNotTakenAsComplete(String delegate)
            throws Exception {
        try (KeyedBackendHarness h = new KeyedBackendHarness(tmp)) {
            LruCacheKeyedStateBackend<Integer> b = h.cached(delegate, 16, null);
            InternalMapState<Integer, VoidNamespace, Integer, Long> map = state(b, MAP);
            b.setCurrentKey(1);
            map.put(0, 10L);
            putBehindTheCache(b, map, 1, 1, 11L);
            b.setCurrentKey(1);
            assertThat(entries(map)).isEqualTo(Map.of(0, 10L, 1, 11L));
            putBehindTheCache(b, map, 1, 2, 12L);
            b.setCurrentKey(1);
            assertThat(entries(map)).isEqualTo(Map.of(0, 10L, 1, 11L, 2, 12L));
        }
    }

    @ParameterizedTest(name = "delegate {0}")
    @ValueSource(strings = {"hashmap", "rocksdb"})
    void aPutThatGoesPastTheCache_endsTheCompleteness(String delegate) throws Exception {
        try (KeyedBackendHarness h = new KeyedBackendHarness(tmp)) {
            int cacheSize = 64;
            LruCacheKeyedStateBackend<Integer> b = h.cached(delegate, cacheSize, null);
            InternalMapState<Integer, VoidNamespace, Integer, Long> map = state(b, MAP);
            b.setCurrentKey(1);
            map.put(0, 10L);
            // reads that hardly hit a full cache: the cache starts filtering misses; key 1's entry
            // is read every 20 misses, so it stays cached
            for (int i = 0; i < 3_000 && !filtering(b); i++) {
                b.setCurrentKey(1_000 + i);
                map.get(0);
                if (i % 20 == 0) {
                    b.setCurrentKey(1);
                    map.get(0);
                }
            }
            assertThat(filtering(b)).as("the cache filters misses").isTrue();
            b.setCurrentKey(1);
            assertThat(
                            b.getCache()
                                    .peek(
                                            (CachedMapState<?, ?, ?, ?>) map,
                                            1,
                                            VoidNamespace.INSTANCE,
                                            0))
                    .as("key 1's entry stayed cached")
                    .isNotNull();
            assertThat(entries(map)).isEqualTo(Map.of(0, 10L)); // complete from here

            // a read of a new user key that the cache refuses, then its put: to the delegate
            Map<Integer, Long> expected = new HashMap<>(Map.of(0, 10L));
            int uk = 1;
            long refusedBefore = b.getCache().readsRefused();
            while (b.getCache().readsRefused() == refusedBefore) {
                assertThat(map.get(uk)).isNull();
                map.put(uk, 100L + uk);
                expected.put(uk, 100L + uk);
                uk++;
            }
            assertThat(
                            b.getCache()
                                    .peek(
                                            (CachedMapState<?, ?, ?, ?>) map,
                                            1,
                                            VoidNamespace.INSTANCE,
                                            uk - 1))
                    .as("the last put went past the cache")
                    .isNull();
            assertThat(entries(map)).isEqualTo(expected);
        }
    }

    @ParameterizedTest(name = "delegate {0}")
    @ValueSource(strings = {"hashmap", "rocksdb"})
    void changesMadeWhileReadingFromTheCacheAlone_reachTheDelegate_andClearEndsTheRow(
            String delegate) throws Exception {
        try (KeyedBackendHarness h = new KeyedBackendHarness(tmp)) {
            LruCacheKeyedStateBackend<Integer> b = h.cached(delegate, 16, null);
            InternalMapState<Integer, VoidNamespace, Integer, Long> map = state(b, MAP);
            b.setCurrentKey(1);
            for (int uk = 0; uk < 3; uk++) {
                map.put(uk, 10L + uk);
            }
            assertThat(entries(map)).hasSize(3); // complete from here
            putBehindTheCache(b, map, 1, 99, 99L);
            b.setCurrentKey(1);
            Iterator<Map.Entry<Integer, Long>> it = map.iterator();
            int seen = 0;
            while (it.hasNext()) {
                Map.Entry<Integer, Long> e = it.next();
                seen++;
                if (e.getKey() == 0) {
                    it.remove();
                } else if (e.getKey() == 1) {
                    e.setValue(111L);
                }
            }
            assertThat(seen).as("read from the cache alone").isEqualTo(3);
            assertThat(entries(map)).isEqualTo(Map.of(1, 111L, 2, 12L));

            // other keys push all of key 1's entries out: the changes were written back
            for (int key = 100; key < 120; key++) {
                b.setCurrentKey(key);
                map.put(0, (long) key);
            }
            CachedMapState<?, ?, ?, ?> owner = (CachedMapState<?, ?, ?, ?>) map;
            for (int uk = 0; uk < 3; uk++) {
                assertThat(b.getCache().peek(owner, 1, VoidNamespace.INSTANCE, uk)).isNull();
            }
            b.setCurrentKey(1);
            assertThat(entries(map)).isEqualTo(Map.of(1, 111L, 2, 12L, 99, 99L));

            // clearing a complete map ends it: the next iteration reads the delegate again
            map.clear();
            map.put(5, 5L);
            assertThat(entries(map)).isEqualTo(Map.of(5, 5L)); // complete from here
            map.clear();
            map.put(6, 6L);
            putBehindTheCache(b, map, 1, 7, 7L);
            b.setCurrentKey(1);
            assertThat(entries(map)).isEqualTo(Map.of(6, 6L, 7, 7L));
            b.getCache().checkInvariants();
        }
    }

    private static boolean filtering(LruCacheKeyedStateBackend<Integer> b) {
        return b.getCache().readsRefused() > 0;
    }

    private static Map<Integer, Long> entries(
            InternalMapState<Integer, VoidNamespace, Integer, Long> map) throws Exception {
        Map<Integer, Long> seen = new HashMap<>();
        for (Map.Entry<Integer, Long> e : map.entries()) {
            assertThat(seen.put(e.getKey(), e.getValue())).as("user key seen twice").isNull();
        }
        return seen;
    }

    /** Writes into the delegate's state directly, as no cache user can. */
    @SuppressWarnings("unchecked")
    private static void putBehindTheCache(
            LruCacheKeyedStateBackend<Integer> b,
            InternalMapState<Integer, VoidNamespace, Integer, Long> map,
            int key,
            int userKey,
            long value)
            throws Exception {
        InternalMapState<Integer, VoidNamespace, Integer, Long> d =
                ((CachedMapState<Integer, VoidNamespace, Integer, Long>) map).delegate();
        b.getDelegate().setCurrentKey(key);
        d.setCurrentNamespace(VoidNamespace.INSTANCE);
        d.put(userKey, value);
        b.setCurrentKey(key + 1); // the cache's own idea of the delegate's key is now stale
    }
}
