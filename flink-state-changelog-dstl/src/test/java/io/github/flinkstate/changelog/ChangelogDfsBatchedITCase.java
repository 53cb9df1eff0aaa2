package io.github.flinkstate.changelog;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import io.github.flinkstate.testing.job.ExactlyOnceJob;
import io.github.flinkstate.testing.job.KeyFunction;
import io.github.flinkstate.testing.job.Throttle;
import io.github.flinkstate.testing.wait.Waits;
import java.io.File;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.StateChangelogOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.fs.Path;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Real jobs on a MiniCluster with {@code state.backend.type} = {@link ChangelogStateBackendFactory}
 * and {@code state.changelog.storage} = {@code dfs-batched}, built with the shared kit's {@link
 * ExactlyOnceJob} (value, list, map, reducing and aggregating state and a timer per key; the exact
 * per-key results are computed from the input): frequent checkpoints, periodic materialization and
 * one injected failure after checkpoints completed; and a run where every attempt of some uploads
 * fails, which must fail checkpoints but not the job.
 */
class ChangelogDfsBatchedITCase {

    private static final InjectingFileSystem FS = InjectingFileSystem.shared();
    private static final long RECORDS = 20_000;
    private static final Duration WAIT = Duration.ofMinutes(1);

    @TempDir File tmp;

    /**
     * One failure, recovered from our DSTL; with {@code asyncStateApi} the job keeps its state
     * through Flink's asynchronous state API (Flink's changelog backend runs it through Flink's
     * adaptor).
     */
    @ParameterizedTest(name = "delegate={0}, localRecovery={1}, asynchronous state API: {2}")
    @CsvSource({
        "hashmap,false,false",
        "rocksdb,false,false",
        "hashmap,true,false",
        "rocksdb,true,false",
        "hashmap,false,true",
        "rocksdb,false,true"
    })
    void jobRecoversExactlyFromDfsBatchedChangelog(
            String delegate, boolean localRecovery, boolean asyncStateApi) throws Exception {
        Configuration config = config(delegate, new Path(new File(tmp, "dstl").toURI()));
        config.set(StateRecoveryOptions.LOCAL_RECOVERY, localRecovery);
        config.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        config.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 3);
        config.set(
                RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(100));
        ExactlyOnceJob.Builder builder =
                ExactlyOnceJob.builder(RECORDS)
                        .keys(KeyFunction.modulo(16))
                        .throttle(Throttle.every(2).untilCheckpoints(3))
                        .failOnceAfter(RECORDS / 2)
                        .asyncState(asyncStateApi)
                        .name("dstl-" + delegate + (asyncStateApi ? "-async" : ""));
        try (ExactlyOnceJob job = builder.build()) {
            StreamExecutionEnvironment env = environment(config);
            job.addTo(env);
            env.execute("dfs-batched changelog ITCase");

            assertThat(job.run().failed()).as("the failure was injected").isTrue();
            File[] jobDirs = new File(tmp, "dstl").listFiles();
            assertThat(jobDirs).as("our DSTL created its job directory").hasSize(1);
            assertThat(new File(jobDirs[0], "dstl")).isDirectory();
            job.check().assertExact();
        }
    }

    /**
     * Every attempt of some uploads fails: the affected checkpoints fail (tolerated here) and the
     * job does not (one restart is allowed, and the injected failure below takes it); later
     * checkpoints upload the changes again, which a restore from the first checkpoint after the
     * failed uploads needs (before, the job never restored, so the result did not depend on the
     * uploads: found in a review).
     */
    @ParameterizedTest(name = "delegate={0}")
    @ValueSource(strings = {"hashmap", "rocksdb"})
    void failedUploads_failCheckpointsButNotTheJob(String delegate) throws Exception {
        FS.reset();
        Configuration config = config(delegate, FS.path(new File(tmp, "dstl")));
        config.set(DfsChangelogOptions.MAX_ATTEMPTS, 2);
        config.set(DfsChangelogOptions.RETRY_DELAY, Duration.ZERO);
        config.set(CheckpointingOptions.TOLERABLE_FAILURE_NUMBER, Integer.MAX_VALUE);
        config.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        config.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 1);
        config.set(
                RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(100));
        try (ExactlyOnceJob job =
                ExactlyOnceJob.builder(RECORDS)
                        .keys(KeyFunction.modulo(16))
                        .throttle(Throttle.every(2).whileThrottled())
                        .name("dstl-failing-uploads-" + delegate)
                        .build()) {
            job.run().throttled(true);
            StreamExecutionEnvironment env = environment(config);
            job.addTo(env);
            JobClient client = env.executeAsync("dfs-batched failing uploads");

            Waits.until("3 checkpoints", WAIT, () -> job.run().completedCheckpoints() >= 3);
            long creates = FS.counters().calls(FsOp.CREATE);
            FS.failNextCreates(6); // every attempt (2) of the next batches fails
            Waits.until(
                    "the injected failures were hit",
                    WAIT,
                    () -> FS.counters().calls(FsOp.CREATE) >= creates + 6);
            int completed = job.run().completedCheckpoints();
            Waits.until(
                    "a checkpoint completed after the failed uploads",
                    WAIT,
                    () -> job.run().completedCheckpoints() > completed);
            job.run().failNow(); // restore from that checkpoint
            Waits.until("the injected failure", WAIT, () -> job.run().failed());
            job.run().throttled(false);
            client.getJobExecutionResult().get(2, TimeUnit.MINUTES);

            job.check().assertExact();
        } finally {
            FS.reset();
        }
    }

    private Configuration config(String delegate, Path dstlBase) {
        Configuration config = new Configuration();
        config.set(StateBackendOptions.STATE_BACKEND, ChangelogStateBackendFactory.class.getName());
        config.set(DfsChangelogOptions.DELEGATE, delegate);
        config.set(StateChangelogOptions.STATE_CHANGE_LOG_STORAGE, "dfs-batched");
        config.set(DfsChangelogOptions.BASE_PATH, dstlBase.toString());
        config.set(StateChangelogOptions.PERIODIC_MATERIALIZATION_INTERVAL, Duration.ofMillis(500));
        config.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofMillis(100));
        config.set(
                CheckpointingOptions.CHECKPOINTS_DIRECTORY,
                new Path(new File(tmp, "checkpoints").toURI()).toString());
        return config;
    }

    private static StreamExecutionEnvironment environment(Configuration config) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
        env.setParallelism(2);
        return env;
    }
}
