package io.github.flinkstate.benchmarks.scenario.remote;

import java.util.List;

/**
 * What one run of the remote read scenario measured, all times from the start of the restore.
 * Immutable.
 *
 * @param label the backend row ({@link RemoteReadTarget#label()})
 * @param backend {@code disaggregated}, {@code forst} or {@code rocksdb}
 * @param cachePercent local cache budget as a share of the state
 * @param keys key distribution
 * @param round 1-based round number
 * @param stateBytes size of the checkpointed state
 * @param restoreMillis until the restored backend and its state were created
 * @param firstGetMillis until the first get returned
 * @param bucketMillis width of one bucket
 * @param bucketGets gets completed in each bucket
 * @param bucketPrimaryReads read calls on the remote file system in each bucket (the job's misses
 *     and any background warm-up's reads; the first bucket holds the restore's reads): the count is
 *     taken when a get completes past a bucket's end, so the reads of that get count in the bucket
 *     it started in
 * @param primaryReads read calls on the remote file system during the run
 * @param primaryReadBytes bytes read from the remote file system during the run
 */
public record RemoteReadResult(
        String label,
        String backend,
        int cachePercent,
        String keys,
        int round,
        long stateBytes,
        long restoreMillis,
        long firstGetMillis,
        int bucketMillis,
        List<Long> bucketGets,
        List<Long> bucketPrimaryReads,
        long primaryReads,
        long primaryReadBytes) {

    /** Share of the run, at its end, whose buckets make up the steady throughput. */
    static final double STEADY_SHARE = 0.3;

    /** Gets per second in bucket {@code i}. */
    public double opsPerSecond(int i) {
        return bucketGets.get(i) * 1000.0 / bucketMillis;
    }

    /** Median gets per second of the last {@link #STEADY_SHARE} of the buckets. */
    public double steadyOpsPerSecond() {
        int n = bucketGets.size();
        int from = n - Math.max(1, (int) Math.round(n * STEADY_SHARE));
        double[] tail = new double[n - from];
        for (int i = from; i < n; i++) {
            tail[i - from] = opsPerSecond(i);
        }
        return RemoteReadTable.median(tail);
    }

    /**
     * Milliseconds from the restore's start until the first one-second window (whole buckets) whose
     * throughput reached {@code fraction} of the steady throughput, measured at the window's end;
     * -1 if none did.
     */
    public long millisToReach(double fraction) {
        int window = Math.max(1, 1000 / bucketMillis);
        double target = fraction * steadyOpsPerSecond();
        long sum = 0;
        for (int i = 0; i < bucketGets.size(); i++) {
            sum += bucketGets.get(i);
            if (i >= window) {
                sum -= bucketGets.get(i - window);
            }
            if (i + 1 >= window && sum * 1000.0 / (window * (long) bucketMillis) >= target) {
                return (i + 1L) * bucketMillis;
            }
        }
        return -1;
    }

    /** Mean gets per second over the first {@code seconds} after the restore started. */
    public double meanOpsPerSecond(int seconds) {
        int n = Math.min(bucketGets.size(), (int) (seconds * 1000L / bucketMillis));
        long sum = 0;
        for (int i = 0; i < n; i++) {
            sum += bucketGets.get(i);
        }
        return n == 0 ? 0 : sum * 1000.0 / (n * (long) bucketMillis);
    }
}
