package io.github.flinkstate.lru.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.lru.StateBackendWrapperWithLRUCache;
import io.github.flinkstate.lru.support.KeyedBackendHarness;
import java.io.File;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.state.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.StateBackend;
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
