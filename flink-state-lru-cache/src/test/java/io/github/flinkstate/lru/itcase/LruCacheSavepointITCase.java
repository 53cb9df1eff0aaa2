package io.github.flinkstate.lru.itcase;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.lru.LruCacheOptions;
import io.github.flinkstate.lru.LruCacheStateBackendFactory;
import java.io.File;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.CheckpointListener;
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

/**
 * Real jobs on a MiniCluster, counting per key with exact final counts checked:
 *
 * <ul>
 *   <li>stopped with a canonical savepoint while running, then resumed from it (NO_CLAIM, Flink's
 *       default) at another parallelism and with another backend (LRU cache -> RocksDB/HashMap and
 *       back); the resumed job must complete a checkpoint (the forced full one) before it may
 *       finish;
 *   <li>a failure after a completed checkpoint, recovered from that checkpoint.
 * </ul>
 */
class LruCacheSavepointITCase {

    private static final long RECORDS = 60_000;
    private static final int KEYS = 700;

    /** Largest count per key seen by any run (exact if state moved exactly once). */
    static final Map<Long, Long> MAX_COUNT = new ConcurrentHashMap<>();

    static final AtomicLong PROCESSED = new AtomicLong();
    static final AtomicLong CHECKPOINTS = new AtomicLong();
    static volatile boolean throttle;

    /** Fail once after this many records, once a checkpoint completed; 0 = never. */
    static volatile long failAfter;

    static volatile boolean failed;

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
        failAfter = 0;
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

            // phase 2: resume elsewhere; stay slow until the first checkpoint after the restore
            // (a FULL checkpoint under NO_CLAIM) has completed, then run to the end
            CHECKPOINTS.set(0);
            throttle = false;
            JobGraph second = jobGraph(secondBackend, secondParallelism);
            second.setSavepointRestoreSettings(
                    SavepointRestoreSettings.forPath(savepoint, false, RecoveryClaimMode.NO_CLAIM));
            JobResult result =
                    cluster.submitJob(second)
                            .thenCompose(r -> cluster.requestJobResult(second.getJobID()))
                            .get();
            assertThat(result.isSuccess())
                    .as("resumed job failed: %s", result.getSerializedThrowable())
                    .isTrue();
        }
        assertThat(CHECKPOINTS.get()).isPositive();
        assertThat(MAX_COUNT).isEqualTo(expectedCounts());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"lru:64", "lru:100000"})
    void failureAfterCheckpointRecoversExactly(String backend) throws Exception {
        MAX_COUNT.clear();
        PROCESSED.set(0);
        CHECKPOINTS.set(0);
        failed = false;
        failAfter = RECORDS / 3;
        throttle = true;
        MiniClusterConfiguration mcc =
                new MiniClusterConfiguration.Builder()
                        .setConfiguration(new Configuration())
                        .setNumTaskManagers(1)
                        .setNumSlotsPerTaskManager(2)
                        .build();
        try (MiniCluster cluster = new MiniCluster(mcc)) {
            cluster.start();
            JobGraph job = jobGraph(backend, 2);
            JobResult result =
                    cluster.submitJob(job)
                            .thenCompose(r -> cluster.requestJobResult(job.getJobID()))
                            .get();
            assertThat(result.isSuccess())
                    .as("job failed: %s", result.getSerializedThrowable())
                    .isTrue();
        } finally {
            failAfter = 0;
        }
        assertThat(failed).as("the failure was injected").isTrue();
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
        config.setString(
                "execution.checkpointing.dir", new File(tmp, "checkpoints").toURI().toString());
        config.setString("execution.checkpointing.interval", "100 ms");
        config.setString("restart-strategy.type", "fixed-delay");
        config.setString("restart-strategy.fixed-delay.attempts", "2");
        config.setString("restart-strategy.fixed-delay.delay", "50 ms");
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

    /**
     * Slows a job down while {@link #throttle} is set or while no checkpoint has completed yet, so
     * that savepoints, failures and the first checkpoint after a restore happen mid-stream.
     */
    static final class Throttle implements MapFunction<Long, Long> {
        @Override
        public Long map(Long value) throws Exception {
            if ((throttle || CHECKPOINTS.get() == 0) && value % 20 == 0) {
                Thread.sleep(1);
            }
            return value;
        }
    }

    /** Count per key in a ValueState; records the largest count per key; may fail once. */
    static final class Count extends KeyedProcessFunction<Long, Long, Long>
            implements CheckpointListener {
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
            long processed = PROCESSED.incrementAndGet();
            out.collect(next);
            if (failAfter > 0 && processed >= failAfter && CHECKPOINTS.get() > 0 && !failed) {
                failed = true;
                throw new RuntimeException("Injected failure");
            }
        }

        @Override
        public void notifyCheckpointComplete(long checkpointId) {
            CHECKPOINTS.incrementAndGet();
        }
    }
}
