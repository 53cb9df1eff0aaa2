package io.github.flinkstate.testing.fs;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.locks.LockSupport;

/**
 * Caps the throughput of one simulated link: every transfer of {@code n} bytes reserves {@code n /
 * bytesPerSecond} on a shared timeline and sleeps until its reservation ends, so concurrent streams
 * share the bandwidth.
 *
 * <p>A transfer is ready when the caller's previous injected wait (a transfer or a latency) ended,
 * not when the caller woke up from it: a sleep overshoots by tens of microseconds, and a real
 * client, which buffers writes and has its request on the wire when the latency ends, does not idle
 * the link meanwhile. Without this, a stream of 2 KB writes at 100 MB/s got a quarter of the
 * bandwidth. A caller that woke more than {@link Sleeps#OVERSHOOT_NANOS} after its wait ended (it
 * did other work) is ready when it asks. So a transfer never starts before the latency in front of
 * it has passed, and over any interval the link carries at most its rate times the interval plus
 * {@link Sleeps#OVERSHOOT_NANOS}.
 *
 * <p>Thread safety: thread-safe; the timeline is guarded by {@code this}, the end of each thread's
 * last wait is thread-local.
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
        long end = reserve(bytes, Sleeps.readyAt(System.nanoTime()));
        Sleeps.sleepUntil(end);
    }

    /**
     * Reserves a transfer of {@code bytes} that is ready at {@code ready}: it starts then or when
     * the link is free, whichever is later; returns its end.
     */
    synchronized long reserve(long bytes, long ready) {
        long start = Math.max(ready, nextFreeNanos);
        long end = start + (long) (bytes * nanosPerByte);
        nextFreeNanos = end;
        return end;
    }

    /**
     * Sleep helper shared by latency and bandwidth injection. Parks until the deadline rather than
     * calling {@code Thread.sleep(millis, nanos)}, which rounds any sub-millisecond rest up to a
     * whole millisecond: a 4 KiB transfer at 100 MB/s (41 us) would otherwise cost 1 ms, and a 2 ms
     * latency plus that transfer 3 ms instead of 2.04 ms. Remembers, per thread, when its last wait
     * ended ({@link #readyAt}).
     */
    static final class Sleeps {

        /** How late after its wait ended a thread may wake and still be taken as ready then. */
        static final long OVERSHOOT_NANOS = 200_000L;

        private static final long NONE = Long.MIN_VALUE;
        private static final ThreadLocal<long[]> LAST_DEADLINE =
                ThreadLocal.withInitial(() -> new long[] {NONE});

        private Sleeps() {}

        static void sleepNanos(long nanos) throws IOException {
            sleepUntil(System.nanoTime() + Math.max(0, nanos));
        }

        /** Sleeps until {@code deadline} (not at all if it passed) and remembers it. */
        static void sleepUntil(long deadline) throws IOException {
            LAST_DEADLINE.get()[0] = deadline;
            for (long left = deadline - System.nanoTime();
                    left > 0;
                    left = deadline - System.nanoTime()) {
                LockSupport.parkNanos(left);
                if (Thread.interrupted()) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException("interrupted during an injected delay");
                }
            }
        }

        /** When the calling thread's next transfer, asked for at {@code now}, is ready. */
        static long readyAt(long now) {
            return readyAt(LAST_DEADLINE.get()[0], now);
        }

        /**
         * {@code lastDeadline} if {@code now} is at most {@link #OVERSHOOT_NANOS} after it (the
         * caller only overslept), else {@code now}.
         */
        static long readyAt(long lastDeadline, long now) {
            return lastDeadline != NONE
                            && now >= lastDeadline
                            && now - lastDeadline <= OVERSHOOT_NANOS
                    ? lastDeadline
                    : now;
        }
    }
}
