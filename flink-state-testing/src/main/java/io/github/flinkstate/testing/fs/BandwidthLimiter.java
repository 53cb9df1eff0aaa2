package io.github.flinkstate.testing.fs;

import java.io.IOException;
import java.io.InterruptedIOException;

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

    /** Sleep helper shared by latency and bandwidth injection. */
    static final class Sleeps {
        private Sleeps() {}

        static void sleepNanos(long nanos) throws IOException {
            if (nanos <= 0) {
                return;
            }
            try {
                Thread.sleep(nanos / 1_000_000, (int) (nanos % 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                InterruptedIOException io =
                        new InterruptedIOException("interrupted during an injected delay");
                io.initCause(e);
                throw io;
            }
        }
    }
}
