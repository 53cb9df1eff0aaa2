package io.github.flinkstate.cluster.harness;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeoutException;

/** Stand-in until flink-state-testing's Waits is merged: polls a condition with a deadline. */
public final class Waits {

    private Waits() {}

    public static void until(String what, Duration timeout, Callable<Boolean> condition)
            throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.call()) {
            if (System.nanoTime() - deadline > 0) {
                throw new TimeoutException("timed out after " + timeout + " waiting until " + what);
            }
            Thread.sleep(20);
        }
    }
}
