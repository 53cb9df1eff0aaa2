package io.github.flinkstate.changelog;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.testing.job.ExactlyOnceJob;
import io.github.flinkstate.testing.job.KeyFunction;
import io.github.flinkstate.testing.job.Throttle;
import io.github.flinkstate.testing.wait.Waits;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Collections;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
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
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A real job with Flink's changelog backend on our {@code dfs-batched} DSTL: while it runs,
 * periodic materialization happens and log files written before it are deleted afterwards (no
 * leak); the job is then cancelled and resumed from its last retained checkpoint at parallelism 1
 * (rescale 2 -> 1), and every key's results are exact (the shared kit's {@link ExactlyOnceJob}).
 */
class ChangelogDfsBatchedRescaleITCase {

    private static final long RECORDS = 40_000;
    private static final Duration WAIT = Duration.ofMinutes(1);

    @TempDir File tmp;

    @ParameterizedTest(name = "delegate={0}")
    @ValueSource(strings = {"hashmap", "rocksdb"})
    void materializationDeletesOldLogFilesAndRescaleTwoToOneIsExact(String delegate)
            throws Exception {
        File dstl = new File(tmp, "dstl");
        MiniClusterConfiguration mcc =
                new MiniClusterConfiguration.Builder()
                        .setConfiguration(config(delegate, dstl))
                        .setNumTaskManagers(1)
                        .setNumSlotsPerTaskManager(2)
                        .build();
        try (MiniCluster cluster = new MiniCluster(mcc);
                ExactlyOnceJob job =
                        ExactlyOnceJob.builder(RECORDS)
                                .keys(KeyFunction.modulo(100))
                                .throttle(Throttle.every(1).whileThrottled())
                                .name("dstl-rescale-" + delegate)
                                .build()) {
            cluster.start();

            // phase 1: parallelism 2, slow; watch the log files across several materializations
            job.run().throttled(true);
            JobGraph first = jobGraph(job, delegate, dstl, 2);
            JobID firstId = cluster.submitJob(first).get().getJobID();
            Waits.until("2000 records processed", WAIT, () -> job.run().processed() >= 2_000);
            Waits.until(
                    "log files written",
                    WAIT,
                    () -> logFiles(dstl) != null && !logFiles(dstl).isEmpty());
            Set<String> early = logFiles(dstl);
            // materialization runs every 300 ms; give it several rounds plus checkpoint subsumption
            Waits.until(
                    "log files written before materialization are deleted afterwards",
                    Duration.ofSeconds(30),
                    () -> {
                        Set<String> now = logFiles(dstl);
                        return now != null && Collections.disjoint(now, early);
                    });

            // cancel and resume from the last retained checkpoint at parallelism 1
            cluster.cancelJob(firstId).get(1, TimeUnit.MINUTES);
            Waits.untilChecked(
                    "the first job is cancelled",
                    WAIT,
                    () -> cluster.getJobStatus(firstId).get() == JobStatus.CANCELED);
            CompletedCheckpointStats latest =
                    cluster.getExecutionGraph(firstId)
                            .get()
                            .getCheckpointStatsSnapshot()
                            .getHistory()
                            .getLatestCompletedCheckpoint();
            assertThat(latest).isNotNull();
            assertThat(job.run().emitted()).isLessThan(RECORDS);

            job.run().throttled(false);
            JobGraph second = jobGraph(job, delegate, dstl, 1);
            second.setSavepointRestoreSettings(
                    SavepointRestoreSettings.forPath(
                            latest.getExternalPath(), false, RecoveryClaimMode.CLAIM));
            long before = job.run().processed();
            JobResult result =
                    cluster.submitJob(second)
                            .thenCompose(r -> cluster.requestJobResult(second.getJobID()))
                            .get(2, TimeUnit.MINUTES);
            assertThat(result.isSuccess())
                    .as("resumed job failed: %s", result.getSerializedThrowable())
                    .isTrue();
            assertThat(job.run().processed() - before)
                    .as("records of the resumed run: it started where the restored state ends")
                    .isLessThan(RECORDS);
            job.check().assertExact();
        }
    }

    /** The log files under {@code dstl}, or null if a file vanished during the walk. */
    private static Set<String> logFiles(File dstl) {
        if (!dstl.exists()) {
            return Set.of();
        }
        try (Stream<java.nio.file.Path> files = Files.walk(dstl.toPath())) {
            return files.filter(Files::isRegularFile)
                    .map(java.nio.file.Path::toString)
                    .collect(Collectors.toSet());
        } catch (IOException | UncheckedIOException e) {
            return null; // a file deleted during the walk: unknown, look again
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

    private JobGraph jobGraph(ExactlyOnceJob job, String delegate, File dstl, int parallelism) {
        StreamExecutionEnvironment env =
                StreamExecutionEnvironment.getExecutionEnvironment(config(delegate, dstl));
        env.setParallelism(parallelism);
        env.setMaxParallelism(128);
        job.addTo(env);
        return env.getStreamGraph().getJobGraph();
    }
}
