package io.github.flinkstate.changelog;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.testing.job.ExactlyOnceJob;
import io.github.flinkstate.testing.job.KeyFunction;
import io.github.flinkstate.testing.job.Throttle;
import io.github.flinkstate.testing.wait.Waits;
import java.io.File;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.StateChangelogOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.checkpoint.CompletedCheckpointStats;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.FileUtils;
import org.apache.flink.util.TernaryBoolean;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * NO_CLAIM resumes of a changelog job (Flink's default claim mode) on a MiniCluster, in three runs
 * of the same job (count per key):
 *
 * <ol>
 *   <li>changelog on (our factory, {@code dfs-batched} DSTL, periodic materialization); ended by
 *       cancellation with a retained checkpoint, or by a native savepoint;
 *   <li>resumed from it in NO_CLAIM mode (set in the job configuration): the factory turns
 *       changelog off, Flink replays the changelog into the delegate, the delegate takes the forced
 *       full checkpoint and further ones; cancelled with a retained checkpoint. Then the first
 *       run's checkpoint (or savepoint) and its DSTL files are deleted;
 *   <li>resumed from the second run's checkpoint in CLAIM mode: changelog is on again; runs to the
 *       end.
 * </ol>
 *
 * <p>Check: every key's results are exact (the shared kit's {@link ExactlyOnceJob}: value, list,
 * map, reducing and aggregating state and a timer per key; nothing lost or applied twice across two
 * restores) and the JobManager reports changelog on, off, on for the three runs.
 */
class ChangelogNoClaimResumeITCase {

    private static final long RECORDS = 50_000;
    private static final Duration WAIT = Duration.ofMinutes(1);

    @TempDir File tmp;

    @ParameterizedTest(name = "from={0}, delegate={1}")
    @CsvSource({"checkpoint,rocksdb", "savepoint,hashmap"})
    void noClaimResumeRunsWithChangelogOff_thenClaimResumeTurnsItOnAgain(
            String from, String delegate) throws Exception {
        File dstl = new File(tmp, "dstl");
        File checkpoints = new File(tmp, "checkpoints");
        Configuration cluster = clusterConfig(dstl, checkpoints);
        MiniClusterConfiguration mcc =
                new MiniClusterConfiguration.Builder()
                        .setConfiguration(cluster)
                        .setNumTaskManagers(1)
                        .setNumSlotsPerTaskManager(2)
                        .build();
        try (MiniCluster miniCluster = new MiniCluster(mcc);
                ExactlyOnceJob job =
                        ExactlyOnceJob.builder(RECORDS)
                                .keys(KeyFunction.modulo(50))
                                .throttle(Throttle.every(1).whileThrottled())
                                .name("no-claim-" + from)
                                .build()) {
            miniCluster.start();

            // run 1: changelog on
            job.run().throttled(true);
            JobID firstId =
                    miniCluster
                            .submitJob(jobGraph(job, cluster, delegate, null, null))
                            .get()
                            .getJobID();
            awaitCheckpoints(miniCluster, firstId, 3);
            Waits.until("first run processed", WAIT, () -> job.run().processed() >= 3_000);
            assertThat(changelogEnabled(miniCluster, firstId)).isEqualTo(TernaryBoolean.TRUE);
            String restorePath;
            File oldState;
            if (from.equals("savepoint")) {
                restorePath =
                        miniCluster
                                .triggerSavepoint(
                                        firstId,
                                        new Path(new File(tmp, "savepoints").toURI()).toString(),
                                        true,
                                        SavepointFormatType.NATIVE)
                                .get(1, TimeUnit.MINUTES);
                awaitStatus(miniCluster, firstId, JobStatus.CANCELED);
                oldState = new File(new Path(restorePath).toUri().getPath());
            } else {
                restorePath = cancelWithRetainedCheckpoint(miniCluster, firstId);
                oldState = new File(checkpoints, firstId.toHexString());
            }
            assertThat(job.run().emitted()).isLessThan(RECORDS);

            // run 2: NO_CLAIM resume, changelog off, full checkpoint by the delegate
            long processed = job.run().processed();
            JobID secondId =
                    miniCluster
                            .submitJob(
                                    jobGraph(
                                            job,
                                            cluster,
                                            delegate,
                                            restorePath,
                                            RecoveryClaimMode.NO_CLAIM))
                            .get()
                            .getJobID();
            awaitCheckpoints(miniCluster, secondId, 2);
            Waits.until(
                    "second run processed", WAIT, () -> job.run().processed() >= processed + 2_000);
            assertThat(changelogEnabled(miniCluster, secondId)).isEqualTo(TernaryBoolean.FALSE);
            String secondCheckpoint = cancelWithRetainedCheckpoint(miniCluster, secondId);

            // NO_CLAIM: the second run's checkpoints need nothing of the first run
            FileUtils.deleteDirectory(oldState);
            FileUtils.deleteDirectory(new File(dstl, firstId.toHexString()));

            // run 3: CLAIM resume, changelog on again, to the end of the input
            job.run().throttled(false);
            JobGraph third =
                    jobGraph(job, cluster, delegate, secondCheckpoint, RecoveryClaimMode.CLAIM);
            long before = job.run().processed();
            JobResult result =
                    miniCluster
                            .submitJob(third)
                            .thenCompose(r -> miniCluster.requestJobResult(third.getJobID()))
                            .get(2, TimeUnit.MINUTES);
            assertThat(result.isSuccess())
                    .as("third run failed: %s", result.getSerializedThrowable())
                    .isTrue();
            assertThat(job.run().processed() - before)
                    .as("records of the resumed run: it started where the restored state ends")
                    .isLessThan(RECORDS);
            assertThat(changelogEnabled(miniCluster, third.getJobID()))
                    .isEqualTo(TernaryBoolean.TRUE);
            job.check().assertExact();
        }
    }

