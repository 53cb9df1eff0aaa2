package io.github.flinkstate.changelog.upload;

import java.time.Duration;
import java.util.Arrays;
import javax.annotation.concurrent.GuardedBy;
import javax.annotation.concurrent.ThreadSafe;

/**
 * How long an upload attempt may run before a hedged attempt starts, learnt from the durations of
 * the storage's recent successful attempts. A fixed timeout (Flink's DSTL retries after 1 s) must
 * sit above every normal write, so a write stuck in the file system's tail costs the checkpoint the
 * whole timeout; here the delay follows what writes of a similar size have taken: {@value #FACTOR}
 * times the 90th percentile of the recent comparable attempts, at least {@code min} and at most
 * {@code max} (the configured {@code upload.timeout}). When adaptive hedging is off, the delay is
 * always {@code max}.
 *
 * <p>Warm-up: a storage makes few uploads (about one per checkpoint), so waiting for {@value
 * #MIN_COMPARABLE} comparable attempts with the full timeout would leave a job's first minutes
 * unhedged. Before any attempt finished, the delay is {@code initial}; then, until {@value
 * #MIN_COMPARABLE} comparable attempts were seen, it is {@value #WARM_UP_FACTOR} times the (lower)
 * median of all recent attempts of any size, each scaled up linearly to the image's size when it
 * wrote less (never scaled down), within the same bounds. The median, not a high percentile: with a
 * few samples a high percentile is the slowest one, and one attempt that met the tail (a hedge's
 * loser also records its time) would hold the delay at {@code max} for the rest of the warm-up.
 * Only the time a hedge starts changes: which attempt wins and what happens to the others' files is
 * {@link HedgedUpload}'s business, so a shorter delay can cost a duplicate write but never data.
 *
 * <p>Comparable sizes: within a factor of {@value #SIZE_FACTOR} of each other, where sizes below
 * {@value #SMALL_BYTES} bytes count as that size (small writes cost the file system's latency, not
 * its bandwidth).
 *
 * <p>Thread safety: thread-safe (one lock); attempts record from upload threads, batches ask from
 * the scheduler's threads.
 */
@ThreadSafe
public final class HedgeDelay {

    static final int SAMPLES = 128;
    static final int MIN_COMPARABLE = 8;
    static final double FACTOR = 3.0;
    static final double WARM_UP_FACTOR = 2 * FACTOR;
    static final long SIZE_FACTOR = 4;
    static final long SMALL_BYTES = 256 * 1024;

    private final boolean adaptive;
    private final long minNanos;
    private final long initialNanos;
    private final long maxNanos;

    @GuardedBy("this")
    private final long[] durations = new long[SAMPLES];

    @GuardedBy("this")
    private final long[] sizes = new long[SAMPLES];

    @GuardedBy("this")
    private long recorded;

    @GuardedBy("this")
    private long lastDelayNanos;

    /**
     * @param min the shortest adaptive delay
     * @param initial the delay before any attempt finished (bounded by {@code min} and {@code max})
     * @param max the timeout: the delay when not adaptive, and the longest adaptive one
     */
    public HedgeDelay(boolean adaptive, Duration min, Duration initial, Duration max) {
        this.adaptive = adaptive;
        this.maxNanos = max.toNanos();
        this.minNanos = Math.min(min.toNanos(), maxNanos);
        this.initialNanos = bounded(initial.toNanos());
        this.lastDelayNanos = adaptive ? initialNanos : maxNanos;
    }

    /** Records a successful attempt that wrote {@code bytes} in {@code nanos}. */
    public synchronized void record(long nanos, long bytes) {
        int slot = (int) (recorded++ % SAMPLES);
        durations[slot] = nanos;
        sizes[slot] = bytes;
    }

    /** The hedging delay for an attempt that writes {@code bytes}. */
    public synchronized Duration forImage(long bytes) {
        long delay = maxNanos;
        if (adaptive) {
            int filled = (int) Math.min(recorded, SAMPLES);
            if (filled == 0) {
                delay = initialNanos;
            } else {
                long[] comparable = new long[filled];
                int n = 0;
                for (int i = 0; i < filled; i++) {
                    if (comparable(sizes[i], bytes)) {
                        comparable[n++] = durations[i];
                    }
                }
                delay =
                        n >= MIN_COMPARABLE
                                ? bounded((long) (FACTOR * p90(comparable, n)))
                                : bounded(
                                        (long)
                                                (WARM_UP_FACTOR
                                                        * lowerMedian(
                                                                scaledTo(bytes, filled), filled)));
            }
        }
        lastDelayNanos = delay;
        return Duration.ofNanos(delay);
    }

    /** Every recent duration, scaled up linearly to {@code bytes} if its attempt wrote less. */
    @GuardedBy("this")
    private long[] scaledTo(long bytes, int filled) {
        long target = Math.max(bytes, SMALL_BYTES);
        long[] scaled = new long[filled];
        for (int i = 0; i < filled; i++) {
            long written = Math.max(sizes[i], SMALL_BYTES);
            double factor = Math.max(1.0, (double) target / written);
            scaled[i] = (long) Math.min(Long.MAX_VALUE / 2.0, durations[i] * factor);
        }
        return scaled;
    }

    /** The 90th percentile of the first {@code n} values (sorts them). */
    private static long p90(long[] values, int n) {
        Arrays.sort(values, 0, n);
        return values[(int) Math.ceil(0.9 * n) - 1];
    }

    /** The lower median of the first {@code n} values (sorts them). */
    private static long lowerMedian(long[] values, int n) {
        Arrays.sort(values, 0, n);
        return values[(n - 1) / 2];
    }

    private long bounded(long nanos) {
        return Math.max(minNanos, Math.min(maxNanos, nanos));
    }

    /** The delay last handed out, in milliseconds (a gauge). */
    public synchronized long lastDelayMillis() {
        return lastDelayNanos / 1_000_000;
    }

    private static boolean comparable(long a, long b) {
        long small = Math.max(Math.min(a, b), SMALL_BYTES);
        return Math.max(a, b) <= SIZE_FACTOR * small;
    }
}
