package io.github.flinkstate.lru.state;

import static io.github.flinkstate.lru.support.KeyedBackendHarness.state;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.lru.StateBackendWrapperWithLRUCache;
import io.github.flinkstate.lru.backend.LruCacheKeyedStateBackend;
import io.github.flinkstate.lru.cow.CacheOwner;
import io.github.flinkstate.lru.cow.CowLruMap;
import io.github.flinkstate.lru.support.KeyedBackendHarness;
import java.io.File;
import java.util.List;
import java.util.concurrent.RunnableFuture;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.state.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.internal.InternalAggregatingState;
import org.apache.flink.runtime.state.internal.InternalReducingState;
import org.apache.flink.runtime.state.internal.InternalValueState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The FLIP-325 "0% hits" access pattern (1,000 keys in turn through a 250-entry cache, each read
 * and updated): plain LRU never hits and pays an insert, an eviction and a write-back per record.
 * With scan resistance the full cache stops admitting most misses (they are read from and written
 * to the delegate directly) and keeps a sample long enough to hit on it. Every count must stay
 * exact, through the cache, the delegate and a checkpoint, for value, reducing and aggregating
 * state.
 */
@Timeout(120)
class ScanResistanceTest {

    private static final int CACHE = 250;
    private static final int ROUNDS = 20; // each key is counted ROUNDS times

    private static final ValueStateDescriptor<Long> COUNT =
            new ValueStateDescriptor<>("count", LongSerializer.INSTANCE);
    private static final ReducingStateDescriptor<Long> SUM =
            new ReducingStateDescriptor<>("sum", Long::sum, LongSerializer.INSTANCE);
    private static final AggregatingStateDescriptor<Long, Long, Long> AGG =
            new AggregatingStateDescriptor<>("agg", new Sum(), LongSerializer.INSTANCE);

    @TempDir File tmp;

    /**
     * The LRU cache with {@code entries} entries over a {@code kind} delegate kept under {@code
     * dir}.
     */
    private static StateBackendWrapperWithLRUCache cacheOver(String kind, File dir, int entries) {
        return new StateBackendWrapperWithLRUCache(
                KeyedBackendHarness.delegate(kind, dir), entries);
    }

    /** The FLIP-325 job's key of record {@code x}: 500 keys twice, then the other 500 twice. */
    private static int key(int x) {
        return (x % 500) + 500 * ((x / 1000) % 2);
    }

    @ParameterizedTest(name = "delegate {0}")
    @ValueSource(strings = {"hashmap", "rocksdb"})
    void aCycleLongerThanTheCache_isCountedExactly_andPartlyHits(String delegate) throws Exception {
        try (KeyedBackendHarness h = new KeyedBackendHarness(tmp)) {
            AbstractKeyedStateBackend<Integer> b =
                    h.create(cacheOver(delegate, tmp, CACHE), List.of());
            InternalValueState<Integer, VoidNamespace, Long> count = state(b, COUNT);
            InternalReducingState<Integer, VoidNamespace, Long> sum = state(b, SUM);
            InternalAggregatingState<Integer, VoidNamespace, Long, Long, Long> agg = state(b, AGG);
            for (int x = 0; x < 1000 * ROUNDS; x++) {
                b.setCurrentKey(key(x));
                Long c = count.value();
                count.update(c == null ? 1 : c + 1);
                sum.add(1L);
                agg.add(1L);
            }
            LruCacheKeyedStateBackend<?> cached = (LruCacheKeyedStateBackend<?>) b;
            assertThat(cached.cache().readsRefused()).as("misses served uncached").isPositive();
            long hitsBefore = cached.statistics().hits();
            assertThat(hitsBefore).as("hits on the admitted sample").isPositive();
            assertThat(cached.cache().size()).isLessThanOrEqualTo(CACHE);
            cached.cache().checkInvariants();

            assertCounts(b, ROUNDS);
            KeyedStateHandle checkpoint =
                    h.snapshot(b, CheckpointOptions.forCheckpointWithDefaultLocation());
            AbstractKeyedStateBackend<Integer> restored =
                    h.create(cacheOver(delegate, new File(tmp, "r"), 1), List.of(checkpoint));
            assertCounts(restored, ROUNDS);
        }
    }

    @ParameterizedTest(name = "delegate {0}")
    @ValueSource(strings = {"hashmap", "rocksdb"})
    void turnedOff_theCacheIsPlainLru(String delegate) throws Exception {
        try (KeyedBackendHarness h = new KeyedBackendHarness(tmp)) {
            AbstractKeyedStateBackend<Integer> b =
                    h.create(cacheOver(delegate, tmp, CACHE).setScanResistant(false), List.of());
            InternalValueState<Integer, VoidNamespace, Long> count = state(b, COUNT);
            for (int x = 0; x < 1000 * ROUNDS; x++) {
                b.setCurrentKey(key(x));
                Long c = count.value();
                count.update(c == null ? 1 : c + 1);
            }
            LruCacheKeyedStateBackend<?> cached = (LruCacheKeyedStateBackend<?>) b;
            assertThat(cached.cache().readsRefused()).isZero();
            assertThat(cached.statistics().hits()).as("LRU never hits this cycle").isZero();
            for (int k = 0; k < 1000; k++) {
                b.setCurrentKey(k);
                assertThat(count.value()).isEqualTo(ROUNDS);
            }
        }
    }

