package io.github.flinkstate.lru.itcase;

import io.github.flinkstate.lru.LruCacheOptions;
import io.github.flinkstate.lru.LruCacheStateBackendFactory;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.Collector;

import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.File;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Real jobs on a MiniCluster: a job counting per key is stopped with a canonical savepoint while
 * running, then resumed from it at another parallelism and with another backend (LRU cache ->
 * RocksDB/HashMap and back). The final count of every key must be exact.
 */
class LruCacheSavepointITCase {

    private static final long RECORDS = 60_000;
    private static final int KEYS = 700;

    /** Largest count per key seen by any run (exact if state moved exactly once). */
    static final Map<Long, Long> MAX_COUNT = new ConcurrentHashMap<>();
    static final AtomicLong PROCESSED = new AtomicLong();
    static volatile boolean throttle;

    @TempDir File tmp;

    @ParameterizedTest(name = "{0} (p={1}) -> {2} (p={3})")
    @CsvSource({
        "lru:64, 2, rocksdb, 3",
        "lru:100000, 2, hashmap, 1",
        "rocksdb, 2, lru:50, 3",
        "hashmap, 3, lru:100000, 2"
    })
    void canonicalSavepointMovesStateBetweenBackendsAndParallelisms(
            String firstBackend, int firstParallelism, String secondBackend, int secondParallelism)
            throws Exception {
        MAX_COUNT.clear();
        PROCESSED.set(0);
        Configuration clusterConfig = new Configuration();
        MiniClusterConfiguration mcc =
                new MiniClusterConfiguration.Builder()
                        .setConfiguration(clusterConfig)
                        .setNumTaskManagers(1)
                        .setNumSlotsPerTaskManager(3)
                        .build();
        try (MiniCluster cluster = new MiniCluster(mcc)) {
            cluster.start();

            // phase 1: run slowly, stop with a canonical savepoint part way through
            throttle = true;
            JobGraph first = jobGraph(firstBackend, firstParallelism);
            JobID firstId = cluster.submitJob(first).get().getJobID();
            while (PROCESSED.get() < RECORDS / 5) {
                Thread.sleep(20);
            }
            String savepoint =
                    cluster.stopWithSavepoint(
                                    firstId,
                                    new File(tmp, "savepoints").toURI().toString(),
                                    false,
                                    SavepointFormatType.CANONICAL)
                            .get();
            cluster.requestJobResult(firstId).get();
            assertThat(PROCESSED.get()).isLessThan(RECORDS);

            // phase 2: resume elsewhere and run to the end
            throttle = false;
            JobGraph second = jobGraph(secondBackend, secondParallelism);
            second.setSavepointRestoreSettings(
                    SavepointRestoreSettings.forPath(savepoint, false, RecoveryClaimMode.NO_CLAIM));
            JobResult result = cluster.submitJob(second).thenCompose(r -> cluster.requestJobResult(second.getJobID())).get();
            assertThat(result.isSuccess())
                    .as("resumed job failed: %s", result.getSerializedThrowable())
                    .isTrue();
        }
        assertThat(MAX_COUNT).isEqualTo(expectedCounts());
    }

    private JobGraph jobGraph(String backend, int parallelism) {
        Configuration config = new Configuration();
        if (backend.startsWith("lru:")) {
            config.setString("state.backend.type", LruCacheStateBackendFactory.class.getName());
            config.set(LruCacheOptions.MAX_ENTRIES_NUM, Integer.parseInt(backend.substring(4)));
        } else {
            config.setString("state.backend.type", backend);
        }
        config.setString("execution.checkpointing.incremental", "true");
        config.setString("execution.checkpointing.dir", new File(tmp, "checkpoints").toURI().toString());
        config.setString("execution.checkpointing.interval", "100 ms");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
        env.setParallelism(parallelism);
        env.setMaxParallelism(128);
        env.fromSequence(0, RECORDS - 1)
                .uid("source")
                .map(new Throttle())
                .uid("throttle")
                .keyBy(x -> x % KEYS, Types.LONG)
                .process(new Count())
                .uid("count")
                .sinkTo(new DiscardingSink<>());
        return env.getStreamGraph().getJobGraph();
    }

    private static Map<Long, Long> expectedCounts() {
        Map<Long, Long> expected = new HashMap<>();
        for (long x = 0; x < RECORDS; x++) {
            expected.merge(x % KEYS, 1L, Long::sum);
        }
        return expected;
    }

    /** Slows the first phase down so that it is still running when the savepoint is taken. */
    static final class Throttle implements MapFunction<Long, Long> {
        @Override
        public Long map(Long value) throws Exception {
            if (throttle && value % 20 == 0) {
                Thread.sleep(1);
            }
            return value;
        }
    }

    /** Count per key in a ValueState; records the largest count per key. */
    static final class Count extends KeyedProcessFunction<Long, Long, Long> {
        private transient ValueState<Long> count;

        @Override
        public void open(OpenContext openContext) {
            count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Long.class));
        }

        @Override
        public void processElement(Long value, Context ctx, Collector<Long> out) throws Exception {
            Long c = count.value();
            long next = c == null ? 1 : c + 1;
            count.update(next);
            MAX_COUNT.merge(ctx.getCurrentKey(), next, Math::max);
            PROCESSED.incrementAndGet();
            out.collect(next);
        }
    }
}
