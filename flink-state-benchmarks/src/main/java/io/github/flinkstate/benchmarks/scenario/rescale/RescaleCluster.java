package io.github.flinkstate.benchmarks.scenario.rescale;

import io.github.flinkstate.benchmarks.common.BackendSpec;
import io.github.flinkstate.benchmarks.common.CompletedCheckpoints;
import io.github.flinkstate.benchmarks.common.DriverCheckpoints;
import io.github.flinkstate.benchmarks.common.JobEnds;
import io.github.flinkstate.benchmarks.common.RestoreTimes;
import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.CheckpointType;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.runtime.checkpoint.CompletedCheckpointStats;
import org.apache.flink.runtime.checkpoint.RestoredCheckpointStats;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.AccessExecutionJobVertex;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;

/**
 * One embedded {@link MiniCluster} (one TaskManager, {@code slots} slots, fixed managed memory)
 * configured for one backend, on which the scenario loads state and restores it:
 *
 * <ol>
 *   <li>{@link #load}: runs the load job, waits until every key is written, triggers one checkpoint
 *       (incremental where the backend supports it, retained on cancellation in a local directory),
 *       waits for it to complete, cancels the job.
 *   <li>{@link #restore}: runs the verify job from that checkpoint at another parallelism, waits
 *       until every key was probed, cancels it (it never finishes by itself, see {@link
 *       RescaleJobs}), and returns the measurement. It throws if any key is missing or wrong, if
 *       the job did not restore that checkpoint, or if a timestamp is missing: a backend that loses
 *       state never yields a number.
 * </ol>
 *
 * <p>Both jobs keep checkpointing enabled ({@link DriverCheckpoints#INTERVAL}, min pause 30 min, so
 * no periodic checkpoint fires) because Flink only tracks restore statistics for checkpointed jobs.
 *
 * <p>Thread safety: not thread-safe; one job at a time. Lifecycle: construct, any number of loads
 * and restores, {@link #close()}.
 */
public final class RescaleCluster implements AutoCloseable {

    private static final Duration JOB_TIMEOUT = Duration.ofMinutes(30);
    private static final Duration SPAN_TIMEOUT = Duration.ofSeconds(30);

    private final String backendName;
    private final Configuration config;
    private final MiniCluster cluster;
    private Duration readDeadline = JOB_TIMEOUT;

    /**
     * @param checkpointDir local directory for the retained checkpoints (the caller deletes it)
     * @param slots at least the highest parallelism of any job run on this cluster
     */
    public RescaleCluster(BackendSpec backend, File checkpointDir, int slots) throws Exception {
        this.backendName = backend.name();
        this.config = new Configuration();
        backend.applyTo(config);
        config.setString("execution.checkpointing.interval", DriverCheckpoints.INTERVAL);
        config.setString("execution.checkpointing.min-pause", "30 min");
        config.setString("execution.checkpointing.dir", checkpointDir.toURI().toString());
        config.setString(
                "execution.checkpointing.externalized-checkpoint-retention",
                "RETAIN_ON_CANCELLATION");
        // No final checkpoint when tasks finish (the jobs are cancelled, never finish).
        config.setString("execution.checkpointing.checkpoints-after-tasks-finish", "false");
        config.setString("restart-strategy.type", "none");
        // Same memory per slot for every job, whatever its parallelism.
        config.setString("taskmanager.memory.managed.size", "256m");
        config.setString(
                "traces.reporter.rescale.factory.class",
                InitializationSpans.Factory.class.getName());
        this.cluster =
                new MiniCluster(
                        new MiniClusterConfiguration.Builder()
                                .setConfiguration(config)
                                .setNumTaskManagers(1)
                                .setNumSlotsPerTaskManager(slots)
                                .build());
        cluster.start();
    }

    /**
     * Bounds the verify job's read of every key after a restore: a read still running {@code
     * deadline} after its first probe is stopped, and the measurement says how many keys it
     * verified (all right) instead of failing the run. Default: 30 minutes.
     */
    public RescaleCluster readDeadline(Duration deadline) {
        this.readDeadline = deadline;
        return this;
    }

    /** Loads {@code keys} values at {@code parallelism} and returns the retained checkpoint. */
    public RetainedCheckpoint load(int parallelism, long keys, int valueBytes) throws Exception {
        WriteValues.reset();
        JobGraph job = RescaleJobs.load(config, parallelism, keys, valueBytes);
        JobID id = cluster.submitJob(job).get().getJobID();
        try {
            awaitOrFail(id, "load", () -> WriteValues.written() >= keys);
            long checkpointId = cluster.triggerCheckpoint(id, CheckpointType.CONFIGURED).get();
            CompletedCheckpointStats stats = awaitCompletedStats(id, checkpointId);
            if (WriteValues.written() != keys) {
                throw new IllegalStateException(
                        backendName
                                + ": load job wrote "
                                + WriteValues.written()
                                + " values, expected "
                                + keys);
            }
            return new RetainedCheckpoint(
                    parallelism,
                    checkpointId,
                    stats.getExternalPath(),
                    stats.getStateSize(),
                    stats.getCheckpointedSize());
        } finally {
            cancel(id);
        }
    }

    /**
     * Restores {@code checkpoint} at {@code parallelism} in NO_CLAIM mode, verifies every key and
     * measures.
     */
    public RestoreMeasurement restore(
            RetainedCheckpoint checkpoint, int parallelism, long keys, int valueBytes)
            throws Exception {
        return restore(checkpoint, parallelism, keys, valueBytes, RecoveryClaimMode.NO_CLAIM);
    }