    @Test
    void optionIsReadFromTheConfiguration() {
        Configuration config = new Configuration();
        config.setString("state.backend.cache.max-entries-num", "100");
        ClassLoader cl = getClass().getClassLoader();
        assertThat(StateBackendWrapperWithLRUCache.fromConfig(config, cl).isScanResistant())
                .isTrue();
        config.setString("state.backend.cache.scan-resistance", "false");
        StateBackendWrapperWithLRUCache off =
                StateBackendWrapperWithLRUCache.fromConfig(config, cl);
        assertThat(off.isScanResistant()).isFalse();
        assertThat(off.configure(new Configuration(), cl).isScanResistant())
                .as("kept when the job configuration does not set it")
                .isFalse();
    }

    /** A mutable POJO (PojoSerializer, copied by the HashMap backend on read in a snapshot). */
    public static class Box {
        public long n;

        public Box() {}
    }

    private static final ValueStateDescriptor<Box> BOX =
            new ValueStateDescriptor<>(
                    "box",
                    TypeInformation.of(Box.class).createSerializer(new SerializerConfigImpl()));

    /** Reads the key's box, increments it in place and writes it back. */
    private static void increment(
            AbstractKeyedStateBackend<Integer> b,
            InternalValueState<Integer, VoidNamespace, Box> box,
            int key)
            throws Exception {
        b.setCurrentKey(key);
        Box v = box.value();
        if (v == null) {
            v = new Box();
        }
        v.n++;
        box.update(v);
    }

    @Test
    void anUncachedReadOverHashMap_neverHandsOutAnObjectARunningCheckpointWrites()
            throws Exception {
        try (KeyedBackendHarness h = new KeyedBackendHarness(tmp)) {
            AbstractKeyedStateBackend<Integer> b =
                    h.create(cacheOver("hashmap", tmp, 1), List.of());
            InternalValueState<Integer, VoidNamespace, Box> box = state(b, BOX);
            CowLruMap cache = ((LruCacheKeyedStateBackend<?>) b).cache();
            CacheOwner owner = (CacheOwner) box;
            int next = 0;
            while (!cache.filteringReads()) { // a window of misses
                increment(b, box, next++);
            }
            int a;
            do { // a key the filtering cache admits (one miss in 8): cached and dirty
                a = next++;
                increment(b, box, a);
            } while (cache.peek(owner, a, VoidNamespace.INSTANCE, null) == null);

            // the checkpoint's synchronous part freezes a's cached object (n = 1)
            RunnableFuture<SnapshotResult<KeyedStateHandle>> checkpoint = h.startCheckpoint(b, 1L);
            do { // the next admitted miss evicts a: its object goes into the heap
                increment(b, box, next++);
            } while (cache.peek(owner, a, VoidNamespace.INSTANCE, null) != null);
            long refusedBefore = cache.readsRefused();
            b.setCurrentKey(a);
            Box read = box.value(); // not admitted: served by the heap
            assertThat(cache.readsRefused()).isEqualTo(refusedBefore + 1);
            read.n = 99; // a record after the barrier changes it in place
            box.update(read);

            checkpoint.run();
            KeyedStateHandle handle = h.finish(checkpoint.get(), 1L);
            AbstractKeyedStateBackend<Integer> restored =
                    h.create(cacheOver("hashmap", tmp, 1), List.of(handle));
            restored.setCurrentKey(a);
            InternalValueState<Integer, VoidNamespace, Box> restoredBox = state(restored, BOX);
            assertThat(restoredBox.value().n).as("the value at the barrier").isEqualTo(1);
        }
    }

    private static void assertCounts(AbstractKeyedStateBackend<Integer> b, long expected)
            throws Exception {
        InternalValueState<Integer, VoidNamespace, Long> count = state(b, COUNT);
        InternalReducingState<Integer, VoidNamespace, Long> sum = state(b, SUM);
        InternalAggregatingState<Integer, VoidNamespace, Long, Long, Long> agg = state(b, AGG);
        for (int k = 0; k < 1000; k++) {
            b.setCurrentKey(k);
            assertThat(count.value()).as("count of key %s", k).isEqualTo(expected);
            assertThat(sum.get()).as("sum of key %s", k).isEqualTo(expected);
            assertThat(agg.get()).as("aggregate of key %s", k).isEqualTo(expected);
        }
    }

    /** Sums longs; the accumulator is the result. */
    private static final class Sum implements AggregateFunction<Long, Long, Long> {
        @Override
        public Long createAccumulator() {
            return 0L;
        }

        @Override
        public Long add(Long value, Long acc) {
            return acc + value;
        }

        @Override
        public Long getResult(Long acc) {
            return acc;
        }

        @Override
        public Long merge(Long a, Long b) {
            return a + b;
        }
    }
}
