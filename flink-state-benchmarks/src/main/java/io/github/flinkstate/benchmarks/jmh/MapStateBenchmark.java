package io.github.flinkstate.benchmarks.jmh;

import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Objects;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeutils.base.DoubleSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.Blackhole;

/**
 * {@code MapState<Long, Double>} throughput (ops/ms) per backend, with the operations of
 * flink-benchmarks' {@code MapStateBenchmark}: 500,000 keys with 10 user keys each written at
 * set-up, then (each on a set-up key unless noted)
 *
 * <ul>
 *   <li>{@code mapGet}, {@code mapContains} (of {@code userKey << 1}: half present), {@code
 *       mapIsEmpty};
 *   <li>{@code mapKeys}, {@code mapValues}, {@code mapEntries}, {@code mapIterator}: iterate the 10
 *       entries; the score counts entries ({@code @OperationsPerInvocation(10)});
 *   <li>{@code mapUpdate}: {@code put} of an existing user key; {@code mapAdd}: {@code put} on a
 *       key not written at set-up; {@code mapRemove}; {@code mapPutAll} of 10 entries.
 * </ul>
 *
 * <p>The LRU variants are sized in entries per user key (5,000,000 entries is the working set).
 *
 * <p>Work check after each iteration: every get found its value, every {@code contains} answer was
 * right, no map was empty, iterations saw exactly 10 entries per map, sampled keys still hold their
 * set-up entries (unless the benchmark overwrites or removes them), and the last write or remove is
 * visible.
 *
 * <p>Run: {@code java -jar flink-state-benchmarks/target/benchmarks.jar MapStateBenchmark -p
 * backend=ROCKSDB,LRU_100 -rf json -rff target/jmh-map.json}.
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
public class MapStateBenchmark extends StateBenchmarkBase {

    private static final int MAP_KEY_COUNT = StateWorkload.MAP_KEY_COUNT;

    private MapState<Long, Double> mapState;
    private Map<Long, Double> dummyMap;
    private long wrongAnswers;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        createWorkload();
        openBackend(MAP_KEY_COUNT);
        mapState =
                fixture.state(
                        new MapStateDescriptor<>(
                                "mapState", LongSerializer.INSTANCE, DoubleSerializer.INSTANCE));
        long[] mapKeys = workload.allMapKeys();
        dummyMap = new HashMap<>();
        for (long mk : mapKeys) {
            dummyMap.put(mk, -1.0 - mk);
        }
        for (long k = 0; k < setupKeyCount; k++) {
            keyed.setCurrentKey(workload.key(k));
            for (long mk : mapKeys) {
                mapState.put(mk, StateWorkload.setUpMapValue(k, mk));
            }
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        closeBackend();
    }

    @Setup(Level.Iteration)
    public void startIteration() {
        resetObservations();
        wrongAnswers = 0;
    }

    @TearDown(Level.Iteration)
    public void verifyIteration(BenchmarkParams params) throws Exception {
        verify(method(params));
    }

    /**
     * The work check of benchmark {@code method} for the operations since {@link #startIteration}.
     */
    void verify(String method) throws Exception {
        boolean writes =
                method.equals("mapUpdate")
                        || method.equals("mapAdd")
                        || method.equals("mapRemove")
                        || method.equals("mapPutAll");
        checkRanAndWrote(writes);
        check(misses == 0, "%d of %d reads found nothing", misses, ops);
        check(wrongAnswers == 0, "%d of %d answers were wrong", wrongAnswers, ops);
        if (method.equals("mapKeys")
                || method.equals("mapValues")
                || method.equals("mapEntries")
                || method.equals("mapIterator")) {
            check(
                    elements == ops * MAP_KEY_COUNT,
                    "iterated %d entries in %d maps of %d",
                    elements,
                    ops,
                    MAP_KEY_COUNT);
        }
        if (writes) {
            keyed.setCurrentKey(workload.key(lastKey));
            switch (method) {
                case "mapUpdate":
                case "mapAdd":
                    Double stored = mapState.get((Long) lastMapKey);
                    check(
                            Objects.equals(stored, lastValue),
                            "key %d/%s holds %s, last written %s",
                            lastKey,
                            lastMapKey,
                            stored,
                            lastValue);
                    break;
                case "mapRemove":
                    check(
                            !mapState.contains((Long) lastMapKey),
                            "key %d/%s still present after remove",
                            lastKey,
                            lastMapKey);
                    break;
                case "mapPutAll":
                    for (Map.Entry<Long, Double> e : dummyMap.entrySet()) {
                        check(
                                Objects.equals(mapState.get(e.getKey()), e.getValue()),
                                "key %d/%d misses putAll's value",
                                lastKey,
                                e.getKey());
                    }
                    break;
                default:
                    throw new IllegalStateException("unknown benchmark " + method);
            }
        }
        if (!method.equals("mapRemove")) {
            for (long k : workload.sampleSetUpKeys(SAMPLE_KEYS)) {
                keyed.setCurrentKey(workload.key(k));
                int size = 0;
                for (Map.Entry<Long, Double> e : mapState.entries()) {
                    size++;
                    boolean overwritten = method.equals("mapUpdate") || method.equals("mapPutAll");
                    check(
                            overwritten
                                    || e.getValue() == StateWorkload.setUpMapValue(k, e.getKey()),
                            "set-up key %d/%d holds %s",
                            k,
                            e.getKey(),
                            e.getValue());
                }
                check(size == MAP_KEY_COUNT, "set-up key %d has %d entries", k, size);
            }
        }
    }

    @Benchmark
    public void mapUpdate() throws Exception {
        workload.next();
        Long key = workload.setUpKey();
        Long mapKey = workload.mapKey();
        Double value = (double) workload.value();
        keyed.setCurrentKey(key);
        mapState.put(mapKey, value);
        wrote(key, mapKey, value);
    }

    @Benchmark
    public void mapAdd() throws Exception {
        workload.next();
        Long key = workload.newKey();
        Long mapKey = workload.mapKey();
        Double value = (double) workload.value();
        keyed.setCurrentKey(key);
        mapState.put(mapKey, value);
        wrote(key, mapKey, value);
    }

    @Benchmark
    public Double mapGet() throws Exception {
        workload.next();
        keyed.setCurrentKey(workload.setUpKey());
        Double value = mapState.get(workload.mapKey());
        ops++;
        if (value == null) {
            misses++;
        }
        return value;
    }

    @Benchmark
    public boolean mapContains() throws Exception {
        workload.next();
        keyed.setCurrentKey(workload.setUpKey());
        long probe = workload.mapKey() << 1;
        boolean contained = mapState.contains(probe);
        ops++;
        if (contained != (probe < MAP_KEY_COUNT)) {
            wrongAnswers++;
        }
        return contained;
    }

    @Benchmark
    public boolean mapIsEmpty() throws Exception {
        workload.next();
        keyed.setCurrentKey(workload.setUpKey());
        boolean empty = mapState.isEmpty();
        ops++;
        if (empty) {
            wrongAnswers++;
        }
        return empty;
    }

    @Benchmark
    @OperationsPerInvocation(MAP_KEY_COUNT)
    public void mapKeys(Blackhole bh) throws Exception {
        workload.next();
        keyed.setCurrentKey(workload.setUpKey());
        for (Long key : mapState.keys()) {
            bh.consume(key);
            elements++;
        }
        ops++;
    }

    @Benchmark
    @OperationsPerInvocation(MAP_KEY_COUNT)
    public void mapValues(Blackhole bh) throws Exception {
        workload.next();
        keyed.setCurrentKey(workload.setUpKey());
        for (Double value : mapState.values()) {
            bh.consume(value);
            elements++;
        }
        ops++;
    }

    @Benchmark
    @OperationsPerInvocation(MAP_KEY_COUNT)
    public void mapEntries(Blackhole bh) throws Exception {
        workload.next();
        keyed.setCurrentKey(workload.setUpKey());
        for (Map.Entry<Long, Double> entry : mapState.entries()) {
            bh.consume(entry.getKey());
            bh.consume(entry.getValue());
            elements++;
        }
        ops++;
    }

    @Benchmark
    @OperationsPerInvocation(MAP_KEY_COUNT)
    public void mapIterator(Blackhole bh) throws Exception {
        workload.next();
        keyed.setCurrentKey(workload.setUpKey());
        Iterator<Map.Entry<Long, Double>> iterator = mapState.iterator();
        while (iterator.hasNext()) {
            Map.Entry<Long, Double> entry = iterator.next();
            bh.consume(entry.getKey());
            bh.consume(entry.getValue());
            elements++;
        }
        ops++;
    }

    @Benchmark
    public void mapRemove() throws Exception {
        workload.next();
        Long key = workload.setUpKey();
        Long mapKey = workload.mapKey();
        keyed.setCurrentKey(key);
        mapState.remove(mapKey);
        wrote(key, mapKey, null); // a removal: the check expects no value
    }

    @Benchmark
    public void mapPutAll() throws Exception {
        workload.next();
        Long key = workload.setUpKey();
        keyed.setCurrentKey(key);
        mapState.putAll(dummyMap);
        wrote(key, dummyMap);
    }
}