    private static TernaryBoolean changelogEnabled(MiniCluster cluster, JobID id) throws Exception {
        return cluster.getExecutionGraph(id).get().isChangelogStateBackendEnabled();
    }

    private static void awaitCheckpoints(MiniCluster cluster, JobID id, long count)
            throws Exception {
        Waits.untilChecked(
                count + " completed checkpoints of job " + id,
                WAIT,
                () -> {
                    AccessExecutionGraph graph = cluster.getExecutionGraph(id).get();
                    if (graph.getState().isGloballyTerminalState()) {
                        throw new AssertionError("job " + id + " ended early: " + graph.getState());
                    }
                    return graph.getCheckpointStatsSnapshot()
                                    .getCounts()
                                    .getNumberOfCompletedCheckpoints()
                            >= count;
                });
    }

    private static void awaitStatus(MiniCluster cluster, JobID id, JobStatus status)
            throws Exception {
        Waits.untilChecked(
                "job " + id + " " + status, WAIT, () -> cluster.getJobStatus(id).get() == status);
    }

    private static String cancelWithRetainedCheckpoint(MiniCluster cluster, JobID id)
            throws Exception {
        cluster.cancelJob(id).get(1, TimeUnit.MINUTES);
        awaitStatus(cluster, id, JobStatus.CANCELED);
        CompletedCheckpointStats latest =
                cluster.getExecutionGraph(id)
                        .get()
                        .getCheckpointStatsSnapshot()
                        .getHistory()
                        .getLatestCompletedCheckpoint();
        assertThat(latest).as("a retained checkpoint of job %s", id).isNotNull();
        return latest.getExternalPath();
    }

    private static Configuration clusterConfig(File dstl, File checkpoints) {
        Configuration config = new Configuration();
        config.set(StateBackendOptions.STATE_BACKEND, ChangelogStateBackendFactory.class.getName());
        config.set(StateChangelogOptions.STATE_CHANGE_LOG_STORAGE, "dfs-batched");
        config.set(DfsChangelogOptions.BASE_PATH, new Path(dstl.toURI()).toString());
        config.set(StateChangelogOptions.PERIODIC_MATERIALIZATION_INTERVAL, Duration.ofMillis(300));
        config.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofMillis(100));
        config.setString(
                "execution.checkpointing.externalized-checkpoint-retention",
                "RETAIN_ON_CANCELLATION");
        config.set(
                CheckpointingOptions.CHECKPOINTS_DIRECTORY,
                new Path(checkpoints.toURI()).toString());
        config.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
        return config;
    }

    /** The job; the restore options go into its configuration, where the factory sees them. */
    private static JobGraph jobGraph(
            ExactlyOnceJob job,
            Configuration cluster,
            String delegate,
            String restorePath,
            RecoveryClaimMode mode) {
        Configuration config = new Configuration(cluster);
        config.set(DfsChangelogOptions.DELEGATE, delegate);
        if (restorePath != null) {
            config.set(StateRecoveryOptions.SAVEPOINT_PATH, restorePath);
            config.set(StateRecoveryOptions.RESTORE_MODE, mode);
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
        env.setParallelism(2);
        env.setMaxParallelism(128);
        job.addTo(env);
        JobGraph graph = env.getStreamGraph().getJobGraph();
        if (restorePath != null) {
            assertThat(graph.getSavepointRestoreSettings().getRestorePath()).isEqualTo(restorePath);
            assertThat(graph.getSavepointRestoreSettings().getRecoveryClaimMode()).isEqualTo(mode);
        }
        return graph;
    }
}
