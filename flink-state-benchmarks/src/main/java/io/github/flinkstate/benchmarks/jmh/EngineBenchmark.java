package io.github.flinkstate.benchmarks.jmh;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.apache.flink.util.FileUtils;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Our pure-Java LSM engine ({@code io.github.flinkstate.disagg.engine.LsmStore}) against RocksDB
 * (frocksdbjni 8.10) on the same keys and values, with all data in the block cache: throughput in
 * ops/ms of one thread.
 *
 * <p>Data: {@code keyCount} keys (1M; 10M for the full run) shaped like map state: 2-byte key group
 * (of 128), 8-byte "state key", 4-byte "user key", 10 user keys per state key; values of {@code
 * valueBytes} bytes. Loaded, flushed and compacted to the last level, then every block is read once
 * to warm the cache (sized at twice the raw data). Operations, on uniformly random keys:
 *
 * <ul>
 *   <li>{@code getHit}: a present key; {@code getMiss}: an absent key between present ones (user
 *       key 10..19), so bloom filters decide;
 *   <li>{@code put}: overwrite a present key (background flush and compaction run as usual);
 *   <li>{@code prefixScan}: all 10 entries of a state key (one iterator per scan);
 *   <li>{@code mixed}: 50% {@code getHit}, 50% {@code put}.
 * </ul>
 *
 * <p>Work check after each iteration: hits found their value, misses found nothing, scans saw 10
 * entries each, the last put is readable.
 *
 * <p>Run: {@code java -jar flink-state-benchmarks/target/benchmarks.jar EngineBenchmark -p
 * keyCount=1000000 -rf json -rff target/jmh-engine.json}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(
        value = 3,
        jvmArgsAppend = {
            JmhJvmArgs.HEAP_ENGINE,
            JmhJvmArgs.OPEN_UTIL,
            JmhJvmArgs.OPEN_LANG,
            JmhJvmArgs.OPEN_REFLECT,
            JmhJvmArgs.OPEN_IO,
            JmhJvmArgs.OPEN_NIO,
            JmhJvmArgs.OPEN_NIO_CH,
            JmhJvmArgs.OPEN_NET,
            JmhJvmArgs.OPEN_CONCURRENT,
            JmhJvmArgs.OPEN_ATOMIC,
            JmhJvmArgs.OPEN_TIME,
            JmhJvmArgs.OPEN_TEXT,
            JmhJvmArgs.OPEN_MATH
        })
@Warmup(iterations = 10, time = 1)
@Measurement(iterations = 10, time = 1)
public class EngineBenchmark {

    private static final int USER_KEYS = 10;
    private static final int KEY_GROUPS = 128;
    private static final int KEY_BYTES = 14;
    private static final int SEQUENCE_LENGTH = 1 << 20;

    @Param({"LSM", "ROCKSDB"})
    public KvEngine.Kind engine;

    @Param({"1000000"})
    public int keyCount;

    @Param({"100"})
    public int valueBytes;

    private File dir;
    private KvEngine kv;
    private final int[] draws = new int[SEQUENCE_LENGTH];
    private byte[] valueTemplate;
    private int position;
    private long sequence;

    private long ops;
    private long unexpected;
    private long elements;
    private byte[] lastKey;
    private byte[] lastValue;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        if (keyCount < USER_KEYS || keyCount % USER_KEYS != 0) {
            throw new IllegalArgumentException(
                    "keyCount must be a positive multiple of " + USER_KEYS);
        }
        SplittableRandom random = new SplittableRandom(42);
        for (int i = 0; i < SEQUENCE_LENGTH; i++) {
            draws[i] = random.nextInt(keyCount);
        }
        valueTemplate = new byte[valueBytes];
        for (int i = 0; i < valueBytes; i++) {
            valueTemplate[i] = (byte) random.nextInt(256);
        }
        dir = Files.createTempDirectory("flinkstate-engine-jmh-").toFile();
        long rawBytes = (long) keyCount * (KEY_BYTES + valueBytes);
        kv = engine.open(new File(dir, "db"), Math.max(64L << 20, 2 * rawBytes));
        for (int i = 0; i < keyCount; i++) {
            kv.put(key(i, false), value(i));
        }
        kv.flushAndCompact();
        long seen = 0;
        for (long state = 0; state < keyCount / USER_KEYS; state++) {
            seen += kv.scanPrefix(prefix(state), (k, v) -> {});
        }
        if (seen != keyCount) {
            throw new IllegalStateException(
                    engine + " holds " + seen + " entries after loading " + keyCount);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        if (kv != null) {
            kv.close();
        }
        FileUtils.deleteDirectoryQuietly(dir);
    }

