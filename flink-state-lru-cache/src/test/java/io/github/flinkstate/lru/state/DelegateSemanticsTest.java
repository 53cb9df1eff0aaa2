package io.github.flinkstate.lru.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.lru.StateBackendWrapperWithLRUCache;
import io.github.flinkstate.lru.support.KeyedBackendHarness;
import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RunnableFuture;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.state.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.internal.InternalAggregatingState;
import org.apache.flink.runtime.state.internal.InternalAppendingState;
import org.apache.flink.runtime.state.internal.InternalMergingState;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Where Flink's HashMap and RocksDB backends differ, the cache behaves as the backend it wraps: a
 * namespace merge of reducing and aggregating state with a function that is not commutative
 * (HashMap folds the sources into the target as {@code f(target, sources)}, RocksDB as {@code
 * f(sources, target)}), and {@code add(null)} (HashMap clears the state; RocksDB hands null to the
 * function). The cache used to follow one of the two in each case, so switching it on changed a
 * session window's result over the other. Found in a review. Each sequence runs on the plain
 * delegate and on the cache over it (1 entry: almost everything evicted; 1M: everything cached),
 * and what they return is compared.
 */
@Timeout(60)
class DelegateSemanticsTest {

    /** Keeps the last value: not commutative. */
    private static final ReducingStateDescriptor<String> LAST =
            new ReducingStateDescriptor<>("last", (a, b) -> b, StringSerializer.INSTANCE);

    /** Concatenates, and merges as "left|right": not commutative. */
    private static final AggregatingStateDescriptor<String, String, String> CONCAT =
            new AggregatingStateDescriptor<>(
                    "concat",
                    new AggregateFunction<String, String, String>() {
                        @Override
                        public String createAccumulator() {
                            return "";
                        }

                        @Override
                        public String add(String value, String acc) {
                            return acc + value;
                        }

                        @Override
                        public String getResult(String acc) {
                            return acc;
                        }

                        @Override
                        public String merge(String a, String b) {
                            return a + "|" + b;
                        }
                    },
                    StringSerializer.INSTANCE);

    @TempDir File tmp;

    @ParameterizedTest(name = "delegate {0}, {1} entries")
    @CsvSource({"hashmap,1000000", "rocksdb,1000000", "hashmap,1", "rocksdb,1"})
    void mergesAndNullAdds_areTheDelegates(String delegate, int entries) throws Exception {
        for (StateDescriptor<?, ?> descriptor : List.of(LAST, CONCAT)) {
            List<String> plain = run(delegate(delegate, "plain"), descriptor);
            List<String> cached =
                    run(
                            new StateBackendWrapperWithLRUCache(
                                    delegate(delegate, "cached"), entries),
                            descriptor);
            assertThat(cached).as("%s over %s", descriptor.getName(), delegate).isEqualTo(plain);
        }
    }

    /** Adds into and merges into its first argument, in place: a mutable accumulator. */
    private static final AggregatingStateDescriptor<Long, ObjectReuseTest.Box, Long> IN_PLACE =
            new AggregatingStateDescriptor<>(
                    "in-place",
                    new AggregateFunction<Long, ObjectReuseTest.Box, Long>() {
                        @Override
                        public ObjectReuseTest.Box createAccumulator() {
                            return new ObjectReuseTest.Box();
                        }

                        @Override
                        public ObjectReuseTest.Box add(Long value, ObjectReuseTest.Box acc) {
                            acc.n += value;
                            return acc;
                        }

                        @Override
                        public Long getResult(ObjectReuseTest.Box acc) {
                            return acc.n;
                        }

                        @Override
                        public ObjectReuseTest.Box merge(
                                ObjectReuseTest.Box a, ObjectReuseTest.Box b) {
                            a.n += b.n;
                            return a;
                        }
                    },
                    ObjectReuseTest.BOX);

