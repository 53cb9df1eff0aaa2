package io.github.flinkstate.benchmarks.common;

import io.github.flinkstate.testing.job.ExactlyOnceJob;
import io.github.flinkstate.testing.job.KeyFunction;
import io.github.flinkstate.testing.job.ResultCheck;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.minicluster.MiniCluster;

/**
 * One run of the FLIP-325 count-per-key job (the test kit's {@link ExactlyOnceJob} in count-only
 * mode over {@link KeyFunction#flip325()}) on a fresh MiniCluster, with its statistics and the
 * exact per-key check. Used by the demo's throughput runs and the FLIP-325 scenario. Immutable.
 */
public record CountPerKeyRun(JobStats stats, ResultCheck check, long processingNanos) {

    /** Runs the job once on a fresh cluster with {@code config} (backend, checkpointing). */
    public static CountPerKeyRun run(
            String backendName, long records, Configuration config, int parallelism)
            throws Exception {
        try (MiniCluster cluster = MiniClusterJobRunner.startCluster(config, parallelism)) {
            return run(cluster, backendName, records, config, parallelism);
        }
    }

    /** Runs the job once on {@code cluster}, with {@code config} as the job's configuration. */
    public static CountPerKeyRun run(
            MiniCluster cluster,
            String backendName,
            long records,
            Configuration config,
            int parallelism)
            throws Exception {
        try (ExactlyOnceJob job =
                ExactlyOnceJob.builder(records)
                        .keys(KeyFunction.flip325())
                        .countOnly()
                        .name(backendName)
                        .build()) {
            JobStats stats =
                    MiniClusterJobRunner.run(
                            cluster, backendName, records, config, parallelism, job::addTo);
            return new CountPerKeyRun(stats, job.check(), job.run().processingNanos());
        }
    }

    /**
     * Records per second of processing: from the first record to the last end-of-input report,
     * without deployment and shutdown (which dominate short runs); net runtime if unknown.
     */
    public double processingRecordsPerSecond() {
        return processingNanos > 0
                ? stats.records() * 1e9 / processingNanos
                : stats.recordsPerSecond();
    }
}
