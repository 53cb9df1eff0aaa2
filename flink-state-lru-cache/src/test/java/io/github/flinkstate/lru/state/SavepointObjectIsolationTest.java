package io.github.flinkstate.lru.state;

import static io.github.flinkstate.lru.support.KeyedBackendHarness.state;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.lru.StateBackendWrapperWithLRUCache;
import io.github.flinkstate.lru.support.KeyedBackendHarness;
import java.io.File;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RunnableFuture;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.state.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.ListSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.api.common.typeutils.base.array.LongPrimitiveArraySerializer;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.SavepointType;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.runtime.state.internal.InternalAggregatingState;
import org.apache.flink.runtime.state.internal.InternalListState;
import org.apache.flink.runtime.state.internal.InternalMapState;
import org.apache.flink.runtime.state.internal.InternalValueState;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;

/**
 * A canonical savepoint holds the state as of its synchronous part, even when records processed
 * after it mutate cached objects in place (issue 12, finding 2): a POJO held in a value state and a
 * POJO accumulator of an aggregating state; and so does a checkpoint when a map iteration after it
 * changes a value that was evicted to the heap delegate.
 */
@Timeout(60)
class SavepointObjectIsolationTest {

    /** A mutable POJO, serialized by Flink's PojoSerializer (not immutable). */
    public static class Counter {
        public long count;

        public Counter() {}

        public Counter(long count) {
            this.count = count;
        }
    }

    private static final TypeSerializer<Counter> COUNTER =
            TypeInformation.of(Counter.class).createSerializer(new SerializerConfigImpl());
    private static final ValueStateDescriptor<Counter> VALUE =
            new ValueStateDescriptor<>("value", COUNTER);
    private static final AggregatingStateDescriptor<Long, Counter, Long> SUM =
            new AggregatingStateDescriptor<>("sum", new SumInPlace(), COUNTER);

    @TempDir File tmp;

    @ParameterizedTest(name = "delegate {0}, cache {1}")
    @org.junit.jupiter.params.provider.CsvSource({
        "hashmap, 1000000",
        "hashmap, 1",
        "rocksdb, 1000000",
        "rocksdb, 1"
    })
    void mutationAfterSavepointSyncPartDoesNotChangeTheSavepoint(String delegate, int cacheSize)
            throws Exception {
        try (KeyedBackendHarness h = new KeyedBackendHarness(tmp)) {
            AbstractKeyedStateBackend<Integer> b =
                    h.create(
                            new StateBackendWrapperWithLRUCache(delegate(delegate), cacheSize),
                            List.of());
            InternalValueState<Integer, VoidNamespace, Counter> value = state(b, VALUE);
            InternalAggregatingState<Integer, VoidNamespace, Long, Counter, Long> sum =
                    state(b, SUM);
            b.setCurrentKey(7);
            value.update(new Counter(1));
            sum.add(1L);

            RunnableFuture<SnapshotResult<KeyedStateHandle>> savepoint =
                    h.startCanonicalSavepoint(
                            b,
                            new CheckpointOptions(
                                    SavepointType.savepoint(SavepointFormatType.CANONICAL),
                                    CheckpointStorageLocationReference.getDefault()));

            // a record after the barrier: read-modify-write in place
            b.setCurrentKey(7);
            Counter c = value.value();
            c.count = 99;
            value.update(c);
            sum.add(98L);
            assertThat(value.value().count).isEqualTo(99);
            assertThat(sum.get()).isEqualTo(99);

            savepoint.run();
            KeyedStateHandle handle = h.finish(savepoint.get(), 100L);

            // the savepoint is canonical: plain HashMap restores it
            AbstractKeyedStateBackend<Integer> restored =
                    h.create(new HashMapStateBackend(), List.of(handle));
            restored.setCurrentKey(7);
            InternalValueState<Integer, VoidNamespace, Counter> rv = state(restored, VALUE);
            InternalAggregatingState<Integer, VoidNamespace, Long, Counter, Long> rs =
                    state(restored, SUM);
            assertThat(rv.value().count).as("value state in the savepoint").isEqualTo(1);
            assertThat(rs.get()).as("accumulator in the savepoint").isEqualTo(1);

            // the running backend still has the new values
            b.setCurrentKey(7);
            assertThat(value.value().count).isEqualTo(99);
            assertThat(sum.get()).isEqualTo(99);
        }
    }

