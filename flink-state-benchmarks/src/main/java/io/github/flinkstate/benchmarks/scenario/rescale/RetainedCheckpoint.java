package io.github.flinkstate.benchmarks.scenario.rescale;

/**
 * A checkpoint the load job took and kept (RETAIN_ON_CANCELLATION). Immutable.
 *
 * @param parallelism the load job's parallelism
 * @param checkpointId Flink's checkpoint id
 * @param path the external pointer to restore from
 * @param fullBytes the full state size of the checkpoint (Flink's checkpoint statistics)
 * @param checkpointedBytes the bytes this checkpoint uploaded (equal to the full size for the first
 *     incremental checkpoint)
 */
public record RetainedCheckpoint(
        int parallelism, long checkpointId, String path, long fullBytes, long checkpointedBytes) {}
