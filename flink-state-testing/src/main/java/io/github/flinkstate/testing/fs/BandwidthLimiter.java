package io.github.flinkstate.testing.fs;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.locks.LockSupport;

/**
 * Caps the throughput of one simulated link: every transfer of {@code n} bytes reserves {@code n /
 * bytesPerSecond} on a shared timeline and sleeps until its reservation ends, so concurrent streams
 * share the bandwidth.
 *
 * <p>Thread safety: thread-safe; the timeline is guarded by {@code this}.
 */
final class BandwidthLimiter {

    private final double nanosPerByte;
    private long nextFreeNanos = Long.MIN_VALUE;

    BandwidthLimiter(long bytesPerSecond) {
        if (bytesPerSecond <= 0) {
            throw new IllegalArgumentException("bandwidth must be positive: " + bytesPerSecond);
        }
        this.nanosPerByte = 1e9 / bytesPerSecond;
    }

    void acquire(long bytes) throws IOException {
        long end = reserve(bytes, System.nanoTime());
        Sleeps.sleepNanos(end - System.nanoTime());
    }

    /**
     * Reserves a transfer of {@code bytes} starting no earlier than {@code now}; returns its end.
     */
    synchronized long reserve(long bytes, long now) {
        long start = Math.max(now, nextFreeNanos);
        long end = start + (long) (bytes * nanosPerByte);
        nextFreeNanos = end;
        return end;
    }

    /**
     * Sleep helper shared by latency and bandwidth injection. Parks until the deadline rather than
     * calling {@code Thread.sleep(millis, nanos)}, which rounds any sub-millisecond rest up to a
     * whole millisecond: a 4 KiB transfer at 100 MB/s (41 us) would otherwise cost 1 ms, and a 2 ms
     * latency plus that transfer 3 ms instead of 2.04 ms.
     */
    static final class Sleeps {
        private Sleeps() {}

        static void sleepNanos(long nanos) throws IOException {
            if (nanos <= 0) {
                return;
            }
            long deadline = System.nanoTime() + nanos;
            for (long left = nanos; left > 0; left = deadline - System.nanoTime()) {
                LockSupport.parkNanos(left);
                if (Thread.interrupted()) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException("interrupted during an injected delay");
                }
            }
        }
    }
}
