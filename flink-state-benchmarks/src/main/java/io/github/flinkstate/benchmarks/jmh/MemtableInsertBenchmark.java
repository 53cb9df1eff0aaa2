package io.github.flinkstate.benchmarks.jmh;

import io.github.flinkstate.disagg.engine.key.EntryType;
import io.github.flinkstate.disagg.engine.key.Versioned;
import io.github.flinkstate.disagg.engine.memtable.Memtable;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Inserts into one memtable of the engine ({@code engine.memtable.Memtable}), without the store
 * around it (no flush, no compaction, no lock): what a write costs in the memtable alone. The
 * memtable is replaced by an empty one once it holds {@code memtableBytes}, as the store rotates
 * it, so the measured inserts land in memtables of every size up to that.
 *
 * <p>Keys are shaped like map state at 100,000 keys: 2-byte key group, a state id byte, an 8-byte
 * key (of 100,000) and an 8-byte user key; values of 9 bytes. One invocation writes 10 entries:
 *
 * <ul>
 *   <li>{@code RUN}: user keys 0..9 of one random key, ascending (a map's {@code putAll} of 10
 *       entries);
 *   <li>{@code RANDOM}: 10 entries of 10 random keys.
 * </ul>
 *
 * <p>Work check after each iteration: the last key written is in the memtable with its sequence
 * number.
 *
 * <p>Run: {@code java -jar flink-state-benchmarks/target/benchmarks.jar MemtableInsertBenchmark}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(
        value = 3,
        jvmArgsAppend = {JmhJvmArgs.HEAP})
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
public class MemtableInsertBenchmark {

    private static final int KEYS = 100_000;
    private static final int ENTRIES = 10;

    /** Where the 10 entries of one invocation go. */
    public enum Pattern {
        RUN,
        RANDOM
    }

    @Param({"RUN", "RANDOM"})
    public Pattern pattern;

    @Param({"4194304"})
    public long memtableBytes;

    private final SplittableRandom random = new SplittableRandom(7);
    private final byte[] value = new byte[9];
    private Memtable memtable;
    private long seq;
    private byte[] lastKey;

    @Setup
    public void setUp() {
        memtable = new Memtable(1);
    }

    /** Average time per entry ({@code ENTRIES} per invocation). */
    @Benchmark
    @OperationsPerInvocation(ENTRIES)
    public void insert() {
        if (memtable.approximateBytes() >= memtableBytes) {
            memtable = new Memtable(seq); // rotated: the store would freeze and flush it
        }
        long key = random.nextInt(KEYS);
        for (int userKey = 0; userKey < ENTRIES; userKey++) {
            if (pattern == Pattern.RANDOM) {
                key = random.nextInt(KEYS);
            }
            lastKey = key(key, userKey);
            memtable.add(lastKey, ++seq, EntryType.PUT, value);
        }
    }

    @TearDown(Level.Iteration)
    public void verify() {
        Versioned last = memtable.get(lastKey);
        if (last == null || last.seq() != seq) {
            throw new IllegalStateException(
                    "the last write (seq " + seq + ") is not in the memtable");
        }
    }

    private static byte[] key(long key, long userKey) {
        byte[] k = new byte[2 + 1 + 2 * Long.BYTES];
        int keyGroup = (int) (key % 128);
        k[0] = (byte) (keyGroup >>> 8);
        k[1] = (byte) keyGroup;
        k[2] = 1;
        for (int i = 0; i < Long.BYTES; i++) {
            k[3 + i] = (byte) (key >>> (56 - 8 * i));
            k[3 + Long.BYTES + i] = (byte) (userKey >>> (56 - 8 * i));
        }
        return k;
    }
}
