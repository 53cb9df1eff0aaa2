package io.github.flinkstate.lru.itcase;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.lru.LruCacheOptions;
import io.github.flinkstate.lru.LruCacheStateBackendFactory;
import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.Hang;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import io.github.flinkstate.testing.job.ExactlyOnceJob;
import io.github.flinkstate.testing.job.JobRun;
import io.github.flinkstate.testing.job.Throttle;
import io.github.flinkstate.testing.wait.Waits;
import java.io.File;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.AggregatingState;
import org.apache.flink.api.common.state.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
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
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A canonical savepoint taken while the job keeps running and mutating POJO state in place (a
 * {@code ValueState} POJO changed and written back, and a POJO accumulator changed by its {@code
 * AggregateFunction}) holds the state at the barrier (issue 12, finding 2). The savepoint's file
 * creation is held back by an injected hang until the job has processed thousands of records after
 * the barrier; the savepoint is then restored (by the same backend and by plain HashMap) and the
 * job runs to the end: every key's counts must be exact.
 */
@Timeout(300)
class LruCacheLiveSavepointITCase {

    private static final long RECORDS = 60_000;
    private static final int KEYS = 2_000;

    /** Final counts reported per run id and key: {count from the value, count from the agg}. */
    static final Map<String, Map<Long, long[]>> FINALS = new ConcurrentHashMap<>();

