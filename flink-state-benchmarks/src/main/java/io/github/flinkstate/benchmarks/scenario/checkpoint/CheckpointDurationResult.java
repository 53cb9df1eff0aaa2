package io.github.flinkstate.benchmarks.scenario.checkpoint;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * What one run of {@link CheckpointDurationRun} measured for one backend and state size. Durations
 * are Flink's end-to-end checkpoint durations (trigger to completion, as the web UI shows them).
 * Immutable.
 *
 * @param stateBytes full state size of the last measured checkpoint (Flink's {@code stateSize})
 * @param loadMillis time to write every key once
 * @param firstMillis duration of the first checkpoint after the load (everything is new)
 * @param firstCheckpointedBytes Flink's checkpointed size of that first checkpoint
 * @param durationsMillis durations of the measured checkpoints, in order
 * @param checkpointedBytes Flink's checkpointed size of each measured checkpoint, in order: bytes
 *     no earlier checkpoint referenced (uploaded by RocksDB and ForSt; for the disaggregated
 *     backend written to the primary storage since the last checkpoint, mostly by compactions)
 * @param syncMillis each measured checkpoint's longest synchronous phase of any subtask, in order:
 *     the time the task thread was blocked by the checkpoint (Flink's "Sync Duration")
 */
public record CheckpointDurationResult(
        String backend,
        long targetBytes,
        long keys,
        long stateBytes,
        long loadMillis,
        long firstMillis,
        long firstCheckpointedBytes,
        List<Long> durationsMillis,
        List<Long> checkpointedBytes,
        List<Long> syncMillis) {

    public long p50Millis() {
        return median(durationsMillis);
    }

    public long maxMillis() {
        return durationsMillis.stream().mapToLong(Long::longValue).max().orElse(0);
    }

    public long p50SyncMillis() {
        return median(syncMillis);
    }

    public long maxSyncMillis() {
        return syncMillis.stream().mapToLong(Long::longValue).max().orElse(0);
    }

    public long p50CheckpointedBytes() {
        return median(checkpointedBytes);
    }

    private static long median(List<Long> values) {
        if (values.isEmpty()) {
            return 0;
        }
        List<Long> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        return sorted.get(sorted.size() / 2);
    }
}
