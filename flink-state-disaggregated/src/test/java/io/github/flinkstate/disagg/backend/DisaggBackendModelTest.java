package io.github.flinkstate.disagg.backend;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.backend.testutil.DisaggBackends;
import io.github.flinkstate.disagg.backend.testutil.JobCheckpoints;
import io.github.flinkstate.disagg.backend.testutil.KeyedFixture;
import java.io.File;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.CompletedCheckpoint;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.CheckpointStorageLocation;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.internal.InternalListState;
import org.apache.flink.runtime.state.internal.InternalMapState;
import org.apache.flink.runtime.state.internal.InternalValueState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Randomized model test of the keyed backend: seeded random operations on value, list and map state
 * in four namespaces (update, clear, add, addAll, merge of list namespaces, put, remove, putAll),
 * checkpoints, and restores from the latest completed checkpoint at a random parallelism of 1 to 4
 * (every restore a rescale, key groups clipped, several handles per subtask), checked against a
 * plain in-memory model: point reads after random operations, and after every restore every key and
 * namespace of every state plus {@code getKeys} per state and namespace.
 *
 * <p>Knobs (system properties): {@code disagg.model.seed} runs that one seed; {@code
 * disagg.model.runs} (default 3) seeds from 1; {@code disagg.model.steps} (default 1500) operations
 * per run. Every run prints its seed and figures; a failure names its seed and step.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DisaggBackendModelTest {

    private static final int KEYS = 300;
    private static final int NAMESPACES = 4;

    private static final ValueStateDescriptor<Long> VALUE =
            new ValueStateDescriptor<>("model-value", LongSerializer.INSTANCE);
    private static final ListStateDescriptor<String> LIST =
            new ListStateDescriptor<>("model-list", StringSerializer.INSTANCE);
    private static final MapStateDescriptor<Integer, String> MAP =
            new MapStateDescriptor<>(
                    "model-map", IntSerializer.INSTANCE, StringSerializer.INSTANCE);

    @TempDir File tmp;

    /** The model: per state kind, (key, namespace) -> content; absent = empty. */
    private static final class Model {
        final Map<List<Integer>, Long> values = new HashMap<>();
        final Map<List<Integer>, List<String>> lists = new HashMap<>();
        final Map<List<Integer>, TreeMap<Integer, String>> maps = new HashMap<>();

        Model copy() {
            Model m = new Model();
            m.values.putAll(values);
            lists.forEach((k, v) -> m.lists.put(k, new ArrayList<>(v)));
            maps.forEach((k, v) -> m.maps.put(k, new TreeMap<>(v)));
            return m;
        }
    }

    @Test
    void randomOperationsCheckpointsAndRescales_matchTheModel() throws Exception {
        String one = System.getProperty("disagg.model.seed");
        int runs = Integer.getInteger("disagg.model.runs", 3);
        int steps = Integer.getInteger("disagg.model.steps", 1500);
        List<Long> seeds = new ArrayList<>();
        if (one != null) {
            seeds.add(Long.parseLong(one));
        } else {
            for (long s = 1; s <= runs; s++) {
                seeds.add(s);
            }
        }
        for (long seed : seeds) {
            File dir = new File(tmp, "seed-" + seed);
            new Run(seed, steps, dir).run();
        }
    }

    private static final class Run {
        final long seed;
        final int steps;
        final File dir;
        final Random random;
        Model model = new Model();
        final Map<Long, Model> modelAt = new HashMap<>();
        List<AbstractKeyedStateBackend<Integer>> subtasks = new ArrayList<>();
        int step;
        int checkpoints;
        int restores;
        int reads;
        final TreeSet<Integer> parallelisms = new TreeSet<>();

        Run(long seed, int steps, File dir) {
            this.seed = seed;
            this.steps = steps;
            this.dir = dir;
            this.random = new Random(seed);
        }

        void run() throws Exception {
            long start = System.nanoTime();
            try (DisaggBackends backends =
                    new DisaggBackends(
                            DisaggBackends.backend(
                                    new File(dir, "primary").toURI().toString(),
                                    MemorySize.parse("64kb")))) {
                JobCheckpoints job =
                        new JobCheckpoints(
                                new File(dir, "chk").toURI().toString(),
                                2,
                                false,
                                RecoveryClaimMode.DEFAULT);
                start(backends, 1 + random.nextInt(4), null);
                long nextId = 1;
                CompletedCheckpoint latest = null;
                for (step = 0; step < steps; step++) {
                    int dice = random.nextInt(1000);
                    if (dice < 40) {
                        latest = checkpoint(job, nextId++);
                    } else if (dice < 55 && latest != null) {
                        model = modelAt.get(latest.getCheckpointID()).copy();
                        start(backends, 1 + random.nextInt(4), latest);
                        verifyAll();
                    } else if (dice < 200) {
                        readOne();
                    } else {
                        writeOne();
                    }
                }
                if (latest != null) {
                    model = modelAt.get(latest.getCheckpointID()).copy();
                    start(backends, 1 + random.nextInt(4), latest);
                    verifyAll();
                }
                job.shutdown(JobStatus.CANCELED);
            } catch (Throwable t) {
                throw new AssertionError(
                        "model run with seed " + seed + " failed at step " + step + ": " + t, t);
            }
            System.out.printf(
                    "model seed=%d: %d steps, %d checkpoints, %d restores (parallelisms %s), %d"
                            + " point checks, %d ms%n",
                    seed,
                    steps,
                    checkpoints,
                    restores,
                    parallelisms,
                    reads,
                    (System.nanoTime() - start) / 1_000_000);
        }

        /** Replaces the subtasks by {@code parallelism} new ones (restored from {@code cp}). */
        void start(DisaggBackends backends, int parallelism, CompletedCheckpoint cp)
                throws Exception {
            for (AbstractKeyedStateBackend<Integer> b : subtasks) {
                backends.dispose((DisaggregatedKeyedStateBackend<Integer>) b);
            }
            subtasks = new ArrayList<>();
            for (KeyGroupRange r : DisaggBackends.ranges(parallelism)) {
                subtasks.add(
                        backends.create(
                                r, cp == null ? List.of() : JobCheckpoints.handlesFor(cp, r)));
            }
            parallelisms.add(parallelism);
            if (cp != null) {
                restores++;
            }
        }

        CompletedCheckpoint checkpoint(JobCheckpoints job, long id) throws Exception {
            CheckpointStorageLocation location = job.start(id);
            for (int s = 0; s < subtasks.size(); s++) {
                job.acknowledge(
                        id,
                        s,
                        DisaggBackends.snapshot(
                                        (DisaggregatedKeyedStateBackend<Integer>) subtasks.get(s),
                                        id,
                                        location,
                                        CheckpointOptions.forCheckpointWithDefaultLocation())
                                .getJobManagerOwnedSnapshot());
            }
            CompletedCheckpoint cp = job.complete(id, subtasks.size());
            for (AbstractKeyedStateBackend<Integer> b : subtasks) {
                b.notifyCheckpointComplete(id);
            }
            modelAt.put(id, model.copy());
            checkpoints++;
            return cp;
        }

        AbstractKeyedStateBackend<Integer> at(int key) {
            for (AbstractKeyedStateBackend<Integer> b : subtasks) {
                if (KeyedFixture.owns(b.getKeyGroupRange(), key)) {
                    b.setCurrentKey(key);
                    return b;
                }
            }
            throw new IllegalStateException("no subtask owns key " + key);
        }

        void writeOne() throws Exception {
            int key = random.nextInt(KEYS);
            int ns = random.nextInt(NAMESPACES);
            List<Integer> id = List.of(key, ns);
            AbstractKeyedStateBackend<Integer> b = at(key);
            String word = "w" + random.nextInt(1000) + "-".repeat(random.nextInt(40));
            switch (random.nextInt(12)) {
                case 0, 1 -> {
                    long v = random.nextLong();
                    value(b, ns).update(v);
                    model.values.put(id, v);
                }
                case 2 -> {
                    value(b, ns).clear();
                    model.values.remove(id);
                }
                case 3, 4 -> {
                    list(b, ns).add(word);
                    model.lists.computeIfAbsent(id, k -> new ArrayList<>()).add(word);
                }
                case 5 -> {
                    List<String> more = List.of(word, word + "'");
                    list(b, ns).addAll(more);
                    model.lists.computeIfAbsent(id, k -> new ArrayList<>()).addAll(more);
                }
                case 6 -> {
                    List<String> replaced = random.nextInt(4) == 0 ? List.of() : List.of(word);
                    list(b, ns).update(replaced);
                    if (replaced.isEmpty()) {
                        model.lists.remove(id);
                    } else {
                        model.lists.put(id, new ArrayList<>(replaced));
                    }
                }
                case 7 -> {
                    int target = random.nextInt(NAMESPACES);
                    int source = random.nextInt(NAMESPACES);
                    if (source != target) {
                        InternalListState<Integer, Integer, String> l = list(b, target);
                        l.mergeNamespaces(target, List.of(source));
                        List<String> src = model.lists.remove(List.of(key, source));
                        if (src != null) {
                            model.lists
                                    .computeIfAbsent(List.of(key, target), k -> new ArrayList<>())
                                    .addAll(src);
                        }
                    }
                }
                case 8, 9 -> {
                    int uk = random.nextInt(6);
                    map(b, ns).put(uk, word);
                    model.maps.computeIfAbsent(id, k -> new TreeMap<>()).put(uk, word);
                }
                case 10 -> {
                    int uk = random.nextInt(6);
                    map(b, ns).remove(uk);
                    TreeMap<Integer, String> m = model.maps.get(id);
                    if (m != null) {
                        m.remove(uk);
                        if (m.isEmpty()) {
                            model.maps.remove(id);
                        }
                    }
                }
                default -> {
                    if (random.nextBoolean()) {
                        map(b, ns).clear();
                        model.maps.remove(id);
                    } else {
                        Map<Integer, String> more = Map.of(6, word, 7, word + "!");
                        map(b, ns).putAll(more);
                        model.maps.computeIfAbsent(id, k -> new TreeMap<>()).putAll(more);
                    }
                }
            }
        }

        void readOne() throws Exception {
            check(random.nextInt(KEYS), random.nextInt(NAMESPACES));
            reads++;
        }

        void check(int key, int ns) throws Exception {
            List<Integer> id = List.of(key, ns);
            AbstractKeyedStateBackend<Integer> b = at(key);
            assertThat(value(b, ns).value()).as("value of %s", id).isEqualTo(model.values.get(id));
            Iterable<String> l = list(b, ns).get();
            List<String> actualList = new ArrayList<>();
            if (l != null) {
                l.forEach(actualList::add);
            }
            assertThat(actualList)
                    .as("list of %s", id)
                    .isEqualTo(model.lists.getOrDefault(id, List.of()));
            TreeMap<Integer, String> actualMap = new TreeMap<>();
            InternalMapState<Integer, Integer, Integer, String> m = map(b, ns);
            Iterable<Map.Entry<Integer, String>> entries = m.entries();
            if (entries != null) {
                entries.forEach(e -> actualMap.put(e.getKey(), e.getValue()));
            }
            TreeMap<Integer, String> expected = model.maps.getOrDefault(id, new TreeMap<>());
            assertThat(actualMap).as("map of %s", id).isEqualTo(expected);
            int uk = random.nextInt(8);
            assertThat(m.get(uk)).as("map %s get(%d)", id, uk).isEqualTo(expected.get(uk));
            assertThat(m.contains(uk))
                    .as("map %s contains(%d)", id, uk)
                    .isEqualTo(expected.containsKey(uk));
            assertThat(m.isEmpty()).as("map %s isEmpty", id).isEqualTo(expected.isEmpty());
        }

        void verifyAll() throws Exception {
            for (int key = 0; key < KEYS; key++) {
                for (int ns = 0; ns < NAMESPACES; ns++) {
                    check(key, ns);
                }
            }
            for (int ns = 0; ns < NAMESPACES; ns++) {
                assertKeys(VALUE.getName(), ns, model.values.keySet());
                assertKeys(LIST.getName(), ns, model.lists.keySet());
                assertKeys(MAP.getName(), ns, model.maps.keySet());
            }
        }

        void assertKeys(String state, int ns, java.util.Set<List<Integer>> present) {
            TreeSet<Integer> expected =
                    present.stream()
                            .filter(id -> id.get(1) == ns)
                            .map(id -> id.get(0))
                            .collect(Collectors.toCollection(TreeSet::new));
            TreeSet<Integer> actual = new TreeSet<>();
            for (AbstractKeyedStateBackend<Integer> b : subtasks) {
                try (var keys = b.getKeys(state, ns)) {
                    keys.forEach(
                            k -> {
                                assertThat(KeyedFixture.owns(b.getKeyGroupRange(), k))
                                        .as("key %d listed by %s", k, b.getKeyGroupRange())
                                        .isTrue();
                                assertThat(actual.add(k)).as("key %d listed twice", k).isTrue();
                            });
                }
            }
            assertThat(actual).as("getKeys(%s, %d)", state, ns).isEqualTo(expected);
        }

        @SuppressWarnings("unchecked")
        static InternalValueState<Integer, Integer, Long> value(
                AbstractKeyedStateBackend<Integer> b, int ns) throws Exception {
            InternalValueState<Integer, Integer, Long> s =
                    (InternalValueState<Integer, Integer, Long>)
                            b.getOrCreateKeyedState(IntSerializer.INSTANCE, VALUE);
            s.setCurrentNamespace(ns);
            return s;
        }

        @SuppressWarnings("unchecked")
        static InternalListState<Integer, Integer, String> list(
                AbstractKeyedStateBackend<Integer> b, int ns) throws Exception {
            InternalListState<Integer, Integer, String> s =
                    (InternalListState<Integer, Integer, String>)
                            b.getOrCreateKeyedState(IntSerializer.INSTANCE, LIST);
            s.setCurrentNamespace(ns);
            return s;
        }

        @SuppressWarnings("unchecked")
        static InternalMapState<Integer, Integer, Integer, String> map(
                AbstractKeyedStateBackend<Integer> b, int ns) throws Exception {
            InternalMapState<Integer, Integer, Integer, String> s =
                    (InternalMapState<Integer, Integer, Integer, String>)
                            b.getOrCreateKeyedState(IntSerializer.INSTANCE, MAP);
            s.setCurrentNamespace(ns);
            return s;
        }
    }
}
