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
import java.util.stream.Stream;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.checkpoint.RestoredCheckpointStats;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Real jobs on a MiniCluster with {@code state.backend.type:
 * io.github.flinkstate.disagg.DisaggregatedStateBackendFactory} and no other backend option (the
 * primary directory defaults to a folder under the checkpoint directory), built with the shared
 * kit's {@link ExactlyOnceJob} (value, list, map, reducing and aggregating state plus a timer per
 * key, checked exactly against the input):
 *
 * <ul>
 *   <li>a failure after a completed checkpoint, recovered from that checkpoint;
 *   <li>rescale chains 2 -> 1 -> 3 handing the state on through retained checkpoints restored in
 *       CLAIM and in NO_CLAIM mode (after a NO_CLAIM restore the first checkpoint is Flink's forced
 *       full checkpoint), through native savepoints and through canonical savepoints;
 *   <li>a chain whose middle job runs on Flink's RocksDB backend: canonical savepoints from our
 *       backend to RocksDB and back;
 *   <li>a CLAIM resume from a native savepoint, then a resume from the resumed job's retained
 *       checkpoint, rescaled 2 -> 1 -> 3.
 * </ul>
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class DisaggregatedITCase {

    private static final long RECORDS = 40_000;
    private static final long CHAIN_RECORDS = 20_000;
    private static final int KEYS = 500;

    @TempDir File tmp;

    /**
     * Streams smaller than this are inlined into the checkpoint metadata; null: Flink's default.
     */
    private MemorySize fileStateThreshold;

    /**
     * The claim mode also in the jobs' configuration, where backends read it (the job graph's
     * restore settings carry it too); null: only on the job graph.
     */
    private RecoveryClaimMode configuredClaimMode;

    /**
     * One failure after a checkpoint; with {@code asyncStateApi} the job keeps its state through
     * Flink's asynchronous state API, which runs on this backend through Flink's adaptor.
     */
    @ParameterizedTest(name = "asynchronous state API: {0}")
    @ValueSource(booleans = {false, true})
    void failureAfterCheckpointRecoversExactly(boolean asyncStateApi) throws Exception {
        ExactlyOnceJob.Builder builder =
                ExactlyOnceJob.builder(RECORDS)
                        .keys(KeyFunction.modulo(KEYS))
                        .throttle(Throttle.every(2).untilCheckpoints(2))
                        .failOnceAfter(RECORDS / 3)
                        .asyncState(asyncStateApi)
                        .name(asyncStateApi ? "disagg-failure-async" : "disagg-failure");
        try (ExactlyOnceJob job = builder.build();
                MiniCluster cluster = cluster(2)) {
            cluster.start();
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

    /** How one job of a chain hands its state to the next. */
    enum Handoff {
        NATIVE_SAVEPOINT,
        CANONICAL_SAVEPOINT,
        /** Cancel the job and resume from its last checkpoint, retained on cancellation. */
        RETAINED_CHECKPOINT
    }

    static Stream<Arguments> chains() {
        String disagg = DisaggregatedStateBackendFactory.class.getName();
        return Stream.of(
                Arguments.of(Handoff.RETAINED_CHECKPOINT, RecoveryClaimMode.CLAIM, disagg, disagg),
                Arguments.of(
                        Handoff.RETAINED_CHECKPOINT, RecoveryClaimMode.NO_CLAIM, disagg, disagg),
                Arguments.of(Handoff.NATIVE_SAVEPOINT, RecoveryClaimMode.NO_CLAIM, disagg, disagg),
                Arguments.of(
                        Handoff.CANONICAL_SAVEPOINT, RecoveryClaimMode.NO_CLAIM, disagg, disagg),
                // our backend -> stock RocksDB -> our backend, through canonical savepoints
                Arguments.of(
                        Handoff.CANONICAL_SAVEPOINT,
                        RecoveryClaimMode.NO_CLAIM,
                        disagg,
                        "rocksdb"));
    }

    /**
     * A rescale chain 2 -> 1 -> 3: the first and last job on {@code backend}, the middle one on
     * {@code middleBackend}; each hands its state to the next by {@code handoff}, restored in
     * {@code mode}; the last job runs to the end of the input and the per-key results are exact.
     */
    @ParameterizedTest(name = "{0}, {1}: {2} (p2) -> {3} (p1) -> {2} (p3)")
    @MethodSource("chains")
    void rescaleChain_2_1_3(
            Handoff handoff, RecoveryClaimMode mode, String backend, String middleBackend)
            throws Exception {
        try (ExactlyOnceJob job =
                        ExactlyOnceJob.builder(CHAIN_RECORDS)
                                .keys(KeyFunction.modulo(KEYS))
                                .throttle(Throttle.every(2).whileThrottled())
                                .name("disagg-chain-" + handoff)
                                .build();
                MiniCluster cluster = cluster(3)) {
            cluster.start();
            job.run().throttled(true);
            String state =
                    runUntil(cluster, job, 2, backend, null, mode, CHAIN_RECORDS / 5, handoff);
            state =
                    runUntil(
                            cluster,
                            job,
                            1,
                            middleBackend,
                            state,
                            mode,
                            CHAIN_RECORDS / 2,
                            handoff);

            runToTheEnd(cluster, job, 3, backend, state, mode);
        }
    }

    /**
     * A job resumed in CLAIM mode from a native savepoint checkpoints; a new job resumes from its
     * retained checkpoint (read back from that checkpoint's {@code _metadata}, unlike an in-job
     * failover) and runs to the end with exact results. The native savepoint's files come back as
     * relative handles, which the resumed job's checkpoints once reused, so the last restore looked
     * for them in the checkpoint's own directory (docs/disaggregated.md, "Checkpoints and file
     * ownership").
     */
    @Test
    void claimFromANativeSavepoint_thenResumeFromALaterRetainedCheckpoint_rescaled_2_1_3()
            throws Exception {
        String disagg = DisaggregatedStateBackendFactory.class.getName();
        // no engine file of this small state may be inlined into the savepoint's metadata: only
        // files are restored with relative handles
        fileStateThreshold = MemorySize.ZERO;
        // as 'flink run -s ... -claimMode CLAIM' sets it (the background copy of other restored
        // files is then skipped)
        configuredClaimMode = RecoveryClaimMode.CLAIM;
        try (ExactlyOnceJob job =
                        ExactlyOnceJob.builder(CHAIN_RECORDS)
                                .keys(KeyFunction.modulo(KEYS))
                                .throttle(Throttle.every(2).whileThrottled())
                                .name("disagg-claim-native")
                                .build();
                MiniCluster cluster = cluster(3)) {
            cluster.start();
            job.run().throttled(true);
            String savepoint =
                    runUntil(
                            cluster,
                            job,
                            2,
                            disagg,
                            null,
                            RecoveryClaimMode.CLAIM,
                            CHAIN_RECORDS / 5,
                            Handoff.NATIVE_SAVEPOINT);
            String checkpoint =
                    runUntil(
                            cluster,
                            job,
                            1,
                            disagg,
                            savepoint,
                            RecoveryClaimMode.CLAIM,
                            // hand off soon after its first checkpoint, before compactions
                            // rewrite every file restored from the savepoint
                            CHAIN_RECORDS / 5 + 50,
                            Handoff.RETAINED_CHECKPOINT);
            runToTheEnd(cluster, job, 3, disagg, checkpoint, RecoveryClaimMode.CLAIM);
        }
    }

    /**
     * Runs the last job at {@code parallelism} on {@code backend} from {@code state} to the end of
     * the input and checks the per-key results exactly.
     */
    private void runToTheEnd(
            MiniCluster cluster,
            ExactlyOnceJob job,
            int parallelism,
            String backend,
            String state,
            RecoveryClaimMode mode)
            throws Exception {
        job.run().resetCheckpoints();
        job.run().throttled(false);
        JobGraph last = jobGraph(job, parallelism, backend);
        last.setSavepointRestoreSettings(SavepointRestoreSettings.forPath(state, false, mode));
        long processedBefore = job.run().processed();
        JobResult result =
                cluster.submitJob(last)
                        .thenCompose(r -> cluster.requestJobResult(last.getJobID()))
                        .get();
        assertThat(result.isSuccess())
                .as("resumed job failed: %s", result.getSerializedThrowable())
                .isTrue();
        assertRestoredFrom(cluster, last.getJobID(), state);
        assertThat(job.run().processed() - processedBefore)
                .as("the last job resumed the source where the restored state left it")
                .isLessThan(CHAIN_RECORDS);
        job.check().assertExact();
    }

    /**
     * Flink restored the job from {@code path} (with the source's position restored too, exact
     * results then prove that the keyed state came through).
     */
    private static void assertRestoredFrom(MiniCluster cluster, JobID id, String path)
            throws Exception {
        RestoredCheckpointStats restored =
                cluster.getArchivedExecutionGraph(id)
                        .get()
                        .getCheckpointStatsSnapshot()
                        .getLatestRestoredCheckpoint();
        assertThat(restored).as("job %s was restored", id).isNotNull();
        assertThat(restored.getExternalPath()).endsWith(new Path(path).getName());
    }

    /**
     * Runs at {@code parallelism} on {@code backend} (from {@code restore} if given) until it
     * processed {@code upTo} records and completed a checkpoint, then hands off: returns the path
     * of the savepoint or retained checkpoint to resume from.
     */
    private String runUntil(
            MiniCluster cluster,
            ExactlyOnceJob job,
            int parallelism,
            String backend,
            String restore,
            RecoveryClaimMode mode,
            long upTo,
            Handoff handoff)
            throws Exception {
        job.run().resetCheckpoints();
        JobGraph graph = jobGraph(job, parallelism, backend);
        if (restore != null) {
            graph.setSavepointRestoreSettings(
                    SavepointRestoreSettings.forPath(restore, false, mode));
        }
        JobID id = cluster.submitJob(graph).get().getJobID();
        Waits.until(
                "the job processed " + upTo + " records and completed a checkpoint",
                Duration.ofMinutes(2),
                () -> job.run().processed() >= upTo && job.run().completedCheckpoints() > 0);
        String savepoints = new File(tmp, "savepoints").toURI().toString();
        String next;
        switch (handoff) {
            case NATIVE_SAVEPOINT:
            case CANONICAL_SAVEPOINT:
                next =
                        cluster.stopWithSavepoint(
                                        id,
                                        savepoints,
                                        false,
                                        handoff == Handoff.NATIVE_SAVEPOINT
                                                ? SavepointFormatType.NATIVE
                                                : SavepointFormatType.CANONICAL)
                                .get();
                cluster.requestJobResult(id).get();
                break;
            case RETAINED_CHECKPOINT:
                cluster.cancelJob(id).get();
                cluster.requestJobResult(id).get();
                next = lastRetainedCheckpoint(id);
                break;
            default:
                throw new IllegalArgumentException(String.valueOf(handoff));
        }
        if (restore != null) {
            assertRestoredFrom(cluster, id, restore);
        }
        return next;
    }

    /** The newest {@code chk-N} directory of the job that has checkpoint metadata. */
    private String lastRetainedCheckpoint(JobID id) {
        File[] dirs = new File(new File(tmp, "checkpoints"), id.toHexString()).listFiles();
        File last = null;
        long lastN = -1;
        for (File d : dirs == null ? new File[0] : dirs) {
            if (d.getName().startsWith("chk-") && new File(d, "_metadata").isFile()) {
                long n = Long.parseLong(d.getName().substring(4));
                if (n > lastN) {
                    lastN = n;
                    last = d;
                }
            }
        }
        assertThat(last).as("a retained checkpoint of job %s", id).isNotNull();
        return last.toURI().toString();
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
        return jobGraph(job, parallelism, DisaggregatedStateBackendFactory.class.getName());
    }

    private JobGraph jobGraph(ExactlyOnceJob job, int parallelism, String backend) {
        Configuration config = new Configuration();
        config.setString("state.backend.type", backend);
        config.setString(
                "execution.checkpointing.dir", new File(tmp, "checkpoints").toURI().toString());
        config.setString("execution.checkpointing.interval", "100 ms");
        if (fileStateThreshold != null) {
            config.set(CheckpointingOptions.FS_SMALL_FILE_THRESHOLD, fileStateThreshold);
        }
        if (configuredClaimMode != null) {
            config.set(StateRecoveryOptions.RESTORE_MODE, configuredClaimMode);
        }
        config.setString(
                "execution.checkpointing.externalized-checkpoint-retention",
                "RETAIN_ON_CANCELLATION");
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
