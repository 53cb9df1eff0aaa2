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
 * {@code max} (the configured {@code upload.timeout}). Until {@value #MIN_COMPARABLE} comparable
 * attempts were seen, and when adaptive hedging is off, the delay is {@code max}.
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
    static final long SIZE_FACTOR = 4;
    static final long SMALL_BYTES = 256 * 1024;

    private final boolean adaptive;
    private final long minNanos;
    private final long maxNanos;

    @GuardedBy("this")
    private final long[] durations = new long[SAMPLES];

    @GuardedBy("this")
    private final long[] sizes = new long[SAMPLES];

    @GuardedBy("this")
    private long recorded;

    @GuardedBy("this")
    private long lastDelayNanos;

    public HedgeDelay(boolean adaptive, Duration min, Duration max) {
        this.adaptive = adaptive;
        this.maxNanos = max.toNanos();
        this.minNanos = Math.min(min.toNanos(), maxNanos);
        this.lastDelayNanos = maxNanos;
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
            long[] comparable = new long[filled];
            int n = 0;
            for (int i = 0; i < filled; i++) {
                if (comparable(sizes[i], bytes)) {
                    comparable[n++] = durations[i];
                }
            }
            if (n >= MIN_COMPARABLE) {
                Arrays.sort(comparable, 0, n);
                long p90 = comparable[(int) Math.ceil(0.9 * n) - 1];
                delay = Math.max(minNanos, Math.min(maxNanos, (long) (FACTOR * p90)));
            }
        }
        lastDelayNanos = delay;
        return Duration.ofNanos(delay);
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
