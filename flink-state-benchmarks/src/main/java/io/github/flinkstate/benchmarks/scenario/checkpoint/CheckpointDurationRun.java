package io.github.flinkstate.benchmarks.scenario.checkpoint;

import io.github.flinkstate.benchmarks.common.BackendSpec;
import io.github.flinkstate.benchmarks.common.CompletedCheckpoints;
import io.github.flinkstate.benchmarks.common.DriverCheckpoints;
import io.github.flinkstate.benchmarks.common.JobEnds;
import io.github.flinkstate.benchmarks.scenario.rescale.WriteValues;
import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.CheckpointType;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.runtime.checkpoint.AbstractCheckpointStats;
import org.apache.flink.runtime.checkpoint.CheckpointStatsSnapshot;
import org.apache.flink.runtime.checkpoint.CompletedCheckpointStats;
import org.apache.flink.runtime.checkpoint.TaskStateStats;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;

/**
 * One measurement of checkpoint duration for one backend and one state size, on its own embedded
 * {@link MiniCluster} (one TaskManager, {@code parallelism} slots, 256 MiB managed memory per
 * slot's share as in the rescale scenario):
 *
 * <pre>
 *   sequence 0..inf (p=1) -> SteadyKeys (p=1) -> keyBy -> WriteValues (p) -> discard
 * </pre>
 *
 * <ol>
 *   <li>load: every key written once, no checkpoint running;
 *   <li>the first checkpoint (everything is new) is measured separately;
 *   <li>{@code warmup} further checkpoints are taken and ignored, then {@code checkpoints} are
 *       measured; before each, the job runs {@code pause} of steady updates, so each checkpoint
 *       covers about the same amount of changed state whatever the total size.
 * </ol>
 *
 * Checkpoints are triggered by the driver (periodic ones are pushed out of reach, see {@link
 * DriverCheckpoints}), so none overlaps the load or another. Not thread-safe; one run at a time.
 */
public final class CheckpointDurationRun {

    private static final Duration TIMEOUT = Duration.ofMinutes(30);

    private final BackendSpec backend;
    private final int parallelism;
    private final int valueBytes;
    private final int updatesPerSecond;
    private final Duration pause;
    private final int warmup;
    private final int checkpoints;
    private final Function<File, String> checkpointUri;

    public CheckpointDurationRun(
            BackendSpec backend,
            int parallelism,
            int valueBytes,
            int updatesPerSecond,
            Duration pause,
            int warmup,
            int checkpoints,
            Function<File, String> checkpointUri) {
        this.backend = backend;
        this.parallelism = parallelism;
        this.valueBytes = valueBytes;
        this.updatesPerSecond = updatesPerSecond;
        this.pause = pause;
        this.warmup = warmup;
        this.checkpoints = checkpoints;
        this.checkpointUri = checkpointUri;
    }

    /** Loads about {@code targetBytes} of state and measures; the checkpoints go to {@code dir}. */
    public CheckpointDurationResult run(long targetBytes, File dir) throws Exception {
        long keys = Math.max(1, targetBytes / valueBytes);
        Configuration config = config(dir);
        WriteValues.reset();
        try (MiniCluster cluster = cluster(config)) {
            JobID id = cluster.submitJob(job(config, keys)).get().getJobID();
            try {
                long loadStart = System.nanoTime();
                await(cluster, id, "load", () -> WriteValues.written() >= keys);
                long loadMillis = (System.nanoTime() - loadStart) / 1_000_000;
                CompletedCheckpointStats first = checkpoint(cluster, id);
                for (int i = 0; i < warmup; i++) {
                    Thread.sleep(pause.toMillis());
                    checkpoint(cluster, id);
                }
                List<Long> durations = new ArrayList<>();
                List<Long> uploaded = new ArrayList<>();
                List<Long> sync = new ArrayList<>();
                CompletedCheckpointStats last = first;
                for (int i = 0; i < checkpoints; i++) {
                    Thread.sleep(pause.toMillis());
                    last = checkpoint(cluster, id);
                    durations.add(last.getEndToEndDuration());
                    uploaded.add(last.getCheckpointedSize());
                    sync.add(longestSyncPhase(last));
                }
                return new CheckpointDurationResult(
                        backend.name(),
                        targetBytes,
                        keys,
                        last.getStateSize(),
                        loadMillis,
                        first.getEndToEndDuration(),
                        first.getCheckpointedSize(),
                        durations,
                        uploaded,
                        sync);
            } finally {
                cancel(cluster, id);
            }
        }
    }

