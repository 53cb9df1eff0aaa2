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
import java.util.Arrays;
import java.util.Comparator;
import java.util.Optional;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.RecoveryClaimMode;
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
 * Turning the cache off on a real job (issue 12, finding 1): a retained checkpoint of the cache
 * over RocksDB, taken while every key's state is still only in the cache, is refused by plain
 * RocksDB with a message that says what to do, and restores exactly with the cache's factory and
 * {@code max-entries-num: 0}; the job then runs to the end with exact results for all five state
 * kinds.
 */
@Timeout(300)
class LruCacheSwitchOffITCase {

    private static final long RECORDS = 40_000;
    private static final int KEYS = 500;

    @TempDir File tmp;

    @Test
    void retainedCheckpointIsRefusedByPlainRocksDbAndRestoresExactlyWithTheCacheOff()
            throws Exception {
        try (ExactlyOnceJob job =
                        ExactlyOnceJob.builder(RECORDS)
                                .keys(KeyFunction.modulo(KEYS))
                                .throttle(Throttle.every(1).whileThrottled())
                                .name("switch-off")
                                .build();
                MiniCluster cluster = cluster()) {
            cluster.start();

            // phase 1: the cache holds every key; cancel after two checkpoints, keep them
            job.run().throttled(true);
            JobGraph first = jobGraph(job, "lru:1000000", null);
            JobID firstId = cluster.submitJob(first).get().getJobID();
            Waits.until(
                    "two checkpoints completed and a fifth of the records was processed",
                    Duration.ofMinutes(2),
                    () ->
                            job.run().completedCheckpoints() >= 2
                                    && job.run().processed() >= RECORDS / 5);
            cluster.cancelJob(firstId).get();
            cluster.requestJobResult(firstId).get();
            String checkpoint = latestCheckpoint(firstId);

            // phase 2: plain RocksDB refuses it, naming what to do
            JobGraph plain = jobGraph(job, "rocksdb", checkpoint);
            JobResult refused =
                    cluster.submitJob(plain)
                            .thenCompose(r -> cluster.requestJobResult(plain.getJobID()))
                            .get();
            assertThat(refused.isSuccess()).as("plain RocksDB must not restore it").isFalse();
            String failure =
                    refused.getSerializedThrowable().orElseThrow().getFullStringifiedStackTrace();
            assertThat(failure)
                    .contains("LRU cache state backend")
                    .contains("state.backend.cache.max-entries-num: 0")
                    .contains("canonical savepoint");

            // phase 3: the cache's factory with the cache off restores it exactly
            job.run().throttled(false);
            JobGraph off = jobGraph(job, "lru:0", checkpoint);
            long before = job.run().processed();
            JobResult result =
                    cluster.submitJob(off)
                            .thenCompose(r -> cluster.requestJobResult(off.getJobID()))
                            .get();
            assertThat(result.isSuccess())
                    .as("job with the cache off failed: %s", result.getSerializedThrowable())
                    .isTrue();
            assertThat(job.run().processed() - before)
                    .as("records of the resumed run: it started where the restored state ends")
                    .isLessThan(RECORDS);
            job.check().assertExact();
        }
    }

    /** The newest retained checkpoint of a job (its directory holds {@code _metadata}). */
    private String latestCheckpoint(JobID jobId) {
        File[] dirs = new File(new File(tmp, "checkpoints"), jobId.toHexString()).listFiles();
        Optional<File> latest =
                dirs == null
                        ? Optional.empty()
                        : Arrays.stream(dirs)
                                .filter(d -> d.getName().startsWith("chk-"))
                                .filter(d -> new File(d, "_metadata").isFile())
                                .max(
                                        Comparator.comparingLong(
                                                d -> Long.parseLong(d.getName().substring(4))));
        return latest.orElseThrow(
                        () -> new AssertionError("no retained checkpoint of job " + jobId))
                .toURI()
                .toString();
    }

    private static MiniCluster cluster() {
        return new MiniCluster(
                new MiniClusterConfiguration.Builder()
                        .setConfiguration(new Configuration())
                        .setNumTaskManagers(1)
                        .setNumSlotsPerTaskManager(2)
                        .build());
    }

    private JobGraph jobGraph(ExactlyOnceJob job, String backend, String restoreFrom) {
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
        config.setString(
                "execution.checkpointing.externalized-checkpoint-retention",
                "RETAIN_ON_CANCELLATION");
        config.setString("restart-strategy.type", "none");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
        env.setParallelism(2);
        env.setMaxParallelism(128);
        job.addTo(env);
        JobGraph graph = env.getStreamGraph().getJobGraph();
        if (restoreFrom != null) {
            graph.setSavepointRestoreSettings(
                    SavepointRestoreSettings.forPath(
                            restoreFrom, false, RecoveryClaimMode.NO_CLAIM));
        }
        return graph;
    }
}
