package io.github.flinkstate.testing.wait;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

/**
 * Waiting with a deadline: polls a condition until it holds or the deadline passes, then fails with
 * a {@link TimeoutException} that says what was awaited. Replaces {@code while (!cond)
 * Thread.sleep(..)} loops, which hang a build when the condition never comes.
 *
 * <p>Thread safety: stateless.
 */
public final class Waits {

    /** Poll interval. */
    private static final long POLL_MILLIS = 10;

    private Waits() {}

    /**
     * Waits until {@code condition} holds.
     *
     * @param what what is awaited, for the timeout message ("the job processed 1000 records")
     * @throws TimeoutException if it does not hold within {@code timeout}
     * @throws InterruptedException if interrupted while waiting
     */
    public static void until(String what, Duration timeout, BooleanSupplier condition)
            throws TimeoutException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new TimeoutException("timed out after " + timeout + " waiting until " + what);
            }
            Thread.sleep(POLL_MILLIS);
        }
    }

    /**
     * Like {@link #until(String, Duration, BooleanSupplier)}, for a condition that may throw (an
     * exception ends the wait and propagates).
     */
    public static void untilChecked(String what, Duration timeout, Callable<Boolean> condition)
            throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.call()) {
            if (System.nanoTime() - deadline > 0) {
                throw new TimeoutException("timed out after " + timeout + " waiting until " + what);
            }
            Thread.sleep(POLL_MILLIS);
        }
    }
}