    @Setup(Level.Iteration)
    public void startIteration() {
        ops = 0;
        unexpected = 0;
        elements = 0;
        lastKey = null;
        lastValue = null;
    }

    @TearDown(Level.Iteration)
    public void verifyIteration(BenchmarkParams params) throws IOException {
        String full = params.getBenchmark();
        verify(full.substring(full.lastIndexOf('.') + 1));
    }

    /**
     * The work check of benchmark {@code method} for the operations since {@link #startIteration}.
     */
    void verify(String method) throws IOException {
        check(ops > 0, "no operation ran");
        check(unexpected == 0, "%d of %d reads gave an unexpected answer", unexpected, ops);
        if (method.equals("prefixScan")) {
            check(elements == ops * USER_KEYS, "scanned %d entries in %d scans", elements, ops);
        }
        if (method.equals("put") || method.equals("mixed")) {
            check(
                    lastKey != null && Arrays.equals(kv.get(lastKey), lastValue),
                    "the last put is not readable");
        }
    }

    private void check(boolean condition, String what, Object... args) {
        if (!condition) {
            throw new IllegalStateException(
                    "Work check failed on "
                            + engine
                            + ": "
                            + String.format(Locale.ROOT, what, args));
        }
    }

    /**
     * Key of entry {@code index}: key group, state key {@code index / 10}, user key {@code index %
     * 10} (+10 if absent).
     */
    private static byte[] key(int index, boolean absent) {
        long state = index / USER_KEYS;
        int user = index % USER_KEYS + (absent ? USER_KEYS : 0);
        byte[] key = new byte[KEY_BYTES];
        writePrefix(key, state);
        key[10] = (byte) (user >>> 24);
        key[11] = (byte) (user >>> 16);
        key[12] = (byte) (user >>> 8);
        key[13] = (byte) user;
        return key;
    }

    private static byte[] prefix(long state) {
        byte[] prefix = new byte[10];
        writePrefix(prefix, state);
        return prefix;
    }

    private static void writePrefix(byte[] out, long state) {
        int group = (int) (state % KEY_GROUPS);
        out[0] = (byte) (group >>> 8);
        out[1] = (byte) group;
        for (int i = 0; i < 8; i++) {
            out[2 + i] = (byte) (state >>> (56 - 8 * i));
        }
    }

    /** A value of {@code valueBytes} whose first 8 bytes carry {@code stamp}. */
    private byte[] value(long stamp) {
        byte[] value = valueTemplate.clone();
        for (int i = 0; i < Math.min(8, value.length); i++) {
            value[i] = (byte) (stamp >>> (56 - 8 * i));
        }
        return value;
    }

    private int nextDraw() {
        return draws[position++ & (SEQUENCE_LENGTH - 1)];
    }

    @Benchmark
    public byte[] getHit() throws IOException {
        byte[] v = kv.get(key(nextDraw(), false));
        ops++;
        if (v == null) {
            unexpected++;
        }
        return v;
    }

    @Benchmark
    public byte[] getMiss() throws IOException {
        byte[] v = kv.get(key(nextDraw(), true));
        ops++;
        if (v != null) {
            unexpected++;
        }
        return v;
    }

    @Benchmark
    public void put() throws IOException {
        byte[] k = key(nextDraw(), false);
        byte[] v = value(++sequence);
        kv.put(k, v);
        ops++;
        lastKey = k;
        lastValue = v;
    }

    @Benchmark
    public int prefixScan(Blackhole bh) throws IOException {
        int n = kv.scanPrefix(prefix(nextDraw() / USER_KEYS), (k, v) -> bh.consume(v));
        ops++;
        elements += n;
        return n;
    }

    @Benchmark
    public byte[] mixed() throws IOException {
        int draw = nextDraw();
        ops++;
        if ((position & 1) == 0) {
            byte[] v = kv.get(key(draw, false));
            if (v == null) {
                unexpected++;
            }
            return v;
        }
        byte[] k = key(draw, false);
        byte[] v = value(++sequence);
        kv.put(k, v);
        lastKey = k;
        lastValue = v;
        return v;
    }
}
