package io.github.flinkstate.cluster.job;

import org.apache.flink.api.common.functions.MapFunction;

/**
 * Lets at most {@code rate} records per second through (per subtask), so that a job lives long
 * enough for checkpoints, kills and savepoints to happen mid-stream. {@code rate <= 0}: no pacing.
 * Not thread-safe (one instance per subtask).
 */
final class Pace<T> implements MapFunction<T, T> {

    private final double rate;
    private transient long startNanos;
    private transient long count;

    Pace(double rate) {
        this.rate = rate;
    }

    @Override
    public T map(T value) throws Exception {
        if (rate > 0) {
            if (count == 0) {
                startNanos = System.nanoTime();
            }
            count++;
            long dueNanos = startNanos + (long) (count * 1e9 / rate);
            long waitNanos = dueNanos - System.nanoTime();
            if (waitNanos > 1_000_000) {
                Thread.sleep(waitNanos / 1_000_000);
            }
        }
        return value;
    }
}
