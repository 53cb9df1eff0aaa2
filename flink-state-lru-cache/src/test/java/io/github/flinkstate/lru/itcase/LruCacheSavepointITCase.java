package io.github.flinkstate.lru.itcase;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.lru.LruCacheOptions;
import io.github.flinkstate.lru.LruCacheStateBackendFactory;
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
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Real jobs on a MiniCluster, built with the shared test kit's {@link ExactlyOnceJob} (value, list,
 * map, reducing and aggregating state plus a timer per key, checked exactly against the input):
 *
 * <ul>
 *   <li>stopped with a canonical savepoint while running, then resumed from it (NO_CLAIM, Flink's
 *       default) at another parallelism and with another backend (LRU cache -> RocksDB/HashMap and
 *       back); the resumed job must complete a checkpoint (the forced full one) before it may
 *       finish;
 *   <li>a failure after a completed checkpoint, recovered from that checkpoint.
 * </ul>
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class LruCacheSavepointITCase {

    private static final long RECORDS = 60_000;
    private static final int KEYS = 700;

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
        // slow while the switch is on, and until the first checkpoint after a restore completed
        try (ExactlyOnceJob job =
                        ExactlyOnceJob.builder(RECORDS)
                                .keys(KeyFunction.modulo(KEYS))
                                .throttle(Throttle.every(5).whileThrottled().untilCheckpoints(1))
                                .name("savepoint")
                                .build();
                MiniCluster cluster = cluster(3)) {
            cluster.start();

            // phase 1: run slowly, stop with a canonical savepoint part way through
            job.run().throttled(true);
            JobID firstId =
                    cluster.submitJob(jobGraph(job, firstBackend, firstParallelism))
                            .get()
                            .getJobID();
            Waits.until(
                    "the first job processed a fifth of the records",
                    Duration.ofMinutes(2),
                    () -> job.run().processed() >= RECORDS / 5);
            String savepoint =
                    cluster.stopWithSavepoint(
                                    firstId,
                                    new File(tmp, "savepoints").toURI().toString(),
                                    false,
                                    SavepointFormatType.CANONICAL)
                            .get();
            cluster.requestJobResult(firstId).get();
            assertThat(job.run().processed()).isLessThan(RECORDS);

            // phase 2: resume elsewhere; stay slow until the first checkpoint after the restore
            // (a FULL checkpoint under NO_CLAIM) has completed, then run to the end
            job.run().resetCheckpoints();
            job.run().throttled(false);
            JobGraph second = jobGraph(job, secondBackend, secondParallelism);
            second.setSavepointRestoreSettings(
                    SavepointRestoreSettings.forPath(savepoint, false, RecoveryClaimMode.NO_CLAIM));
            long before = job.run().processed();
            JobResult result =
                    cluster.submitJob(second)
                            .thenCompose(r -> cluster.requestJobResult(second.getJobID()))
                            .get();
            assertThat(result.isSuccess())
                    .as("resumed job failed: %s", result.getSerializedThrowable())
                    .isTrue();
            assertThat(job.run().completedCheckpoints()).isPositive();
            assertThat(job.run().processed() - before)
                    .as("records of the resumed run: it started where the restored state ends")
                    .isLessThan(RECORDS);
            job.check().assertExact();
        }
    }

    /**
     * One failure after a checkpoint; with {@code asyncStateApi} the job keeps its state through
     * Flink's asynchronous state API, which runs on the cache through Flink's adaptor.
     */
    @ParameterizedTest(name = "{0}, asynchronous state API: {1}")
    @CsvSource({"lru:64,false", "lru:100000,false", "lru:64,true", "lru:100000,true"})
    void failureAfterCheckpointRecoversExactly(String backend, boolean asyncStateApi)
            throws Exception {
        ExactlyOnceJob.Builder builder =
                ExactlyOnceJob.builder(RECORDS)
                        .keys(KeyFunction.modulo(KEYS))
                        .throttle(Throttle.every(2).untilCheckpoints(2))
                        .failOnceAfter(RECORDS / 3)
                        .asyncState(asyncStateApi)
                        .name(asyncStateApi ? "failure-async" : "failure");
        try (ExactlyOnceJob job = builder.build();
                MiniCluster cluster = cluster(2)) {
            cluster.start();
            JobGraph graph = jobGraph(job, backend, 2);
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

    private static MiniCluster cluster(int slots) {
        return new MiniCluster(
                new MiniClusterConfiguration.Builder()
                        .setConfiguration(new Configuration())
                        .setNumTaskManagers(1)
                        .setNumSlotsPerTaskManager(slots)
                        .build());
    }

    private JobGraph jobGraph(ExactlyOnceJob job, String backend, int parallelism) {
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
        job.addTo(env);
        return env.getStreamGraph().getJobGraph();
    }
}