    /**
     * Restores {@code checkpoint} at {@code parallelism} in {@code claimMode}, verifies every key
     * and measures.
     */
    public RestoreMeasurement restore(
            RetainedCheckpoint checkpoint,
            int parallelism,
            long keys,
            int valueBytes,
            RecoveryClaimMode claimMode)
            throws Exception {
        ProbeTally.reset();
        InitializationSpans.reset();
        JobGraph job =
                RescaleJobs.verify(
                        config, parallelism, keys, valueBytes, checkpoint.path(), claimMode);
        JobID id = cluster.submitJob(job).get().getJobID();
        String what = backendName + " " + checkpoint.parallelism() + "->" + parallelism;
        Map<String, Long> span;
        AccessExecutionGraph graph;
        boolean readComplete;
        try {
            // The restore itself must finish; the read deadline starts at the first probe.
            awaitOrFail(id, what + " verify", () -> ProbeTally.total() > 0);
            readComplete =
                    awaitOrFail(
                            id, what + " verify", () -> ProbeTally.total() >= keys, readDeadline);
            span = awaitSpan(checkpoint.checkpointId());
            graph = cluster.getExecutionGraph(id).get();
        } finally {
            cancel(id);
        }
        long ok = ProbeTally.count(ProbeTally.Outcome.OK);
        long missing = ProbeTally.count(ProbeTally.Outcome.MISSING);
        long wrong = ProbeTally.count(ProbeTally.Outcome.WRONG);
        long expected = readComplete ? keys : ProbeTally.total();
        if (ok != expected || missing != 0 || wrong != 0 || ProbeTally.total() != expected) {
            throw new IllegalStateException(
                    String.format(
                            "%s: STATE LOST after restore: %d keys, %d found with the right value, %d missing, %d wrong",
                            what, keys, ok, missing, wrong));
        }
        RestoredCheckpointStats restored =
                graph.getCheckpointStatsSnapshot() == null
                        ? null
                        : graph.getCheckpointStatsSnapshot().getLatestRestoredCheckpoint();
        if (restored == null || restored.getCheckpointId() != checkpoint.checkpointId()) {
            throw new IllegalStateException(
                    what
                            + ": the verify job did not restore checkpoint "
                            + checkpoint.checkpointId());
        }
        List<Long> probes = new ArrayList<>();
        Map<Integer, Long> perSubtask = ProbeTally.perSubtask();
        for (int i = 0; i < parallelism; i++) {
            probes.add(perSubtask.getOrDefault(i, 0L));
        }
        return new RestoreMeasurement(
                initializingMillis(graph, parallelism, what),
                probes,
                ok,
                ProbeTally.spanMillis(),
                readComplete,
                span == null ? Map.of() : span);
    }

    /** Per subtask of the verify operator: its restore time ({@link RestoreTimes}). */
    private static List<Long> initializingMillis(
            AccessExecutionGraph graph, int parallelism, String what) {
        AccessExecutionJobVertex vertex = null;
        for (AccessExecutionJobVertex v : graph.getVerticesTopologically()) {
            if (v.getName().contains(RescaleJobs.VERIFY_NAME)) {
                vertex = v;
            }
        }
        if (vertex == null || vertex.getParallelism() != parallelism) {
            throw new IllegalStateException(
                    what + ": no verify vertex with parallelism " + parallelism);
        }
        return RestoreTimes.perSubtask(vertex, what);
    }

    /** Polls {@code done}; fails if the job reaches a terminal state first or takes too long. */
    private void awaitOrFail(JobID id, String what, BooleanSupplier done) throws Exception {
        if (!awaitOrFail(id, what, done, JOB_TIMEOUT)) {
            throw new IllegalStateException(
                    backendName + " " + what + " job did not finish within " + JOB_TIMEOUT);
        }
    }

    /**
     * Polls {@code done}; fails if the job reaches a terminal state first; returns false if {@code
     * timeout} passes first.
     */
    private boolean awaitOrFail(JobID id, String what, BooleanSupplier done, Duration timeout)
            throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!done.getAsBoolean()) {
            JobStatus status = cluster.getJobStatus(id).get();
            if (status.isGloballyTerminalState()) {
                if (done.getAsBoolean()) {
                    return true;
                }
                throw JobEnds.unexpected(
                        cluster, id, backendName + " " + what + " job ended with " + status);
            }
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(20);
        }
        return true;
    }

    private CompletedCheckpointStats awaitCompletedStats(JobID id, long checkpointId)
            throws Exception {
        return CompletedCheckpoints.await(cluster, id, checkpointId, SPAN_TIMEOUT, backendName);
    }

    private static Map<String, Long> awaitSpan(long checkpointId) throws InterruptedException {
        long deadline = System.nanoTime() + SPAN_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            Map<String, Long> span = InitializationSpans.forCheckpoint(checkpointId);
            if (span != null) {
                return span;
            }
            Thread.sleep(20);
        }
        return null;
    }

    private void cancel(JobID id) throws Exception {
        if (!cluster.getJobStatus(id).get().isGloballyTerminalState()) {
            try {
                cluster.cancelJob(id).get();
            } catch (Exception e) {
                // It may have ended between the status check and the cancel; the result says how.
            }
        }
        cluster.requestJobResult(id).get();
    }

    @Override
    public void close() throws Exception {
        cluster.close();
    }
}