    @TempDir File tmp;

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
        "lru-hashmap:1000000, lru-hashmap:1000000",
        "lru-hashmap:1000000, hashmap",
        "lru-hashmap:100, lru-hashmap:100",
        "lru-rocksdb:1000000, rocksdb"
    })
    void savepointWhileRecordsMutatePojosRestoresExactly(String first, String second)
            throws Exception {
        InjectingFileSystem fs = InjectingFileSystem.shared();
        try (JobRun run = JobRun.start("pojo-savepoint");
                MiniCluster cluster = cluster()) {
            cluster.start();
            FINALS.put(run.id(), new ConcurrentHashMap<>());
            run.throttled(true);
            JobGraph firstJob = jobGraph(run, first, null);
            JobID firstId = cluster.submitJob(firstJob).get().getJobID();
            Waits.until(
                    "the job processed a tenth of the records",
                    Duration.ofMinutes(2),
                    () -> run.emitted() >= RECORDS / 10);

            String savepoint;
            File savepoints = new File(tmp, "savepoints");
            try (Hang hang = fs.hang(FsOp.CREATE, ".*/savepoints/.*")) {
                CompletableFuture<String> pending =
                        cluster.triggerSavepoint(
                                firstId, fs.uri(savepoints), false, SavepointFormatType.CANONICAL);
                Waits.until(
                        "the savepoint's asynchronous part is writing",
                        Duration.ofMinutes(1),
                        () -> hang.blockedCalls() > 0);
                long atBarrier = run.emitted();
                Waits.until(
                        "3,000 records were processed after the barrier",
                        Duration.ofMinutes(1),
                        () -> run.emitted() >= atBarrier + 3_000);
                hang.release();
                savepoint = pending.get(2, TimeUnit.MINUTES);
            }
            cluster.cancelJob(firstId).get();
            cluster.requestJobResult(firstId).get();

            run.throttled(false);
            JobGraph secondJob = jobGraph(run, second, savepoint);
            JobResult result =
                    cluster.submitJob(secondJob)
                            .thenCompose(r -> cluster.requestJobResult(secondJob.getJobID()))
                            .get();
            assertThat(result.isSuccess())
                    .as("resumed job failed: %s", result.getSerializedThrowable())
                    .isTrue();
            Map<Long, long[]> finals = FINALS.remove(run.id());
            assertThat(finals).hasSize(KEYS);
            for (long key = 0; key < KEYS; key++) {
                long expected = RECORDS / KEYS + (key < RECORDS % KEYS ? 1 : 0);
                assertThat(finals.get(key))
                        .as("key %s: value, accumulator", key)
                        .containsExactly(expected, expected);
            }
        } finally {
            fs.heal();
        }
    }

    private static MiniCluster cluster() {
        return new MiniCluster(
                new MiniClusterConfiguration.Builder()
                        .setConfiguration(new Configuration())
                        .setNumTaskManagers(1)
                        .setNumSlotsPerTaskManager(2)
                        .build());
    }

    private JobGraph jobGraph(JobRun run, String backend, String restoreFrom) {
        Configuration config = new Configuration();
        if (backend.startsWith("lru-")) {
            String[] parts = backend.substring(4).split(":");
            config.setString("state.backend.type", LruCacheStateBackendFactory.class.getName());
            config.set(LruCacheOptions.DELEGATE, parts[0]);
            config.set(LruCacheOptions.MAX_ENTRIES_NUM, Integer.parseInt(parts[1]));
        } else {
            config.setString("state.backend.type", backend);
        }
        config.setString("restart-strategy.type", "none");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
        env.setParallelism(1);
        env.setMaxParallelism(128);
        ExactlyOnceJob.source(env, RECORDS)
                .map(Throttle.every(10).whileThrottled().forRun(run.id()))
                .uid("throttle")
                .keyBy(x -> x % KEYS, Types.LONG)
                .process(new PojoCounting(run.id()))
                .uid("pojo-state")
                .sinkTo(new DiscardingSink<>());
        JobGraph graph = env.getStreamGraph().getJobGraph();
        if (restoreFrom != null) {
            graph.setSavepointRestoreSettings(
                    SavepointRestoreSettings.forPath(
                            restoreFrom, false, RecoveryClaimMode.NO_CLAIM));
        }
        return graph;
    }

    /** A mutable POJO (Flink's PojoSerializer). */
    public static class Counter {
        public long count;

        public Counter() {}
    }

    /**
     * Counts per key twice, both by mutating a POJO in place: a value state (read, increment, write
     * back) and an aggregating state whose accumulator is incremented in place. Reports both at the
     * end of input.
     */
    static final class PojoCounting extends KeyedProcessFunction<Long, Long, Long> {
        private static final long serialVersionUID = 1L;
        private final String runId;
        private transient ValueState<Counter> value;
        private transient AggregatingState<Long, Long> accumulated;

        PojoCounting(String runId) {
            this.runId = runId;
        }

        @Override
        public void open(OpenContext openContext) {
            value =
                    getRuntimeContext()
                            .getState(
                                    new ValueStateDescriptor<>(
                                            "value", TypeInformation.of(Counter.class)));
            accumulated =
                    getRuntimeContext()
                            .getAggregatingState(
                                    new AggregatingStateDescriptor<>(
                                            "accumulated",
                                            new CountInPlace(),
                                            TypeInformation.of(Counter.class)));
        }

        @Override
        public void processElement(Long record, Context ctx, Collector<Long> out) throws Exception {
            Counter c = value.value();
            if (c == null) {
                c = new Counter();
                ctx.timerService().registerEventTimeTimer(Long.MAX_VALUE);
            }
            c.count++;
            value.update(c);
            accumulated.add(record);
        }

        @Override
        public void onTimer(long timestamp, OnTimerContext ctx, Collector<Long> out)
                throws Exception {
            Counter c = value.value();
            Long a = accumulated.get();
            FINALS.get(runId)
                    .put(
                            ctx.getCurrentKey(),
                            new long[] {c == null ? 0 : c.count, a == null ? 0 : a});
        }
    }

    /** Increments the accumulator object in place. */
    static final class CountInPlace implements AggregateFunction<Long, Counter, Long> {
        private static final long serialVersionUID = 1L;

        @Override
        public Counter createAccumulator() {
            return new Counter();
        }

        @Override
        public Counter add(Long value, Counter acc) {
            acc.count++;
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
