package io.github.flinkstate.lru.state;

import static io.github.flinkstate.lru.support.KeyedBackendHarness.state;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.lru.StateBackendWrapperWithLRUCache;
import io.github.flinkstate.lru.backend.LruCacheKeyedStateBackend;
import io.github.flinkstate.lru.support.KeyedBackendHarness;
import java.io.File;
import java.util.List;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.array.LongPrimitiveArraySerializer;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.runtime.state.internal.InternalMapState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Scan resistance for map reads: a counter per user key, read with {@code get} and written with
 * {@code put}, cycling through four times more entries than the cache holds. Plain LRU never hits
 * there and pays an insert and an eviction per read on top of the delegate's own read; a full cache
 * now filters map reads like value reads. Every count must stay exact, through the cache, the
 * delegate and a checkpoint.
 */
@Timeout(120)
class MapScanResistanceTest {

    private static final int CACHE = 250;
    private static final int KEYS = 100;
    private static final int USER_KEYS = 10; // 1,000 map entries
    private static final int ROUNDS = 20;

    private static final MapStateDescriptor<Integer, long[]> ARRAYS =
            new MapStateDescriptor<>(
                    "arrays", IntSerializer.INSTANCE, LongPrimitiveArraySerializer.INSTANCE);

    private static final MapStateDescriptor<Integer, Long> COUNTS =
            new MapStateDescriptor<>("counts", IntSerializer.INSTANCE, LongSerializer.INSTANCE);

    @TempDir File tmp;

    @ParameterizedTest(name = "delegate {0}")
    @ValueSource(strings = {"hashmap", "rocksdb"})
    void aCycleLongerThanTheCache_isCountedExactly_andFiltered(String delegate) throws Exception {
        try (KeyedBackendHarness h = new KeyedBackendHarness(tmp)) {
            LruCacheKeyedStateBackend<Integer> b = h.cached(delegate, CACHE, null);
            InternalMapState<Integer, VoidNamespace, Integer, Long> counts = state(b, COUNTS);
            for (int round = 0; round < ROUNDS; round++) {
                for (int key = 0; key < KEYS; key++) {
                    b.setCurrentKey(key);
                    for (int uk = 0; uk < USER_KEYS; uk++) {
                        Long c = counts.get(uk);
                        counts.put(uk, c == null ? 1 : c + 1);
                    }
                }
            }
            assertThat(b.getCache().readsRefused())
                    .as("map reads that missed a full cache were filtered")
                    .isPositive();
            assertThat(b.getCache().evictions())
                    .as("the puts after refused reads went to the delegate, evicting nothing")
                    .isLessThan(ROUNDS * KEYS * USER_KEYS / 2);
            assertCounts(b);
            b.getCache().checkInvariants();

            KeyedStateHandle handle =
                    h.snapshot(b, CheckpointOptions.forCheckpointWithDefaultLocation());
            for (int size : new int[] {0, CACHE, 1_000_000}) {
                assertCounts(h.cached(delegate, size, handle));
            }
        }
    }

    /**
     * With {@code copy-values-on-write}, a put that goes to a heap delegate after a refused read
     * must hand it a copy too: the job may change its object after {@code put}, which that option
     * promises is safe (found in a review).
     */
    @Test
    void aPutAfterARefusedRead_copiesTheValue_whenAskedTo() throws Exception {
        try (KeyedBackendHarness h = new KeyedBackendHarness(tmp)) {
            LruCacheKeyedStateBackend<Integer> b =
                    (LruCacheKeyedStateBackend<Integer>)
                            h.create(
                                    new StateBackendWrapperWithLRUCache(
                                            new HashMapStateBackend(), CACHE, true),
                                    List.of());
            InternalMapState<Integer, VoidNamespace, Integer, long[]> arrays = state(b, ARRAYS);
            long[] cycled = new long[] {1};
            for (int round = 0; round < 3; round++) { // a cycle the full cache filters
                for (int key = 0; key < KEYS; key++) {
                    b.setCurrentKey(key);
                    for (int uk = 0; uk < USER_KEYS; uk++) {
                        arrays.get(uk);
                        arrays.put(uk, cycled);
                    }
                }
            }
            // a read of a new entry that the filter refuses (at most 7 in 8 are), then its put
            int key = KEYS;
            long refused = b.getCache().readsRefused();
            do {
                b.setCurrentKey(++key);
                assertThat(arrays.get(0)).isNull();
            } while (b.getCache().readsRefused() == refused && key < KEYS + 16);
            assertThat(b.getCache().readsRefused()).as("a read was refused").isGreaterThan(refused);
            long[] mine = new long[] {7};
            arrays.put(0, mine);
            mine[0] = 999; // the job reuses its object
            int written = key;
            assertThat(b.getCache().liveEntries(e -> e.key().equals(written)))
                    .as("not cached")
                    .isEmpty();
            assertThat(arrays.get(0)).containsExactly(7);
        }
    }

    private static void assertCounts(LruCacheKeyedStateBackend<Integer> b) throws Exception {
        InternalMapState<Integer, VoidNamespace, Integer, Long> counts = state(b, COUNTS);
        for (int key = 0; key < KEYS; key++) {
            b.setCurrentKey(key);
            for (int uk = 0; uk < USER_KEYS; uk++) {
                assertThat(counts.contains(uk)).as("key %d, user key %d", key, uk).isTrue();
                assertThat(counts.get(uk)).as("key %d, user key %d", key, uk).isEqualTo(ROUNDS);
            }
            assertThat(counts.contains(USER_KEYS)).isFalse();
        }
    }
}
