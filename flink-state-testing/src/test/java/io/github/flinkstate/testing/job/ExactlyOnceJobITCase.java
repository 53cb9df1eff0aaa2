package io.github.flinkstate.testing.job;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.time.Duration;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The kit's job on Flink's own backends: one failure after a checkpoint, a restart from it, and an
 * exact result; the end-of-input timer reports every key once.
 */
@Timeout(180)
class ExactlyOnceJobITCase {

    @TempDir File tmp;

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"hashmap", "rocksdb"})
    void failureAfterCheckpoint_recoversExactly(String backend) throws Exception {
        Configuration config = config(backend);
        try (ExactlyOnceJob job =
                ExactlyOnceJob.builder(20_000)
                        .keys(KeyFunction.modulo(50))
                        .throttle(Throttle.every(2).untilCheckpoints(2))
                        .failOnceAfter(5_000)
                        .name(backend)
                        .build()) {
            StreamExecutionEnvironment env =
                    StreamExecutionEnvironment.getExecutionEnvironment(config);
            env.setParallelism(2);
            job.addTo(env);
            env.execute("kit " + backend);

            assertThat(job.run().failed()).as("the failure was injected").isTrue();
            assertThat(job.run().completedCheckpoints()).isPositive();
            assertThat(job.run().processed()).isGreaterThan(20_000);
            assertThat(job.run().emitted()).isGreaterThanOrEqualTo(20_000);
            job.check().assertExact();
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"hashmap", "rocksdb"})
    void asyncStateApi_failureAfterCheckpoint_recoversExactly(String backend) throws Exception {
        try (ExactlyOnceJob job =
                ExactlyOnceJob.builder(20_000)
                        .keys(KeyFunction.modulo(50))
                        .throttle(Throttle.every(2).untilCheckpoints(2))
                        .failOnceAfter(5_000)
                        .asyncState(true)
                        .name(backend + "-async")
                        .build()) {
            StreamExecutionEnvironment env =
                    StreamExecutionEnvironment.getExecutionEnvironment(config(backend));
            env.setParallelism(2);
            job.addTo(env);
            env.execute("kit async " + backend);

            assertThat(job.run().failed()).as("the failure was injected").isTrue();
            assertThat(job.run().completedCheckpoints()).isPositive();
            job.check().assertExact();
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"hashmap"})
    void countOnly_checksTheCountsOfTheFlip325Keys(String backend) throws Exception {
        try (ExactlyOnceJob job =
                ExactlyOnceJob.builder(10_000).keys(KeyFunction.flip325()).countOnly().build()) {
            StreamExecutionEnvironment env =
                    StreamExecutionEnvironment.getExecutionEnvironment(config(backend));
            env.setParallelism(1);
            job.addTo(env);
            env.execute("kit count-only");
            assertThat(job.run().finals()).hasSize(1000);
            assertThat(job.expected().get(0L)).isEqualTo(KeySummary.countOnly(0, 10));
            job.check().assertExact();
        }
    }

    private Configuration config(String backend) {
        Configuration config = new Configuration();
        config.set(StateBackendOptions.STATE_BACKEND, backend);
        config.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofMillis(100));
        config.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, tmp.toURI().toString());
        config.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        config.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 2);
        config.set(
                RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(50));
        return config;
    }
}
