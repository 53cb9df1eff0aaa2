package io.github.flinkstate.benchmarks.scenario.remote;

/**
 * The fixed parameters of the remote read scenario, shared by every run of one invocation.
 * Immutable.
 *
 * @param keyCount keys of the value state (each {@code Long} key one entry)
 * @param valueBytes bytes per value: the key index in its first 8 bytes, random bytes after it
 *     (incompressible, so no backend gains by compressing)
 * @param readLatencyMs latency of each read, {@code open} and status call of the remote file system
 *     during the measured phase (the load runs without latency)
 * @param bandwidthMBps bandwidth cap of the remote file system (MB/s) during the measured phase
 * @param managedMemoryBytes Flink managed memory of the task: RocksDB's and ForSt's block cache and
 *     write buffers come out of it; our backend gets a block cache of 3/4 of it
 * @param durationSeconds measured time after the restore starts
 * @param bucketMillis width of one throughput bucket
 * @param keys {@code uniform} or {@code zipf} (see {@code KeyDraws})
 * @param seed seed of the key draws and values
 * @param getsBeforeCheckpoint gets the loaded backend runs (same key distribution, another seed, no
 *     latency) before its checkpoint, as a running job does between checkpoints: what its caches
 *     hold then is what a checkpoint may record for the warm-up after the restore (0: checkpoint
 *     right after the load)
 */
public record RemoteReadSettings(
        int keyCount,
        int valueBytes,
        int readLatencyMs,
        int bandwidthMBps,
        long managedMemoryBytes,
        int durationSeconds,
        int bucketMillis,
        String keys,
        long seed,
        int getsBeforeCheckpoint) {

    public RemoteReadSettings {
        if (getsBeforeCheckpoint < 0) {
            throw new IllegalArgumentException(
                    "gets before the checkpoint must be >= 0: " + getsBeforeCheckpoint);
        }
        if (valueBytes < 8) {
            throw new IllegalArgumentException("value bytes must be >= 8: " + valueBytes);
        }
        if (bucketMillis < 1 || durationSeconds * 1000L < 4L * bucketMillis) {
            throw new IllegalArgumentException(
                    "the run must span at least 4 buckets: "
                            + durationSeconds
                            + " s, "
                            + bucketMillis
                            + " ms buckets");
        }
    }

    /** Buckets in the measured phase. */
    public int buckets() {
        return (int) (durationSeconds * 1000L / bucketMillis);
    }
}