    /**
     * A checkpoint over the HashMap delegate, taken while a map entry lives in the cache; a later
     * write evicts it (the cached object goes to the heap by reference) and a map iteration after
     * that modifies the value it hands out and writes it back with {@code setValue}. Found in a
     * review: the iteration handed out the heap's own object, which the checkpoint's cache part
     * still serialized, so the checkpoint held the change made after its barrier.
     */
    @ParameterizedTest(name = "delegate {0}")
    @org.junit.jupiter.params.provider.ValueSource(strings = {"hashmap", "rocksdb"})
    void mapIterationAfterCheckpointSyncPartDoesNotChangeTheCheckpoint(String delegate)
            throws Exception {
        MapStateDescriptor<Integer, Counter> mapDesc =
                new MapStateDescriptor<>("map", IntSerializer.INSTANCE, COUNTER);
        try (KeyedBackendHarness h = new KeyedBackendHarness(tmp)) {
            AbstractKeyedStateBackend<Integer> b =
                    h.create(new StateBackendWrapperWithLRUCache(delegate(delegate), 1), List.of());
            InternalMapState<Integer, VoidNamespace, Integer, Counter> map = state(b, mapDesc);
            b.setCurrentKey(7);
            map.put(1, new Counter(1));

            RunnableFuture<SnapshotResult<KeyedStateHandle>> checkpoint = h.startCheckpoint(b, 1L);

            // records after the barrier: a write that evicts user key 1, then a read-modify-write
            // of every entry through the iteration
            b.setCurrentKey(7);
            map.put(2, new Counter(2));
            for (Map.Entry<Integer, Counter> e : map.entries()) {
                Counter c = e.getValue();
                c.count = 99;
                e.setValue(c);
            }

            checkpoint.run();
            KeyedStateHandle handle = h.finish(checkpoint.get(), 1L);

            AbstractKeyedStateBackend<Integer> restored =
                    h.create(
                            new StateBackendWrapperWithLRUCache(delegate(delegate), 1),
                            List.of(handle));
            restored.setCurrentKey(7);
            InternalMapState<Integer, VoidNamespace, Integer, Counter> rm =
                    state(restored, mapDesc);
            assertThat(rm.get(1).count).as("user key 1 in the checkpoint").isEqualTo(1);
            assertThat(rm.contains(2)).as("user key 2 was written after the barrier").isFalse();

            b.setCurrentKey(7);
            assertThat(map.get(1).count).isEqualTo(99);
            assertThat(map.get(2).count).isEqualTo(99);
        }
    }

    /**
     * A map value that is null (put with null) read while a checkpoint runs: {@code null}, as
     * without a checkpoint. Found in a review: the copy of a value a running snapshot may read
     * called the value serializer's copy on null, which Flink's list, map and array serializers
     * reject with a NullPointerException, failing the task.
     */
    @ParameterizedTest(name = "delegate {0}")
    @org.junit.jupiter.params.provider.ValueSource(strings = {"hashmap", "rocksdb"})
    void aNullMapValue_readDuringACheckpoint_isNull(String delegate) throws Exception {
        MapStateDescriptor<Integer, List<Long>> mapDesc =
                new MapStateDescriptor<>(
                        "lists",
                        IntSerializer.INSTANCE,
                        new ListSerializer<>(LongSerializer.INSTANCE));
        try (KeyedBackendHarness h = new KeyedBackendHarness(tmp)) {
            AbstractKeyedStateBackend<Integer> b =
                    h.create(
                            new StateBackendWrapperWithLRUCache(delegate(delegate), 1000),
                            List.of());
            InternalMapState<Integer, VoidNamespace, Integer, List<Long>> map = state(b, mapDesc);
            b.setCurrentKey(1);
            map.put(7, null);
            RunnableFuture<SnapshotResult<KeyedStateHandle>> checkpoint = h.startCheckpoint(b, 1L);
            b.setCurrentKey(1);
            assertThat(map.get(7)).isNull();
            assertThat(map.contains(7)).isTrue();
            for (Map.Entry<Integer, List<Long>> e : map.entries()) {
                assertThat(e.getValue()).isNull();
            }
            checkpoint.run();
            checkpoint.get();
        }
    }

