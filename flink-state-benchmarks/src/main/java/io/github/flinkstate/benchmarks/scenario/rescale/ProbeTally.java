package io.github.flinkstate.benchmarks.scenario.rescale;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * JVM-wide tally of the verify job's probes: per subtask, how many keys were found with the right
 * value, missing, or wrong, and when the first and the last probe were recorded. The driver resets
 * it before a verify job and reads it after.
 *
 * <p>Thread safety: all methods may be called concurrently (subtasks record, the driver reads).
 */
public final class ProbeTally {

    /** What one probe found. */
    public enum Outcome {
        OK,
        MISSING,
        WRONG
    }

    private static final Map<Integer, AtomicLongArray> BY_SUBTASK = new ConcurrentHashMap<>();
    private static final AtomicLong FIRST_NANOS = new AtomicLong();
    private static final AtomicLong LAST_NANOS = new AtomicLong();

    private ProbeTally() {}

    public static void reset() {
        BY_SUBTASK.clear();
        FIRST_NANOS.set(0);
        LAST_NANOS.set(0);
    }

    static void record(int subtask, Outcome outcome) {
        long now = System.nanoTime();
        FIRST_NANOS.compareAndSet(0, now);
        BY_SUBTASK
                .computeIfAbsent(subtask, s -> new AtomicLongArray(Outcome.values().length))
                .incrementAndGet(outcome.ordinal());
        LAST_NANOS.accumulateAndGet(now, Math::max);
    }

    /** Milliseconds from the first to the last probe recorded (all subtasks). */
    public static long spanMillis() {
        return (LAST_NANOS.get() - FIRST_NANOS.get()) / 1_000_000;
    }

    /** Probes recorded so far, over all subtasks and outcomes. */
    public static long total() {
        long n = 0;
        for (AtomicLongArray a : BY_SUBTASK.values()) {
            for (int i = 0; i < a.length(); i++) {
                n += a.get(i);
            }
        }
        return n;
    }

    /** Probes with the given outcome, over all subtasks. */
    public static long count(Outcome outcome) {
        long n = 0;
        for (AtomicLongArray a : BY_SUBTASK.values()) {
            n += a.get(outcome.ordinal());
        }
        return n;
    }

    /** Probes (any outcome) per subtask index, in index order. */
    public static Map<Integer, Long> perSubtask() {
        Map<Integer, Long> out = new TreeMap<>();
        BY_SUBTASK.forEach(
                (s, a) -> {
                    long n = 0;
                    for (int i = 0; i < a.length(); i++) {
                        n += a.get(i);
                    }
                    out.put(s, n);
                });
        return out;
    }
}
