package io.github.flinkstate.benchmarks.jmh;

import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.apache.flink.runtime.state.CheckpointableKeyedStateBackend;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * Common part of the keyed-state benchmarks: the backend {@code @Param}, the keyed backend fixture,
 * the workload and the per-iteration work check.
 *
 * <p>Throughput in operations per millisecond, as in flink-benchmarks. One benchmark thread per
 * fork ({@code Scope.Thread}); not thread-safe.
 *
 * <p>Work check: each benchmark method counts its operations and what it saw (reads that found
 * nothing, elements iterated, the last key and value written); after every iteration (warm-up
 * included) the subclass reads the state back and calls {@link #check}, which fails the run with an
 * {@link IllegalStateException}. A backend that drops writes or returns nothing therefore cannot
 * post a score.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public abstract class StateBenchmarkBase {

    /** Number of keys read back after every iteration. */
    protected static final int SAMPLE_KEYS = 1000;

    @Param({
        "HASHMAP",
        "ROCKSDB",
        "LRU_0",
        "LRU_50",
        "LRU_100",
        "CHANGELOG_FS",
        "CHANGELOG_DFS_BATCHED",
        "DISAGGREGATED",
        "FORST"
    })
    public BenchmarkBackend backend;

    /** Keys written at set-up; flink-benchmarks uses 500,000. */
    @Param({"" + StateWorkload.SETUP_KEY_COUNT})
    public int setupKeyCount;

    protected StateWorkload workload;
    protected KeyedBackendFixture fixture;
    protected CheckpointableKeyedStateBackend<Long> keyed;

    // Per-iteration observations of the benchmark methods.
    protected long ops;
    protected long misses;
    protected long elements;
    protected long lastKey = -1;
    protected Object lastValue;
    protected Object lastMapKey;

    protected void createWorkload() {
        workload = new StateWorkload(setupKeyCount, 0x5eed_f11cL);
    }

    /** Opens a fresh keyed backend; {@code entriesPerKey} sizes the LRU variants. */
    protected void openBackend(int entriesPerKey) throws Exception {
        closeBackend();
        fixture = KeyedBackendFixture.open(backend, (long) setupKeyCount * entriesPerKey);
        keyed = fixture.backend();
    }

    protected void closeBackend() throws Exception {
        if (fixture != null) {
            fixture.close();
            fixture = null;
            keyed = null;
        }
    }

    protected void resetObservations() {
        ops = 0;
        misses = 0;
        elements = 0;
        lastKey = -1;
        lastValue = null;
        lastMapKey = null;
    }

    /** Records one write of {@code value} under {@code key} for the work check. */
    protected final void wrote(long key, Object value) {
        ops++;
        lastKey = key;
        lastValue = value;
    }

    /**
     * Records one write of map entry {@code mapKey -> value} under {@code key} for the work check.
     */
    protected final void wrote(long key, Object mapKey, Object value) {
        wrote(key, value);
        lastMapKey = mapKey;
    }

    /** The simple name of the running benchmark method, e.g. {@code valueGet}. */
    protected static String method(BenchmarkParams params) {
        String full = params.getBenchmark();
        return full.substring(full.lastIndexOf('.') + 1);
    }

    /** Fails the run unless {@code condition} holds. */
    protected void check(boolean condition, String what, Object... args) {
        if (!condition) {
            throw new IllegalStateException(
                    String.format(Locale.ROOT, "Work check failed on %s: ", backend)
                            + String.format(Locale.ROOT, what, args));
        }
    }

    /** Every benchmark must have run at least once and written something if it writes. */
    protected void checkRanAndWrote(boolean writes) {
        check(ops > 0, "no operation ran in this iteration");
        if (writes) {
            check(lastKey >= 0, "no write was recorded");
        }
    }
}