    private Configuration config(File dir) {
        Configuration config = new Configuration();
        backend.applyTo(config);
        config.setString("execution.checkpointing.interval", DriverCheckpoints.INTERVAL);
        config.setString("execution.checkpointing.min-pause", "0 ms");
        config.setString("execution.checkpointing.dir", checkpointUri.apply(dir));
        config.setString("execution.checkpointing.checkpoints-after-tasks-finish", "false");
        config.setString("web.checkpoints.history", Integer.toString(warmup + checkpoints + 10));
        config.setString(
                "execution.checkpointing.externalized-checkpoint-retention",
                "RETAIN_ON_CANCELLATION");
        config.setString("restart-strategy.type", "none");
        config.setString("taskmanager.memory.managed.size", "256m");
        return config;
    }

    private MiniCluster cluster(Configuration config) throws Exception {
        MiniCluster cluster =
                new MiniCluster(
                        new MiniClusterConfiguration.Builder()
                                .setConfiguration(config)
                                .setNumTaskManagers(1)
                                .setNumSlotsPerTaskManager(parallelism)
                                .build());
        cluster.start();
        return cluster;
    }

    /**
     * Loads about {@code targetBytes}, retains one checkpoint, cancels, resumes from it in NO_CLAIM
     * mode (the job then only updates), and measures the first checkpoint after the resume, the
     * longest stall of the updates while it ran, and {@code checkpoints} checkpoints after it.
     */
    public NoClaimRestoreResult runNoClaimRestore(long targetBytes, File dir) throws Exception {
        long keys = Math.max(1, targetBytes / valueBytes);
        Configuration config = config(dir);
        WriteValues.reset();
        try (MiniCluster cluster = cluster(config)) {
            JobID load = cluster.submitJob(job(config, keys)).get().getJobID();
            CompletedCheckpointStats retained;
            try {
                await(cluster, load, "load", () -> WriteValues.written() >= keys);
                retained = checkpoint(cluster, load);
            } finally {
                cancel(cluster, load);
            }
            JobGraph resume = job(config, keys);
            resume.setSavepointRestoreSettings(
                    SavepointRestoreSettings.forPath(
                            retained.getExternalPath(), false, RecoveryClaimMode.NO_CLAIM));
            long before = WriteValues.written();
            JobID id = cluster.submitJob(resume).get().getJobID();
            try {
                await(cluster, id, "resume", () -> WriteValues.written() > before);
                long[] stall = new long[1];
                CompletedCheckpointStats first =
                        firstCheckpointAfter(cluster, id, retained.getCheckpointId(), stall);
                List<Long> later = new ArrayList<>();
                for (int i = 0; i < checkpoints; i++) {
                    Thread.sleep(pause.toMillis());
                    later.add(checkpoint(cluster, id).getEndToEndDuration());
                }
                return new NoClaimRestoreResult(
                        backend.name(),
                        targetBytes,
                        first.getStateSize(),
                        first.getEndToEndDuration(),
                        first.getCheckpointedSize(),
                        stall[0],
                        later);
            } finally {
                cancel(cluster, id);
            }
        }
    }

