package io.github.flinkstate.testing.job;

import org.apache.flink.api.common.functions.MapFunction;

/**
 * Slows the stream down so that checkpoints, savepoints and failures happen mid-stream: sleeps
 * {@code sleepMillis} on every {@code every}-th record while one of its conditions holds, and
 * counts emitted records in the {@link JobRun}. Conditions (any may be combined; none = always):
 * the run's switch ({@link #whileThrottled()}), fewer than {@code n} completed checkpoints ({@link
 * #untilCheckpoints(int)}), records from an index on ({@link #fromRecord(long)}).
 *
 * <p>Immutable configuration; each {@code with*} method returns a copy. Thread safety: one instance
 * per subtask (Flink copies it).
 */
public final class Throttle implements MapFunction<Long, Long> {

    private static final long serialVersionUID = 1L;

    private final String runId;
    private final int every;
    private final long sleepMillis;
    private final boolean whileThrottled;
    private final int untilCheckpoints;
    private final long fromRecord;

    private Throttle(
            String runId,
            int every,
            long sleepMillis,
            boolean whileThrottled,
            int untilCheckpoints,
            long fromRecord) {
        if (every <= 0 || sleepMillis < 0) {
            throw new IllegalArgumentException("every must be positive and sleep non-negative");
        }
        this.runId = runId;
        this.every = every;
        this.sleepMillis = sleepMillis;
        this.whileThrottled = whileThrottled;
        this.untilCheckpoints = untilCheckpoints;
        this.fromRecord = fromRecord;
    }

    /** Sleeps 1 ms every {@code every} records, unconditionally until a condition is added. */
    public static Throttle every(int every) {
        return new Throttle(null, every, 1, false, 0, -1);
    }

    /** Never sleeps (only counts emitted records). */
    public static Throttle none() {
        return new Throttle(null, Integer.MAX_VALUE, 0, false, 0, Long.MAX_VALUE);
    }

    /** Sleeps {@code millis} instead of 1 ms. */
    public Throttle sleeping(long millis) {
        return new Throttle(runId, every, millis, whileThrottled, untilCheckpoints, fromRecord);
    }

    /** Throttles while {@link JobRun#throttled()} is on. */
    public Throttle whileThrottled() {
        return new Throttle(runId, every, sleepMillis, true, untilCheckpoints, fromRecord);
    }

    /** Throttles while fewer than {@code n} checkpoints completed. */
    public Throttle untilCheckpoints(int n) {
        return new Throttle(runId, every, sleepMillis, whileThrottled, n, fromRecord);
    }

    /** Throttles records {@code >= index} (e.g. after a load phase). */
    public Throttle fromRecord(long index) {
        return new Throttle(runId, every, sleepMillis, whileThrottled, untilCheckpoints, index);
    }

    /** This throttle reporting into the given run (done by {@link ExactlyOnceJob}). */
    public Throttle forRun(String id) {
        return new Throttle(id, every, sleepMillis, whileThrottled, untilCheckpoints, fromRecord);
    }

    @Override
    public Long map(Long value) throws Exception {
        JobRun run = JobRun.get(runId);
        run.recordEmitted();
        if (sleepMillis > 0 && value % every == 0 && active(run, value)) {
            Thread.sleep(sleepMillis);
        }
        return value;
    }

    private boolean active(JobRun run, long value) {
        boolean conditional = whileThrottled || untilCheckpoints > 0 || fromRecord >= 0;
        if (!conditional) {
            return true;
        }
        return (whileThrottled && run.throttled())
                || (untilCheckpoints > 0 && run.completedCheckpoints() < untilCheckpoints)
                || (fromRecord >= 0 && value >= fromRecord);
    }
}
