package io.github.flinkstate.benchmarks.jmh;

import java.util.Objects;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * {@code ValueState<Long>} throughput (ops/ms) per backend, with the operations of
 * flink-benchmarks' {@code ValueStateBenchmark}: 500,000 keys written at set-up, then
 *
 * <ul>
 *   <li>{@code valueGet}: set a set-up key, {@code value()};
 *   <li>{@code valueUpdate}: set a set-up key, {@code update(v)};
 *   <li>{@code valueAdd}: set a key not written at set-up, {@code update(v)}.
 * </ul>
 *
 * <p>Work check after each iteration: gets found a value every time and sampled keys hold their
 * set-up values; the last written key holds the last written value.
 *
 * <p>Run: {@code java -jar flink-state-benchmarks/target/benchmarks.jar ValueStateBenchmark -p
 * backend=ROCKSDB,LRU_100 -rf json -rff target/jmh-value.json}.
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
public class ValueStateBenchmark extends StateBenchmarkBase {

    private ValueState<Long> valueState;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        createWorkload();
        openBackend(1);
        valueState = fixture.state(new ValueStateDescriptor<>("kvState", LongSerializer.INSTANCE));
        for (long k = 0; k < setupKeyCount; k++) {
            keyed.setCurrentKey(workload.key(k));
            valueState.update(StateWorkload.setUpValue(k));
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        closeBackend();
    }

    @Setup(Level.Iteration)
    public void startIteration() {
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
        boolean writes = !method.equals("valueGet");
        checkRanAndWrote(writes);
        check(misses == 0, "%d of %d gets found no value", misses, ops);
        if (writes) {
            keyed.setCurrentKey(workload.key(lastKey));
            Long stored = valueState.value();
            check(
                    Objects.equals(stored, lastValue),
                    "key %d holds %s, last written %s",
                    lastKey,
                    stored,
                    lastValue);
        }
        for (long k : workload.sampleSetUpKeys(SAMPLE_KEYS)) {
            keyed.setCurrentKey(workload.key(k));
            Long stored = valueState.value();
            if (method.equals("valueUpdate")) {
                check(stored != null, "set-up key %d lost its value", k);
            } else {
                check(
                        stored != null && stored == StateWorkload.setUpValue(k),
                        "set-up key %d holds %s",
                        k,
                        stored);
            }
        }
    }

    @Benchmark
    public void valueUpdate() throws Exception {
        workload.next();
        Long key = workload.setUpKey();
        Long value = workload.value();
        keyed.setCurrentKey(key);
        valueState.update(value);
        wrote(key, value);
    }

    @Benchmark
    public void valueAdd() throws Exception {
        workload.next();
        Long key = workload.newKey();
        Long value = workload.value();
        keyed.setCurrentKey(key);
        valueState.update(value);
        wrote(key, value);
    }

    @Benchmark
    public Long valueGet() throws Exception {
        workload.next();
        keyed.setCurrentKey(workload.setUpKey());
        Long value = valueState.value();
        ops++;
        if (value == null) {
            misses++;
        }
        return value;
    }
}
