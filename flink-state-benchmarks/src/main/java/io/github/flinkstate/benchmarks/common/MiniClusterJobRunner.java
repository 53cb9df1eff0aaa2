package io.github.flinkstate.benchmarks.common;

import java.util.function.Consumer;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.checkpoint.CheckpointStatsSnapshot;
import org.apache.flink.runtime.checkpoint.CompletedCheckpointStats;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * Runs one streaming job on a fresh embedded {@link MiniCluster} and reads its checkpoint
 * statistics from the finished execution graph. Not thread-safe; one job at a time.
 */
public final class MiniClusterJobRunner {

    private MiniClusterJobRunner() {}

    /**
     * Runs one job on a fresh cluster.
     *
     * @param config cluster and job configuration (backend, checkpointing, restarts)
     * @param parallelism slots of the single TaskManager and default job parallelism
     * @param buildJob adds the job's operators to the environment
     */
    public static JobStats run(
            String backendName,
            long records,
            Configuration config,
            int parallelism,
            Consumer<StreamExecutionEnvironment> buildJob)
            throws Exception {
        try (MiniCluster cluster = startCluster(config, parallelism)) {
            return run(cluster, backendName, records, config, parallelism, buildJob);
        }
    }

    /**
     * Starts a cluster (one TaskManager with {@code parallelism} slots, the cache metrics collector
     * registered) on which several jobs may run one after another.
     */
    public static MiniCluster startCluster(Configuration config, int parallelism) throws Exception {
        Configuration clusterConfig = new Configuration(config);
        clusterConfig.setString(
                "metrics.reporter.cachecollector.factory.class",
                CacheMetricsCollector.Factory.class.getName());
        MiniClusterConfiguration mcc =
                new MiniClusterConfiguration.Builder()
                        .setConfiguration(clusterConfig)
                        .setNumTaskManagers(1)
                        .setNumSlotsPerTaskManager(parallelism)
                        .build();
        MiniCluster cluster = new MiniCluster(mcc);
        cluster.start();
        return cluster;
    }

    /**
     * Runs one job on {@code cluster} with {@code config} as its job configuration (backend,
     * checkpointing, restarts) and reads its statistics.
     */
    public static JobStats run(
            MiniCluster cluster,
            String backendName,
            long records,
            Configuration config,
            int parallelism,
            Consumer<StreamExecutionEnvironment> buildJob)
            throws Exception {
        CacheMetricsCollector.reset();
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
        env.setParallelism(parallelism);
        buildJob.accept(env);
        JobGraph jobGraph = env.getStreamGraph().getJobGraph();
        JobID jobId = cluster.submitJob(jobGraph).get().getJobID();
        JobResult result = cluster.requestJobResult(jobId).get();
        if (!result.isSuccess()) {
            throw JobEnds.unexpected(cluster, jobId, "Job with backend " + backendName + " failed");
        }
        AccessExecutionGraph graph = cluster.getExecutionGraph(jobId).get();
        CheckpointStatsSnapshot stats = graph.getCheckpointStatsSnapshot();
        CompletedCheckpointStats latest =
                stats == null ? null : stats.getHistory().getLatestCompletedCheckpoint();
        int restarts =
                graph.getAllVertices().values().stream()
                        .flatMap(v -> java.util.Arrays.stream(v.getTaskVertices()))
                        .mapToInt(t -> t.getCurrentExecutionAttempt().getAttemptNumber())
                        .max()
                        .orElse(0);
        return new JobStats(
                backendName,
                records,
                result.getNetRuntime(),
                restarts,
                stats == null ? 0 : stats.getCounts().getNumberOfCompletedCheckpoints(),
                stats == null ? 0 : stats.getSummaryStats().getEndToEndDurationStats().getAverage(),
                stats == null ? 0 : stats.getSummaryStats().getEndToEndDurationStats().getMaximum(),
                latest == null ? 0 : latest.getStateSize(),
                CacheMetricsCollector.hitRatio());
    }
}
