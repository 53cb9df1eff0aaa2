package io.github.flinkstate.benchmarks.jmh;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.Blackhole;

/**
 * {@code ListState<Long>} throughput (ops/ms) per backend, with the operations of flink-benchmarks'
 * {@code ListStateBenchmark}. Before every iteration a fresh backend gets one element for each of
 * 500,000 keys (flink-benchmarks refills and clears per iteration so that the lists do not grow
 * from iteration to iteration; a new backend does the same more cheaply), then
 *
 * <ul>
 *   <li>{@code listGet}: set a set-up key, {@code get()};
 *   <li>{@code listGetAndIterate}: the same and iterate the elements;
 *   <li>{@code listAppend}: set a set-up key, {@code add(v)};
 *   <li>{@code listUpdate}: set a set-up key, {@code update([v])};
 *   <li>{@code listAdd}: set a key not written at set-up, {@code update([v])};
 *   <li>{@code listAddAll}: set a set-up key, {@code addAll(100 values)}.
 * </ul>
 *
 * <p>Work check after each iteration: gets found a list every time, each of one element, sampled
 * keys start with their set-up value; the last written key's list ends with what was written.
 *
 * <p>Run: {@code java -jar flink-state-benchmarks/target/benchmarks.jar ListStateBenchmark -p
 * backend=ROCKSDB,LRU_100 -rf json -rff target/jmh-list.json}.
 */
@Fork(
        value = 3,
        jvmArgsAppend = {
            JmhJvmArgs.HEAP,
            JmhJvmArgs.OPEN_UTIL,
            JmhJvmArgs.OPEN_LANG,
            JmhJvmArgs.OPEN_REFLECT,
            JmhJvmArgs.OPEN_IO,
            JmhJvmArgs.OPEN_NIO,
            JmhJvmArgs.OPEN_NIO_CH,
            JmhJvmArgs.OPEN_NET,
            JmhJvmArgs.OPEN_CONCURRENT,
            JmhJvmArgs.OPEN_ATOMIC,
            JmhJvmArgs.OPEN_TIME,
            JmhJvmArgs.OPEN_TEXT,
            JmhJvmArgs.OPEN_MATH
        })
@Warmup(iterations = 10, time = 1)
@Measurement(iterations = 10, time = 1)
public class ListStateBenchmark extends StateBenchmarkBase {

    private final ListStateDescriptor<Long> descriptor =
            new ListStateDescriptor<>("listState", LongSerializer.INSTANCE);
    private ListState<Long> listState;
    private List<Long> dummyList;

    @Setup(Level.Trial)
    public void setUp() {
        createWorkload();
        SplittableRandom random = new SplittableRandom(17);
        dummyList = new ArrayList<>(StateWorkload.LIST_VALUE_COUNT);
        for (int i = 0; i < StateWorkload.LIST_VALUE_COUNT; i++) {
            dummyList.add(random.nextLong());
        }
    }

    @Setup(Level.Iteration)
    public void startIteration() throws Exception {
        openBackend(1);
        listState = fixture.state(descriptor);
        for (long k = 0; k < setupKeyCount; k++) {
            keyed.setCurrentKey(workload.key(k));
            listState.add(StateWorkload.setUpValue(k));
        }
        resetObservations();
    }

    @TearDown(Level.Iteration)
    public void verifyIteration(BenchmarkParams params) throws Exception {
        verify(method(params));
    }

    /**
     * The work check of benchmark {@code method} for the operations since {@link #startIteration}.
     */
    void verify(String method) throws Exception {
        boolean writes = !method.startsWith("listGet");
        checkRanAndWrote(writes);
        check(misses == 0, "%d of %d gets found no list", misses, ops);
        if (method.equals("listGetAndIterate")) {
            check(elements == ops, "iterated %d elements in %d one-element lists", elements, ops);
        }
        if (writes) {
            List<Long> stored = read(lastKey);
            switch (method) {
                case "listUpdate":
                case "listAdd":
                    check(
                            stored.equals(Collections.singletonList(lastValue)),
                            "key %d holds %s, expected [%s]",
                            lastKey,
                            stored,
                            lastValue);
                    break;
                case "listAppend":
                    check(
                            stored.size() >= 2 && stored.get(stored.size() - 1).equals(lastValue),
                            "key %d holds %s, expected to end with %s",
                            lastKey,
                            stored,
                            lastValue);
                    break;
                case "listAddAll":
                    check(
                            stored.size() > dummyList.size()
                                    && stored.subList(
                                                    stored.size() - dummyList.size(), stored.size())
                                            .equals(dummyList),
                            "key %d (%d elements) does not end with the added list",
                            lastKey,
                            stored.size());
                    break;
                default:
                    throw new IllegalStateException("unknown benchmark " + method);
            }
        }
        for (long k : workload.sampleSetUpKeys(SAMPLE_KEYS)) {
            List<Long> stored = read(k);
            if (method.equals("listUpdate")) {
                check(stored.size() == 1, "set-up key %d holds %s", k, stored);
            } else {
                check(
                        !stored.isEmpty() && stored.get(0) == StateWorkload.setUpValue(k),
                        "set-up key %d holds %s",
                        k,
                        stored);
            }
        }
        closeBackend();
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        closeBackend();
    }

    private List<Long> read(long key) throws Exception {
        keyed.setCurrentKey(workload.key(key));
        List<Long> out = new ArrayList<>();
        Iterable<Long> stored = listState.get();
        if (stored != null) {
            stored.forEach(out::add);
        }
        return out;
    }

    @Benchmark
    public void listUpdate() throws Exception {
        workload.next();
        Long key = workload.setUpKey();
        Long value = workload.value();
        keyed.setCurrentKey(key);
        listState.update(Collections.singletonList(value));
        wrote(key, value);
    }

    @Benchmark
    public void listAdd() throws Exception {
        workload.next();
        Long key = workload.newKey();
        Long value = workload.value();
        keyed.setCurrentKey(key);
        listState.update(Collections.singletonList(value));
        wrote(key, value);
    }

    @Benchmark
    public void listAppend() throws Exception {
        workload.next();
        Long key = workload.setUpKey();
        Long value = workload.value();
        keyed.setCurrentKey(key);
        listState.add(value);
        wrote(key, value);
    }

    @Benchmark
    public Iterable<Long> listGet() throws Exception {
        workload.next();
        keyed.setCurrentKey(workload.setUpKey());
        Iterable<Long> list = listState.get();
        ops++;
        if (list == null) {
            misses++;
        }
        return list;
    }

    @Benchmark
    public void listGetAndIterate(Blackhole bh) throws Exception {
        workload.next();
        keyed.setCurrentKey(workload.setUpKey());
        Iterable<Long> list = listState.get();
        ops++;
        if (list == null) {
            misses++;
            return;
        }
        for (Long value : list) {
            bh.consume(value);
            elements++;
        }
    }

    @Benchmark
    public void listAddAll() throws Exception {
        workload.next();
        Long key = workload.setUpKey();
        keyed.setCurrentKey(key);
        listState.addAll(dummyList);
        wrote(key, dummyList);
    }
}
