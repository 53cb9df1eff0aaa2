package io.github.flinkstate.benchmarks.scenario.changelog;

/**
 * One configuration's figures in the changelog scenario. Immutable.
 *
 * @param config {@code rocksdb} (changelog off), {@code filesystem} (Flink's DSTL) or {@code
 *     dfs-batched} (ours)
 * @param cpP50Ms checkpoint end-to-end duration, median
 * @param cpP99Ms checkpoint end-to-end duration, 99th percentile
 * @param checkpointedBytes sum of the checkpointed (incremental) sizes of completed checkpoints
 * @param fullSizeBytes full size of the last checkpoint
 * @param dstlFiles files created under the DSTL base path
 * @param dstlBytes bytes written under the DSTL base path
 * @param allFilesCreated files created on the slow file system (DSTL and checkpoints)
 * @param tailDelays uploads that got the tail latency
 * @param recordsPerSecond throughput of the load phase
 * @param restoreMs longest restore time of a subtask of the restored job ({@code RestoreTimes})
 * @param submitToRunningMs from submitting the restored job until every subtask ran
 * @param restoreDstlOpens files opened under the DSTL base path during the restore
 * @param restoreDstlReadBytes bytes read under the DSTL base path during the restore
 * @param shape what the restored checkpoint's changelog holds ({@link ChangelogCheckpointShape})
 */
public record ChangelogResult(
        String config,
        double cpP50Ms,
        double cpP99Ms,
        long completedCheckpoints,
        long failedCheckpoints,
        long checkpointedBytes,
        long fullSizeBytes,
        long dstlFiles,
        long dstlBytes,
        long allFilesCreated,
        long tailDelays,
        double recordsPerSecond,
        long restoreMs,
        long submitToRunningMs,
        long restoreDstlOpens,
        long restoreDstlReadBytes,
        ChangelogCheckpointShape shape) {}
