package io.github.flinkstate.testing.job;

import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the operators of one {@link ExactlyOnceJob} report while it runs on a MiniCluster in this
 * JVM: records emitted by the throttle and processed by the keyed function, distinct completed
 * checkpoints, whether the injected failure happened, the throttle switch, and the final {@link
 * KeySummary} per key (reported by the end-of-input timer). Operators find it by the run's id in a
 * JVM-wide registry, so a job may be resubmitted (restored from a savepoint) and keep reporting
 * into the same run.
 *
 * <p>Thread safety: thread-safe (concurrent counters and maps).
 */
public final class JobRun implements AutoCloseable {

    private static final Map<String, JobRun> RUNS = new ConcurrentHashMap<>();

    private final String id;
    private final AtomicLong emitted = new AtomicLong();
    private final AtomicLong processed = new AtomicLong();
    private final Set<Long> checkpoints = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean failed = new AtomicBoolean();
    private final AtomicLong firstRecordNanos = new AtomicLong();
    private final AtomicLong lastReportNanos = new AtomicLong();
    private volatile boolean throttled;
    private volatile boolean failureArmed;
    private final Map<Long, Set<KeySummary>> finals = new ConcurrentHashMap<>();

    private JobRun(String id) {
        this.id = id;
    }

    /**
     * Registers a new run named {@code name} (plus a unique suffix), for jobs that use a {@link
     * Throttle} without {@link ExactlyOnceJob}; {@link #close()} it when done.
     */
    public static JobRun start(String name) {
        JobRun run = new JobRun(name + "-" + UUID.randomUUID());
        RUNS.put(run.id, run);
        return run;
    }

    /** The run with this id; fails if it was closed (operators of a stale job). */
    static JobRun get(String id) {
        JobRun run = RUNS.get(id);
        if (run == null) {
            throw new IllegalStateException("no ExactlyOnceJob run " + id + " in this JVM");
        }
        return run;
    }

    /** Removes the run from the JVM-wide registry. */
    @Override
    public void close() {
        RUNS.remove(id);
    }

    public String id() {
        return id;
    }

    /** Records that passed the throttle, replays included. */
    public long emitted() {
        return emitted.get();
    }

    /** Records processed by the keyed function, replays included. */
    public long processed() {
        return processed.get();
    }

    /** Distinct checkpoints (and savepoints) reported complete to the keyed function. */
    public int completedCheckpoints() {
        return checkpoints.size();
    }

    /** Forgets the completed checkpoints, e.g. before resuming from a savepoint. */
    public void resetCheckpoints() {
        checkpoints.clear();
    }

    /** Whether the injected failure was thrown. */
    public boolean failed() {
        return failed.get();
    }

    /** Switches the throttle of {@link Throttle#whileThrottled()} on or off. */
    public void throttled(boolean on) {
        throttled = on;
    }

    public boolean throttled() {
        return throttled;
    }

    /** The final summaries reported per key (more than one only if the state diverged). */
    public Map<Long, Set<KeySummary>> finals() {
        return finals;
    }

    long recordEmitted() {
        return emitted.incrementAndGet();
    }

    /**
     * Time from the first record the keyed function processed to the last end-of-input report: the
     * processing time of the run, without deployment, start-up and shutdown; -1 before the first
     * report. Includes restarts and replays when there were failures.
     */
    public long processingNanos() {
        long first = firstRecordNanos.get();
        long last = lastReportNanos.get();
        return first == 0 || last == 0 ? -1 : last - first;
    }

    long recordProcessed() {
        if (firstRecordNanos.get() == 0) {
            firstRecordNanos.compareAndSet(0, System.nanoTime());
        }
        return processed.incrementAndGet();
    }

    void checkpointComplete(long checkpointId) {
        checkpoints.add(checkpointId);
    }

    /**
     * Makes the job's function throw its one injected failure at its next record once a checkpoint
     * completed, whatever its {@code failOnceAfter} count: for tests that pick the moment (say,
     * right after a checkpoint whose uploads were retried), so that the restore depends on it.
     */
    public void failNow() {
        failureArmed = true;
    }

    /**
     * Whether the function processing its {@code processed}-th record throws the run's one injected
     * failure now: after {@code failAfterRecords} records (if positive) or once {@link #failNow()}
     * was called, and only after a completed checkpoint. True at most once per run.
     */
    boolean injectFailure(long processed, long failAfterRecords) {
        return ((failAfterRecords > 0 && processed >= failAfterRecords) || failureArmed)
                && completedCheckpoints() > 0
                && failed.compareAndSet(false, true);
    }

    void report(KeySummary summary) {
        long now = System.nanoTime();
        lastReportNanos.accumulateAndGet(now, Math::max);
        finals.computeIfAbsent(summary.key(), k -> ConcurrentHashMap.newKeySet()).add(summary);
    }
}
