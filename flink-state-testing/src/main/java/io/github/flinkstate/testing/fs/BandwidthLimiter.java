package io.github.flinkstate.testing.fs;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.locks.LockSupport;

/**
 * Caps the throughput of one simulated link: every transfer of {@code n} bytes reserves {@code n /
 * bytesPerSecond} on a shared timeline and sleeps until its reservation ends, so concurrent streams
 * share the bandwidth.
 *
 * <p>A transfer may start up to {@link #IDLE_ALLOWANCE_NANOS} before it is asked for when the link
 * was idle that long (a token bucket holding 1 ms of bytes). A real client buffers writes and keeps
 * the link busy; without the allowance every sleep's overshoot (tens of microseconds of {@code
 * parkNanos}) would leave the link idle, and a stream of 2 KB writes at 100 MB/s would get a
 * quarter of the bandwidth. Over any interval the link still carries at most its rate times the
 * interval plus 1 ms.
 *
 * <p>Thread safety: thread-safe; the timeline is guarded by {@code this}.
 */
final class BandwidthLimiter {

    static final long IDLE_ALLOWANCE_NANOS = 1_000_000L;

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
     * Reserves a transfer of {@code bytes} asked for at {@code now}: it starts when the link is
     * free, but no earlier than the idle allowance before {@code now}; returns its end.
     */
    synchronized long reserve(long bytes, long now) {
        long start = Math.max(now - IDLE_ALLOWANCE_NANOS, nextFreeNanos);
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
