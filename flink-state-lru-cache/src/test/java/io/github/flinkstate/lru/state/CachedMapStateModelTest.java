package io.github.flinkstate.lru.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.lru.StateBackendWrapperWithLRUCache;
import java.io.File;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.operators.testutils.MockEnvironmentBuilder;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.runtime.state.internal.InternalMapState;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.apache.flink.runtime.util.TestingTaskManagerRuntimeInfo;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Randomized test of the cached map state against a plain model: point operations, whole-map reads
 * ({@code isEmpty}, iteration), changes through iterators and entries, and {@code clear}, over
 * several keys and namespaces, with caches small enough that entries are evicted (and written back)
 * all the time, and large enough that nothing is.
 */
class CachedMapStateModelTest {

    private static final int KEYS = 12;
    private static final int USER_KEYS = 6;
    private static final String[] NAMESPACES = {"a", "b"};

    @TempDir File tmp;

    @ParameterizedTest(name = "delegate={0}, cache={1}")
    @CsvSource({
        "hashmap,1",
        "hashmap,7",
        "hashmap,100000",
        "rocksdb,1",
        "rocksdb,7",
        "rocksdb,100000"
    })
    void matchesTheModel(String delegate, int cacheEntries) throws Exception {
        // -Dmodel.seed=... replays a failing run (the seed is in every assertion message)
        long seed = Long.getLong("model.seed", new SplittableRandom().nextLong());
        SplittableRandom rnd = new SplittableRandom(seed);
        String where = "seed " + seed + ", delegate " + delegate + ", cache " + cacheEntries;
        StateBackend inner =
                delegate.equals("rocksdb")
                        ? new EmbeddedRocksDBStateBackend()
                        : new HashMapStateBackend();
        try (Fixture f =
                new Fixture(new StateBackendWrapperWithLRUCache(inner, cacheEntries), tmp)) {
            @SuppressWarnings("unchecked")
            InternalMapState<Integer, String, Integer, String> state =
                    (InternalMapState<Integer, String, Integer, String>)
                            f.backend.getPartitionedState(
                                    "a",
                                    StringSerializer.INSTANCE,
                                    new MapStateDescriptor<>(
                                            "m",
                                            IntSerializer.INSTANCE,
                                            StringSerializer.INSTANCE));
            Map<String, Map<Integer, String>> model = new HashMap<>();
            for (int step = 0; step < 6_000; step++) {
                int key = rnd.nextInt(KEYS);
                String ns = NAMESPACES[rnd.nextInt(NAMESPACES.length)];
                f.backend.setCurrentKey(key);
                state.setCurrentNamespace(ns);
                Map<Integer, String> row =
                        model.computeIfAbsent(key + "/" + ns, r -> new TreeMap<>());
                int uk = rnd.nextInt(USER_KEYS);
                String at = where + ", step " + step + ", key " + key + ", ns " + ns;
                int op = rnd.nextInt(100);
                if (Boolean.getBoolean("model.trace") && key == 5 && ns.equals("b")) {
                    System.err.println(
                            "TRACE step " + step + " op " + op + " uk " + uk + " model " + row);
                }
                if (op < 25) {
                    String v = rnd.nextInt(10) == 0 ? null : "v" + step;
                    state.put(uk, v);
                    row.put(uk, v);
                } else if (op < 45) {
                    assertThat(state.get(uk)).as(at).isEqualTo(row.get(uk));
                } else if (op < 53) {
                    assertThat(state.contains(uk)).as(at).isEqualTo(row.containsKey(uk));
                } else if (op < 61) {
                    state.remove(uk);
                    row.remove(uk);
                } else if (op < 71) {
                    assertThat(state.isEmpty()).as(at).isEqualTo(row.isEmpty());
                } else if (op < 79) {
                    Map<Integer, String> seen = new HashMap<>();
                    for (Map.Entry<Integer, String> e : state.entries()) {
                        assertThat(seen.containsKey(e.getKey()))
                                .as(at + ": duplicate " + e.getKey())
                                .isFalse();
                        seen.put(e.getKey(), e.getValue());
                    }
                    assertThat(seen).as(at).isEqualTo(row);
                } else if (op < 83) {
                    List<Integer> keys = new ArrayList<>();
                    state.keys().forEach(keys::add);
                    Collections.sort(keys);
                    assertThat(keys).as(at).containsExactlyElementsOf(row.keySet());
                } else if (op < 88) {
                    // remove odd user keys through the iterator
                    Iterator<Map.Entry<Integer, String>> it = state.iterator();
                    while (it.hasNext()) {
                        if (it.next().getKey() % 2 == 1) {
                            it.remove();
                        }
                    }
                    row.keySet().removeIf(k -> k % 2 == 1);
                } else if (op < 93) {
                    // rewrite every value through its entry
                    String v = "s" + step;
                    for (Map.Entry<Integer, String> e : state.entries()) {
                        e.setValue(v);
                    }
                    row.replaceAll((k, old) -> v);
                } else if (op < 96) {
                    Map<Integer, String> more =
                            Map.of(uk, "p" + step, (uk + 1) % USER_KEYS, "q" + step);
                    state.putAll(more);
                    row.putAll(more);
                } else {
                    state.clear();
                    row.clear();
                }
            }
        }
    }

    /** A keyed backend with Integer keys on Flink's MockEnvironment. */
    private static final class Fixture implements AutoCloseable {
        final MockEnvironment env;
        final AbstractKeyedStateBackend<Integer> backend;

        Fixture(StateBackend stateBackend, File dir) throws Exception {
            JobID job = new JobID();
            env =
                    new MockEnvironmentBuilder()
                            .setJobID(job)
                            .setManagedMemorySize(64L << 20)
                            .setTaskManagerRuntimeInfo(
                                    new TestingTaskManagerRuntimeInfo(
                                            new Configuration(), dir.getAbsolutePath()))
                            .build();
            backend =
                    (AbstractKeyedStateBackend<Integer>)
                            stateBackend.createKeyedStateBackend(
                                    new KeyedStateBackendParametersImpl<>(
                                            env,
                                            job,
                                            "model-test",
                                            IntSerializer.INSTANCE,
                                            16,
                                            new KeyGroupRange(0, 15),
                                            env.getTaskKvStateRegistry(),
                                            TtlTimeProvider.DEFAULT,
                                            new UnregisteredMetricsGroup(),
                                            Collections.emptyList(),
                                            new CloseableRegistry()));
        }

        @Override
        public void close() throws Exception {
            backend.dispose();
            backend.close();
            env.close();
        }
    }
}
