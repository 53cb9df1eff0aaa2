package io.github.flinkstate.disagg.itcase;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.DisaggregatedStateBackendFactory;
import io.github.flinkstate.testing.job.ExactlyOnceJob;
import io.github.flinkstate.testing.job.KeyFunction;
import io.github.flinkstate.testing.job.Throttle;
import io.github.flinkstate.testing.wait.Waits;
import java.io.File;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real jobs on a MiniCluster with {@code state.backend.type:
 * io.github.flinkstate.disagg.DisaggregatedStateBackendFactory} and no other backend option (the
 * primary directory defaults to a folder under the checkpoint directory), built with the shared
 * kit's {@link ExactlyOnceJob} (value, list, map, reducing and aggregating state plus a timer per
 * key, checked exactly against the input):
 *
 * <ul>
 *   <li>a failure after a completed checkpoint, recovered from that checkpoint;
 *   <li>a rescale chain 2 -> 1 -> 3 through native savepoints, each resumed in NO_CLAIM mode (the
 *       first checkpoint after each restore is Flink's forced full checkpoint).
 * </ul>
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class DisaggregatedITCase {

    private static final long RECORDS = 40_000;
    private static final int KEYS = 500;

    @TempDir File tmp;

    @Test
    void failureAfterCheckpointRecoversExactly() throws Exception {
        try (ExactlyOnceJob job =
                        ExactlyOnceJob.builder(RECORDS)
                                .keys(KeyFunction.modulo(KEYS))
                                .throttle(Throttle.every(20).whileThrottled())
                                .failOnceAfter(RECORDS / 3)
                                .name("disagg-failure")
                                .build();
                MiniCluster cluster = cluster(2)) {
            cluster.start();
            job.run().throttled(true);
            JobGraph graph = jobGraph(job, 2);
            JobResult result =
                    cluster.submitJob(graph)
                            .thenCompose(r -> cluster.requestJobResult(graph.getJobID()))
                            .get();
            assertThat(result.isSuccess())
                    .as("job failed: %s", result.getSerializedThrowable())
                    .isTrue();
            assertThat(job.run().failed()).as("the failure was injected").isTrue();
            job.check().assertExact();
        }
    }

    @Test
    void rescaleChain_2_1_3_throughNativeSavepoints() throws Exception {
        try (ExactlyOnceJob job =
                        ExactlyOnceJob.builder(RECORDS)
                                .keys(KeyFunction.modulo(KEYS))
                                .throttle(Throttle.every(20).whileThrottled().untilCheckpoints(1))
                                .name("disagg-rescale")
                                .build();
                MiniCluster cluster = cluster(3)) {
            cluster.start();
            job.run().throttled(true);
            String savepoint = runUntil(cluster, job, 2, null, RECORDS / 5);
            job.run().resetCheckpoints();
            job.run().throttled(true);
            savepoint = runUntil(cluster, job, 1, savepoint, RECORDS / 2);

            job.run().resetCheckpoints();
            job.run().throttled(false);
            JobGraph last = jobGraph(job, 3);
            last.setSavepointRestoreSettings(
                    SavepointRestoreSettings.forPath(savepoint, false, RecoveryClaimMode.NO_CLAIM));
            JobResult result =
                    cluster.submitJob(last)
                            .thenCompose(r -> cluster.requestJobResult(last.getJobID()))
                            .get();
            assertThat(result.isSuccess())
                    .as("resumed job failed: %s", result.getSerializedThrowable())
                    .isTrue();
            assertThat(job.run().completedCheckpoints()).isPositive();
            job.check().assertExact();
        }
    }

    /** Runs at {@code parallelism} (from {@code savepoint} if given) and stops with a savepoint. */
    private String runUntil(
            MiniCluster cluster, ExactlyOnceJob job, int parallelism, String savepoint, long upTo)
            throws Exception {
        JobGraph graph = jobGraph(job, parallelism);
        if (savepoint != null) {
            graph.setSavepointRestoreSettings(
                    SavepointRestoreSettings.forPath(savepoint, false, RecoveryClaimMode.NO_CLAIM));
        }
        JobID id = cluster.submitJob(graph).get().getJobID();
        Waits.until(
                "the job processed " + upTo + " records and completed a checkpoint",
                Duration.ofMinutes(2),
                () -> job.run().processed() >= upTo && job.run().completedCheckpoints() > 0);
        String next =
                cluster.stopWithSavepoint(
                                id,
                                new File(tmp, "savepoints").toURI().toString(),
                                false,
                                SavepointFormatType.NATIVE)
                        .get();
        cluster.requestJobResult(id).get();
        return next;
    }

    private static MiniCluster cluster(int slots) {
        return new MiniCluster(
                new MiniClusterConfiguration.Builder()
                        .setConfiguration(new Configuration())
                        .setNumTaskManagers(1)
                        .setNumSlotsPerTaskManager(slots)
                        .build());
    }

    private JobGraph jobGraph(ExactlyOnceJob job, int parallelism) {
        Configuration config = new Configuration();
        config.setString("state.backend.type", DisaggregatedStateBackendFactory.class.getName());
        config.setString(
                "execution.checkpointing.dir", new File(tmp, "checkpoints").toURI().toString());
        config.setString("execution.checkpointing.interval", "100 ms");
        config.setString("restart-strategy.type", "fixed-delay");
        config.setString("restart-strategy.fixed-delay.attempts", "2");
        config.setString("restart-strategy.fixed-delay.delay", "50 ms");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
        env.setParallelism(parallelism);
        env.setMaxParallelism(128);
        job.addTo(env);
        return env.getStreamGraph().getJobGraph();
    }
}
