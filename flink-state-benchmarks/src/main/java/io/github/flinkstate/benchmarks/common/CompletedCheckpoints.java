package io.github.flinkstate.benchmarks.common;

import java.time.Duration;
import org.apache.flink.api.common.JobID;
import org.apache.flink.runtime.checkpoint.AbstractCheckpointStats;
import org.apache.flink.runtime.checkpoint.CheckpointStatsSnapshot;
import org.apache.flink.runtime.checkpoint.CompletedCheckpointStats;
import org.apache.flink.runtime.minicluster.MiniCluster;

/**
 * Waits for the statistics of a completed checkpoint of a job on an embedded {@link MiniCluster}
 * (they appear shortly after the checkpoint's trigger future completes). Stateless.
 */
public final class CompletedCheckpoints {

    private CompletedCheckpoints() {}

    /**
     * The statistics of checkpoint {@code checkpointId}; throws naming {@code who} if they do not
     * appear as completed within {@code timeout}.
     */
    public static CompletedCheckpointStats await(
            MiniCluster cluster, JobID job, long checkpointId, Duration timeout, String who)
            throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            CheckpointStatsSnapshot stats =
                    cluster.getExecutionGraph(job).get().getCheckpointStatsSnapshot();
            AbstractCheckpointStats cp =
                    stats == null ? null : stats.getHistory().getCheckpointById(checkpointId);
            if (cp instanceof CompletedCheckpointStats completed) {
                return completed;
            }
            Thread.sleep(10);
        }
        throw new IllegalStateException(
                who + ": no statistics for completed checkpoint " + checkpointId);
    }
}
