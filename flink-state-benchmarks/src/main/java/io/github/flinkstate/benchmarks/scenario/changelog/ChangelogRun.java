package io.github.flinkstate.benchmarks.scenario.changelog;

import io.github.flinkstate.benchmarks.common.DriverCheckpoints;
import io.github.flinkstate.benchmarks.common.JobEnds;
import io.github.flinkstate.benchmarks.common.RestoreTimes;
import io.github.flinkstate.testing.fs.FsCounters;
import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import io.github.flinkstate.testing.fs.Latency;
import io.github.flinkstate.testing.job.JobRun;
import io.github.flinkstate.testing.wait.Waits;
import java.io.File;
import java.time.Duration;
import java.util.concurrent.Callable;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.runtime.checkpoint.AbstractCheckpointStats;
import org.apache.flink.runtime.checkpoint.CheckpointStatsSnapshot;
import org.apache.flink.runtime.checkpoint.CompletedCheckpointStats;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;

/**
 * Runs one configuration of the changelog scenario on its own MiniCluster, in two phases:
 *
 * <ol>
 *   <li>load: the job processes {@code records} records, is then throttled, and is cancelled after
 *       two more completed checkpoints (retained on cancellation);
 *   <li>restore: a second job restores the last checkpoint (CLAIM); measured until every subtask
 *       runs, then cancelled.
 * </ol>
 *
 * Not thread-safe; one run at a time (the slow file system and its counters are JVM-wide).
 */
public final class ChangelogRun {

    private static final Duration LOAD_TIMEOUT = Duration.ofMinutes(10);
    private static final Duration RESTORE_TIMEOUT = Duration.ofMinutes(3);

    private ChangelogRun() {}