    /**
     * Merging list namespaces (session windows) after a checkpoint's synchronous part must not hand
     * the checkpoint's elements to the merged list. Found in a review: the merge copied the source
     * lists but kept their element objects, which the running checkpoint still wrote, so a change
     * of the merged elements in place after the barrier reached the checkpoint.
     */
    @ParameterizedTest(name = "delegate {0}")
    @org.junit.jupiter.params.provider.ValueSource(strings = {"hashmap", "rocksdb"})
    void mergedListElements_changedAfterTheBarrier_doNotReachTheCheckpoint(String delegate)
            throws Exception {
        ListStateDescriptor<long[]> listDesc =
                new ListStateDescriptor<>("list", LongPrimitiveArraySerializer.INSTANCE);
        try (KeyedBackendHarness h = new KeyedBackendHarness(tmp)) {
            AbstractKeyedStateBackend<Integer> b =
                    h.create(
                            new StateBackendWrapperWithLRUCache(delegate(delegate), 1000),
                            List.of());
            @SuppressWarnings("unchecked")
            InternalListState<Integer, String, long[]> list =
                    (InternalListState<Integer, String, long[]>)
                            b.getPartitionedState("A", StringSerializer.INSTANCE, listDesc);
            b.setCurrentKey(1);
            list.setCurrentNamespace("A");
            list.update(List.of(new long[] {1}));
            list.setCurrentNamespace("B");
            list.update(List.of(new long[] {2}));

            RunnableFuture<SnapshotResult<KeyedStateHandle>> checkpoint = h.startCheckpoint(b, 1L);

            b.setCurrentKey(1);
            list.mergeNamespaces("C", List.of("A", "B"));
            list.setCurrentNamespace("C");
            List<long[]> merged = list.getInternal();
            for (long[] element : merged) {
                element[0] += 100; // in place, then written back
            }
            list.update(merged);

            checkpoint.run();
            KeyedStateHandle handle = h.finish(checkpoint.get(), 1L);
            AbstractKeyedStateBackend<Integer> restored =
                    h.create(
                            new StateBackendWrapperWithLRUCache(delegate(delegate), 1000),
                            List.of(handle));
            @SuppressWarnings("unchecked")
            InternalListState<Integer, String, long[]> rl =
                    (InternalListState<Integer, String, long[]>)
                            restored.getPartitionedState("A", StringSerializer.INSTANCE, listDesc);
            restored.setCurrentKey(1);
            rl.setCurrentNamespace("A");
            assertThat(rl.getInternal()).containsExactly(new long[] {1});
            rl.setCurrentNamespace("B");
            assertThat(rl.getInternal()).containsExactly(new long[] {2});
        }
    }

    private StateBackend delegate(String kind) {
        if (kind.equals("hashmap")) {
            return new HashMapStateBackend();
        }
        EmbeddedRocksDBStateBackend rocks = new EmbeddedRocksDBStateBackend(true);
        rocks.setDbStoragePath(new File(tmp, "rocks").getAbsolutePath());
        return rocks;
    }

    /** Adds into the accumulator object in place (a common and legal AggregateFunction). */
    private static final class SumInPlace implements AggregateFunction<Long, Counter, Long> {
        @Override
        public Counter createAccumulator() {
            return new Counter(0);
        }

        @Override
        public Counter add(Long value, Counter acc) {
            acc.count += value;
            return acc;
        }

        @Override
        public Long getResult(Counter acc) {
            return acc.count;
        }

        @Override
        public Counter merge(Counter a, Counter b) {
            a.count += b.count;
            return a;
        }
    }
}