    /**
     * The first checkpoint of {@code job} after {@code restoredId} (Flink's coordinator triggers it
     * itself right after a restore; if it has not within {@link #pause}, the driver triggers one),
     * while sampling the update counter every 5 ms: the longest interval without progress until it
     * completed goes to {@code longestStall[0]}.
     */
    private CompletedCheckpointStats firstCheckpointAfter(
            MiniCluster cluster, JobID job, long restoredId, long[] longestStall) throws Exception {
        long start = System.nanoTime();
        long deadline = start + TIMEOUT.toNanos();
        boolean triggered = false;
        long last = WriteValues.written();
        long lastChange = start;
        long longest = 0;
        for (int i = 0; System.nanoTime() < deadline; i++) {
            Thread.sleep(5);
            long now = System.nanoTime();
            long written = WriteValues.written();
            if (written != last) {
                last = written;
                lastChange = now;
            }
            longest = Math.max(longest, (now - lastChange) / 1_000_000);
            if (i % 10 != 0) {
                continue;
            }
            CheckpointStatsSnapshot stats =
                    cluster.getExecutionGraph(job).get().getCheckpointStatsSnapshot();
            AbstractCheckpointStats firstAfter = null;
            if (stats != null) {
                for (AbstractCheckpointStats cp : stats.getHistory().getCheckpoints()) {
                    if (cp.getCheckpointId() > restoredId
                            && (firstAfter == null
                                    || cp.getCheckpointId() < firstAfter.getCheckpointId())) {
                        firstAfter = cp;
                    }
                }
            }
            if (firstAfter instanceof CompletedCheckpointStats completed) {
                longestStall[0] = longest;
                return completed;
            }
            if (firstAfter == null && !triggered && now - start > pause.toNanos()) {
                cluster.triggerCheckpoint(job, CheckpointType.CONFIGURED);
                triggered = true;
            }
        }
        throw new IllegalStateException(
                backend.name() + ": no checkpoint completed after the restore within " + TIMEOUT);
    }

    private static void cancel(MiniCluster cluster, JobID id) throws Exception {
        if (!cluster.getJobStatus(id).get().isGloballyTerminalState()) {
            cluster.cancelJob(id).get();
        }
        cluster.requestJobResult(id).get();
    }

    private JobGraph job(Configuration config, long keys) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
        env.setParallelism(parallelism);
        env.setMaxParallelism(128);
        env.fromSequence(0, Long.MAX_VALUE)
                .setParallelism(1)
                .uid("sequence")
                .name("sequence")
                .flatMap(new SteadyKeys(keys, updatesPerSecond))
                .setParallelism(1)
                .uid("steady-keys")
                .name("steady-keys")
                .keyBy(k -> k, Types.LONG)
                .process(new WriteValues(valueBytes))
                .uid("write-values")
                .name("write-values")
                .sinkTo(new DiscardingSink<>())
                .name("discard");
        return env.getStreamGraph().getJobGraph();
    }

    /** The longest synchronous phase of any subtask of {@code stats}, in milliseconds. */
    private static long longestSyncPhase(CompletedCheckpointStats stats) {
        long longest = 0;
        for (TaskStateStats task : stats.getAllTaskStateStats()) {
            longest =
                    Math.max(
                            longest,
                            task.getSummaryStats().getSyncCheckpointDurationStats().getMaximum());
        }
        return longest;
    }

    /** Triggers one checkpoint and waits for its statistics; fails if it does not complete. */
    private CompletedCheckpointStats checkpoint(MiniCluster cluster, JobID id) throws Exception {
        long checkpointId = cluster.triggerCheckpoint(id, CheckpointType.CONFIGURED).get();
        return CompletedCheckpoints.await(
                cluster, id, checkpointId, Duration.ofSeconds(30), backend.name());
    }

    private void await(MiniCluster cluster, JobID id, String what, BooleanSupplier done)
            throws Exception {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!done.getAsBoolean()) {
            JobStatus status = cluster.getJobStatus(id).get();
            if (status.isGloballyTerminalState()) {
                throw JobEnds.unexpected(
                        cluster,
                        id,
                        backend.name() + " " + what + ": the job ended with " + status);
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(
                        backend.name() + " " + what + " did not finish within " + TIMEOUT);
            }
            Thread.sleep(20);
        }
    }
}