    public static ChangelogResult run(
            String name,
            String workload,
            long records,
            int parallelism,
            Configuration config,
            File dstl,
            DfsLatency latency)
            throws Exception {
        MiniClusterConfiguration mcc =
                new MiniClusterConfiguration.Builder()
                        .setConfiguration(config)
                        .setNumTaskManagers(1)
                        .setNumSlotsPerTaskManager(parallelism)
                        .build();
        InjectingFileSystem fs = InjectingFileSystem.shared();
        try (MiniCluster cluster = new MiniCluster(mcc);
                JobRun run = JobRun.start("changelog-" + name)) {
            cluster.start();

            // Phase 1: load, then cancel with a retained checkpoint.
            Latency upload = latency.install(latency.seed() * 31 + name.hashCode());
            JobGraph load = ChangelogJobs.build(config, workload, records, parallelism, run);
            long start = System.nanoTime();
            JobID loadId = cluster.submitJob(load).get().getJobID();
            long[] loadNanos = {-1};
            long[] checkpointsAtLoadEnd = {-1};
            awaitWhileRunning(
                    cluster,
                    loadId,
                    name + ": load job loaded and completed two more checkpoints",
                    LOAD_TIMEOUT,
                    () -> {
                        long completed = completed(cluster.getExecutionGraph(loadId).get());
                        if (loadNanos[0] < 0 && run.emitted() >= records) {
                            loadNanos[0] = System.nanoTime() - start;
                            checkpointsAtLoadEnd[0] = completed;
                        }
                        return loadNanos[0] >= 0 && completed >= checkpointsAtLoadEnd[0] + 2;
                    });
            FsCounters counters = fs.counters();
            String dstlPrefix = InjectingFileSystem.key(dstl);
            long dstlFiles = counters.callsUnder(FsOp.CREATE, dstlPrefix);
            long dstlBytes = counters.bytesUnder(FsOp.WRITE, dstlPrefix);
            long allCreates = counters.calls(FsOp.CREATE);
            long tails = upload.tailSamples();
            cluster.cancelJob(loadId).get();
            cluster.requestJobResult(loadId).get();
            AccessExecutionGraph loadGraph = cluster.getExecutionGraph(loadId).get();
            CheckpointStatsSnapshot stats = loadGraph.getCheckpointStatsSnapshot();
            CompletedCheckpointStats latest = stats.getHistory().getLatestCompletedCheckpoint();
            long checkpointed = 0;
            for (AbstractCheckpointStats cp : stats.getHistory().getCheckpoints()) {
                if (cp instanceof CompletedCheckpointStats) {
                    checkpointed += cp.getCheckpointedSize();
                }
            }

            // Phase 2: restore from the retained checkpoint; wait until every subtask runs.
            Configuration restoreConfig = new Configuration(config);
            restoreConfig.setString("execution.state-recovery.path", latest.getExternalPath());
            restoreConfig.setString("execution.state-recovery.claim-mode", "CLAIM");
            // The restored job only has to reach RUNNING; a checkpoint of it would subsume (CLAIM)
            // and delete the restored checkpoint that ChangelogCheckpointShape reads afterwards.
            restoreConfig.setString("execution.checkpointing.interval", DriverCheckpoints.INTERVAL);
            JobGraph restore =
                    ChangelogJobs.build(restoreConfig, workload, records, parallelism, run);
            restore.setSavepointRestoreSettings(
                    SavepointRestoreSettings.forPath(
                            latest.getExternalPath(), false, RecoveryClaimMode.CLAIM));
            long opensBefore = counters.callsUnder(FsOp.OPEN, dstlPrefix);
            long readBytesBefore = counters.bytesUnder(FsOp.READ, dstlPrefix);
            long readCallsBefore = counters.callsUnder(FsOp.READ, dstlPrefix);
            long submitted = System.nanoTime();
            JobID restoreId = cluster.submitJob(restore).get().getJobID();
            awaitWhileRunning(
                    cluster,
                    restoreId,
                    name + ": every subtask of the restored job runs",
                    RESTORE_TIMEOUT,
                    () -> RestoreTimes.allRunning(cluster.getExecutionGraph(restoreId).get()));
            long submitToRunning = (System.nanoTime() - submitted) / 1_000_000;
            AccessExecutionGraph restoredGraph = cluster.getExecutionGraph(restoreId).get();
            long restoreMs = RestoreTimes.maxOverJob(restoredGraph);
            java.util.List<Long> perSubtask = new java.util.ArrayList<>();
            for (org.apache.flink.runtime.executiongraph.AccessExecutionJobVertex v :
                    restoredGraph.getVerticesTopologically()) {
                if (v.getName().startsWith("KeyedProcess") || v.getName().startsWith("Window")) {
                    perSubtask.addAll(RestoreTimes.perSubtask(v, name));
                }
            }
            long restoreOpens = counters.callsUnder(FsOp.OPEN, dstlPrefix) - opensBefore;
            long restoreReadBytes = counters.bytesUnder(FsOp.READ, dstlPrefix) - readBytesBefore;
            long restoreReadCalls = counters.callsUnder(FsOp.READ, dstlPrefix) - readCallsBefore;
            cluster.cancelJob(restoreId).get();
            cluster.requestJobResult(restoreId).get();

            // After the measured restore (so that it does not warm caches for it): what the
            // restore had to read, and how long the DSTL's reader alone takes for it.
            ChangelogCheckpointShape shape = ChangelogCheckpointShape.NONE;
            if (!name.equals("rocksdb")) {
                try {
                    shape = ChangelogCheckpointShape.of(latest.getExternalPath(), config);
                } catch (Exception e) {
                    System.out.println(name + ": could not inspect the checkpoint: " + e);
                    e.printStackTrace(System.out);
                    shape = ChangelogCheckpointShape.failed(e.toString());
                }
            }
            System.out.printf(
                    java.util.Locale.ROOT,
                    "%s restore: %d ms (keyed subtasks %s); DSTL opens %d, read calls %d, read %.1f MiB; %s%n",
                    name,
                    restoreMs,
                    perSubtask,
                    restoreOpens,
                    restoreReadCalls,
                    restoreReadBytes / 1048576.0,
                    shape);

            return new ChangelogResult(
                    name,
                    stats.getSummaryStats().getEndToEndDurationStats().getQuantile(0.5),
                    stats.getSummaryStats().getEndToEndDurationStats().getQuantile(0.99),
                    stats.getCounts().getNumberOfCompletedCheckpoints(),
                    stats.getCounts().getNumberOfFailedCheckpoints(),
                    checkpointed,
                    latest.getStateSize(),
                    dstlFiles,
                    dstlBytes,
                    allCreates,
                    tails,
                    records / (loadNanos[0] / 1e9),
                    restoreMs,
                    submitToRunning,
                    restoreOpens,
                    restoreReadBytes,
                    shape);
        }
    }

    /** Waits for {@code condition}; fails if the job ends first or the timeout passes. */
    private static void awaitWhileRunning(
            MiniCluster cluster,
            JobID id,
            String what,
            Duration timeout,
            Callable<Boolean> condition)
            throws Exception {
        Waits.untilChecked(
                what,
                timeout,
                () -> {
                    JobStatus status = cluster.getJobStatus(id).get();
                    if (status.isGloballyTerminalState()) {
                        throw JobEnds.unexpected(
                                cluster,
                                id,
                                "job ended with status " + status + " before: " + what);
                    }
                    return condition.call();
                });
    }

    private static long completed(AccessExecutionGraph graph) {
        CheckpointStatsSnapshot s = graph.getCheckpointStatsSnapshot();
        return s == null ? 0 : s.getCounts().getNumberOfCompletedCheckpoints();
    }
}