    /**
     * A merge run by a HashMap delegate changes a mutable accumulator in place; the value handed to
     * it must not be the one a running checkpoint of the cache still writes (found in the reread of
     * the change that moved merges to the delegate: the checkpoint held the merged sum).
     */
    @ParameterizedTest(name = "delegate {0}")
    @CsvSource({"hashmap", "rocksdb"})
    void aMergeWhileACheckpointIsWritten_leavesTheCheckpointAsItWas(String delegate)
            throws Exception {
        try (KeyedBackendHarness h = new KeyedBackendHarness(tmp)) {
            AbstractKeyedStateBackend<Integer> b =
                    h.create(
                            new StateBackendWrapperWithLRUCache(
                                    delegate(delegate, "merge"), 1_000_000),
                            List.of());
            InternalAggregatingState<Integer, String, Long, ObjectReuseTest.Box, Long> state =
                    aggregating(b);
            b.setCurrentKey(1);
            state.setCurrentNamespace("a");
            state.add(1L);
            state.setCurrentNamespace("b");
            state.add(10L);
            RunnableFuture<SnapshotResult<KeyedStateHandle>> checkpoint = h.startCheckpoint(b, 1L);
            state.mergeNamespaces("a", List.of("b")); // after the barrier
            state.setCurrentNamespace("a");
            assertThat(state.get()).isEqualTo(11L);
            checkpoint.run();
            KeyedStateHandle handle = h.finish(checkpoint.get(), 1L);

            AbstractKeyedStateBackend<Integer> restored =
                    h.create(
                            new StateBackendWrapperWithLRUCache(
                                    delegate(delegate, "merge-restored"), 1_000_000),
                            List.of(handle));
            InternalAggregatingState<Integer, String, Long, ObjectReuseTest.Box, Long> after =
                    aggregating(restored);
            restored.setCurrentKey(1);
            after.setCurrentNamespace("a");
            assertThat(after.get()).as("namespace a at the checkpoint").isEqualTo(1L);
            after.setCurrentNamespace("b");
            assertThat(after.get()).as("namespace b at the checkpoint").isEqualTo(10L);
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static InternalAggregatingState<Integer, String, Long, ObjectReuseTest.Box, Long>
            aggregating(AbstractKeyedStateBackend<Integer> b) throws Exception {
        return (InternalAggregatingState)
                b.getPartitionedState("a", StringSerializer.INSTANCE, IN_PLACE);
    }

    private StateBackend delegate(String kind, String dir) {
        return KeyedBackendHarness.delegate(kind, new File(tmp, dir));
    }

    /** Writes, merges and adds null on keys 0-2; returns what each read returned, in order. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private List<String> run(StateBackend backend, StateDescriptor<?, ?> descriptor)
            throws Exception {
        List<String> seen = new ArrayList<>();
        try (KeyedBackendHarness h = new KeyedBackendHarness(tmp)) {
            AbstractKeyedStateBackend<Integer> b = h.create(backend, List.of());
            InternalAppendingState<Integer, String, String, ?, Object> state =
                    (InternalAppendingState)
                            b.getPartitionedState(
                                    "a", StringSerializer.INSTANCE, (StateDescriptor) descriptor);
            for (int k = 0; k < 3; k++) {
                b.setCurrentKey(k);
                for (String ns : List.of("a", "b", "c")) {
                    state.setCurrentNamespace(ns);
                    state.add(ns + k);
                    state.add(ns.toUpperCase() + k);
                }
            }
            for (int k = 0; k < 3; k++) {
                b.setCurrentKey(k);
                ((InternalMergingState<Integer, String, ?, ?, ?>) state)
                        .mergeNamespaces("a", List.of("b", "c"));
                for (String ns : List.of("a", "b", "c")) {
                    state.setCurrentNamespace(ns);
                    seen.add(k + "/" + ns + ": " + state.get());
                }
            }
            b.setCurrentKey(1);
            state.setCurrentNamespace("a");
            try {
                state.add(null);
                seen.add("after add(null): " + state.get());
            } catch (Exception | AssertionError e) {
                seen.add("add(null) threw " + e.getClass().getSimpleName());
            }
            b.setCurrentKey(2);
            seen.add("key 2 untouched: " + state.get());
        }
        return seen;
    }
}
