package io.github.flinkstate.benchmarks.scenario.checkpoint;

import java.util.List;

/**
 * What {@link CheckpointDurationRun#runNoClaimRestore} measured: the first checkpoint after a
 * NO_CLAIM restore (Flink requires it to reference nothing of the restored checkpoint) and the
 * checkpoints after it. Immutable.
 *
 * @param stateBytes full state size of the first checkpoint after the restore
 * @param firstMillis end-to-end duration of that first checkpoint
 * @param firstCheckpointedBytes Flink's checkpointed size of that first checkpoint
 * @param longestStallMillis longest interval without a processed update while that first checkpoint
 *     ran (sampled every 5 ms): how long the job stopped processing because of it
 * @param laterMillis durations of the checkpoints after it
 */
public record NoClaimRestoreResult(
        String backend,
        long targetBytes,
        long stateBytes,
        long firstMillis,
        long firstCheckpointedBytes,
        long longestStallMillis,
        List<Long> laterMillis) {

    public long laterP50Millis() {
        return new CheckpointDurationResult(
                        backend, targetBytes, 0, 0, 0, 0, 0, laterMillis, List.of(), List.of())
                .p50Millis();
    }
}
