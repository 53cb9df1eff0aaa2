package io.github.flinkstate.changelog;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.StateChangelogOptions;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.checkpoint.CompletedCheckpointStats;
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
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A real job with Flink's changelog backend on our {@code dfs-batched} DSTL: while it runs,
 * periodic materialization happens and log files written before it are deleted afterwards (no
 * leak); the job is then cancelled and resumed from its last retained checkpoint at parallelism 1
 * (rescale 2 -> 1), and every key's final count is exact.
 */
class ChangelogDfsBatchedRescaleITCase {

    private static final long RECORDS = 40_000;
    private static final int KEYS = 100;

    static final Map<Long, Long> MAX_COUNT = new ConcurrentHashMap<>();
    static final AtomicLong PROCESSED = new AtomicLong();
    static volatile boolean throttle;

    @TempDir File tmp;

    @ParameterizedTest(name = "delegate={0}")
    @ValueSource(strings = {"hashmap", "rocksdb"})
    void materializationDeletesOldLogFilesAndRescaleTwoToOneIsExact(String delegate)
            throws Exception {
        MAX_COUNT.clear();
        PROCESSED.set(0);
        File dstl = new File(tmp, "dstl");
        MiniClusterConfiguration mcc =
                new MiniClusterConfiguration.Builder()
                        .setConfiguration(config(delegate, dstl))
                        .setNumTaskManagers(1)
                        .setNumSlotsPerTaskManager(2)
                        .build();
        try (MiniCluster cluster = new MiniCluster(mcc)) {
            cluster.start();

            // phase 1: parallelism 2, slow; watch the log files across several materializations
            throttle = true;
            JobGraph first = jobGraph(delegate, dstl, 2);
            JobID firstId = cluster.submitJob(first).get().getJobID();
            while (PROCESSED.get() < 2_000) {
                Thread.sleep(20);
            }
            Thread.sleep(1_000);
            Set<String> early = logFiles(dstl);
            assertThat(early).as("the DSTL wrote log files").isNotEmpty();
            // materialization runs every 300 ms; give it several rounds plus checkpoint subsumption
            long deadline = System.currentTimeMillis() + 30_000;
            while (System.currentTimeMillis() < deadline
                    && !Collections.disjoint(logFiles(dstl), early)) {
                Thread.sleep(200);
            }
            assertThat(logFiles(dstl))
                    .as("log files written before materialization are deleted afterwards")
                    .doesNotContainAnyElementsOf(early);

            // cancel and resume from the last retained checkpoint at parallelism 1
            CompletedCheckpointStats latest =
                    cluster.getExecutionGraph(firstId)
                            .get()
                            .getCheckpointStatsSnapshot()
                            .getHistory()
                            .getLatestCompletedCheckpoint();
            assertThat(latest).isNotNull();
            cluster.cancelJob(firstId).get();
            while (cluster.getJobStatus(firstId).get() != JobStatus.CANCELED) {
                Thread.sleep(20);
            }
            String checkpoint =
                    cluster.getExecutionGraph(firstId)
                            .get()
                            .getCheckpointStatsSnapshot()
                            .getHistory()
                            .getLatestCompletedCheckpoint()
                            .getExternalPath();
            assertThat(PROCESSED.get()).isLessThan(RECORDS);

            throttle = false;
            JobGraph second = jobGraph(delegate, dstl, 1);
            second.setSavepointRestoreSettings(
                    SavepointRestoreSettings.forPath(checkpoint, false, RecoveryClaimMode.CLAIM));
            JobResult result =
                    cluster.submitJob(second)
                            .thenCompose(r -> cluster.requestJobResult(second.getJobID()))
                            .get();
            assertThat(result.isSuccess())
                    .as("resumed job failed: %s", result.getSerializedThrowable())
                    .isTrue();
        }
        Map<Long, Long> expected = new HashMap<>();
        for (long x = 0; x < RECORDS; x++) {
            expected.merge(x % KEYS, 1L, Long::sum);
        }
        assertThat(MAX_COUNT).isEqualTo(expected);
    }

    private static Set<String> logFiles(File dstl) throws IOException {
        if (!dstl.exists()) {
            return Set.of();
        }
        try (Stream<java.nio.file.Path> files = Files.walk(dstl.toPath())) {
            return files.filter(Files::isRegularFile)
                    .map(java.nio.file.Path::toString)
                    .collect(Collectors.toSet());
        }
    }

    private Configuration config(String delegate, File dstl) {
        Configuration config = new Configuration();
        config.set(StateBackendOptions.STATE_BACKEND, ChangelogStateBackendFactory.class.getName());
        config.set(DfsChangelogOptions.DELEGATE, delegate);
        config.set(StateChangelogOptions.STATE_CHANGE_LOG_STORAGE, "dfs-batched");
        config.set(DfsChangelogOptions.BASE_PATH, new Path(dstl.toURI()).toString());
        config.set(StateChangelogOptions.PERIODIC_MATERIALIZATION_INTERVAL, Duration.ofMillis(300));
        config.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofMillis(100));
        config.setString(
                "execution.checkpointing.externalized-checkpoint-retention",
                "RETAIN_ON_CANCELLATION");
        config.set(
                CheckpointingOptions.CHECKPOINTS_DIRECTORY,
                new Path(new File(tmp, "checkpoints").toURI()).toString());
        return config;
    }

    private JobGraph jobGraph(String delegate, File dstl, int parallelism) {
        StreamExecutionEnvironment env =
                StreamExecutionEnvironment.getExecutionEnvironment(config(delegate, dstl));
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

    /** Slows the first job down so that it is still running after several materializations. */
    static final class Throttle implements MapFunction<Long, Long> {
        @Override
        public Long map(Long value) throws Exception {
            if (throttle && value % 10 == 0) {
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
