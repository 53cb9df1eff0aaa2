package io.github.flinkstate.disagg.engine.sst;

import java.io.InterruptedIOException;
import java.util.function.LongSupplier;

/**
 * A token bucket that paces background I/O (a compaction's reads of the primary storage and its
 * writes) to at most {@code bytesPerSecond} on average. Only background threads call {@link
 * #acquire}; foreground reads never touch the limiter, so it can never make them wait.
 *
 * <p>Accounting: the bucket holds at most {@code burstBytes} tokens (a tenth of a second's worth,
 * at least 64 KiB) and refills at the rate. A request takes its bytes at once, even more than the
 * bucket holds, leaving a debt; the caller then sleeps until the debt would be paid. So one large
 * read (a readahead window) costs one sleep of the right length, and over any period the bytes
 * granted never exceed {@code burstBytes + rate * period}.
 *
 * <p>{@link #shutdown()} (store closing) stops pacing: sleepers wake up and later requests pass, so
 * a compaction still running finishes at full speed instead of holding up the close.
 *
 * <p>Thread safety: thread-safe; the bucket is guarded by this object's monitor, sleeps happen
 * outside it.
 */
public final class IoRateLimiter {

    /** Sleeps for a number of nanoseconds (or less, when woken by {@link #shutdown()}). */
    @FunctionalInterface
    public interface Sleeper {
        void sleep(IoRateLimiter limiter, long nanos) throws InterruptedException;
    }

    private static final long NANOS = 1_000_000_000L;

    private final long bytesPerSecond;
    private final long burstBytes;
    private final LongSupplier nanoClock;
    private final Sleeper sleeper;

    // guarded by this
    private long tokens;
    private long lastRefill;
    private long grantedBytes;
    private long throttledRequests;
    private long sleptNanos;
    private boolean shutdown;

    /** A limiter on the system clock; {@code bytesPerSecond} must be positive. */
    public IoRateLimiter(long bytesPerSecond) {
        this(bytesPerSecond, System::nanoTime, IoRateLimiter::waitOnMonitor);
    }

    /** A limiter with an injected clock and sleeper (tests). */
    public IoRateLimiter(long bytesPerSecond, LongSupplier nanoClock, Sleeper sleeper) {
        if (bytesPerSecond <= 0) {
            throw new IllegalArgumentException("rate must be positive: " + bytesPerSecond);
        }
        this.bytesPerSecond = bytesPerSecond;
        this.burstBytes = Math.max(64 << 10, bytesPerSecond / 10);
        this.nanoClock = nanoClock;
        this.sleeper = sleeper;
        this.tokens = burstBytes;
        this.lastRefill = nanoClock.getAsLong();
    }

    public long bytesPerSecond() {
        return bytesPerSecond;
    }

    public long burstBytes() {
        return burstBytes;
    }

    /**
     * Takes {@code bytes} tokens, sleeping while the bucket is in debt.
     *
     * @throws InterruptedIOException if the thread is interrupted while sleeping
     */
    public void acquire(long bytes) throws InterruptedIOException {
        if (bytes <= 0) {
            return;
        }
        long wait;
        synchronized (this) {
            grantedBytes += bytes;
            if (shutdown) {
                return;
            }
            refill();
            tokens -= bytes;
            if (tokens >= 0) {
                return;
            }
            wait = ceilDiv(-tokens * NANOS, bytesPerSecond);
            throttledRequests++;
            sleptNanos += wait;
        }
        try {
            sleeper.sleep(this, wait);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            InterruptedIOException io =
                    new InterruptedIOException("interrupted while pacing background I/O");
            io.initCause(e);
            throw io;
        }
    }

    private void refill() {
        long now = nanoClock.getAsLong();
        long elapsed = now - lastRefill;
        if (elapsed <= 0) {
            return;
        }
        // long enough to fill the bucket from any debt a single request can leave: cap it, so
        // that elapsed * rate cannot overflow after a long idle time
        long fillNanos = ceilDiv((burstBytes - tokens) * NANOS, bytesPerSecond);
        if (elapsed >= fillNanos) {
            tokens = burstBytes;
            lastRefill = now;
            return;
        }
        long add = elapsed * bytesPerSecond / NANOS;
        if (add > 0) {
            tokens += add;
            // keep the remainder's time, so many small refills add up exactly
            lastRefill += add * NANOS / bytesPerSecond;
        }
    }

    private static long ceilDiv(long a, long b) {
        return -Math.floorDiv(-a, b);
    }

    /** Stops pacing for good: sleeping callers wake up, later calls return at once. */
    public void shutdown() {
        synchronized (this) {
            shutdown = true;
            notifyAll();
        }
    }

    /** Tokens in the bucket right now (negative: a debt being slept off). */
    public synchronized long availableTokens() {
        refill();
        return tokens;
    }

    /** Bytes requested so far (paced or not). */
    public synchronized long grantedBytes() {
        return grantedBytes;
    }

    /** Requests that had to sleep. */
    public synchronized long throttledRequests() {
        return throttledRequests;
    }

    /** Nanoseconds callers were told to sleep in total. */
    public synchronized long sleptNanos() {
        return sleptNanos;
    }

    private static void waitOnMonitor(IoRateLimiter limiter, long nanos)
            throws InterruptedException {
        long deadline = System.nanoTime() + nanos;
        synchronized (limiter) {
            long left;
            while (!limiter.shutdown && (left = deadline - System.nanoTime()) > 0) {
                limiter.wait(left / 1_000_000L, (int) (left % 1_000_000L));
            }
        }
    }
}
