package io.github.flinkstate.benchmarks.common;

/** What one job run measured. Immutable. */
public record JobStats(
        String backend,
        long records,
        long netRuntimeMillis,
        int restarts,
        long completedCheckpoints,
        long checkpointAvgMillis,
        long checkpointMaxMillis,
        long latestCheckpointFullSize,
        double cacheHitRatio) {

    public double recordsPerSecond() {
        return netRuntimeMillis == 0 ? 0 : records * 1000.0 / netRuntimeMillis;
    }
}
