package io.github.flinkstate.benchmarks.jmh;

import io.github.flinkstate.benchmarks.common.KeyDraws;
import io.github.flinkstate.disagg.engine.LsmOptions;
import io.github.flinkstate.disagg.engine.LsmSnapshot;
import io.github.flinkstate.disagg.engine.LsmStore;
import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.disagg.engine.cache.DiskCache;
import io.github.flinkstate.disagg.engine.iterator.LsmIterator;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.sst.BlockCompression;
import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import io.github.flinkstate.testing.fs.Latency;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.local.LocalFileSystem;
import org.apache.flink.util.FileUtils;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The LSM engine ({@code io.github.flinkstate.disagg.engine.LsmStore}) with its primary directory
 * on a slow "remote" file system: the test kit's {@link InjectingFileSystem} over the local disk,
 * with a fixed latency per read call ({@code readLatencyMs}, 2 ms) and a bandwidth cap (100 MB/s),
 * so every block cache miss is a remote round trip. Throughput in ops/s of several threads sharing
 * one store, which is where reads serialising on a file's stream show.
 *
 * <p>Data: {@code keyCount} keys of 14 bytes (2-byte key group of 128, 8-byte state key, 4-byte
 * user key, 10 user keys per state key) with 100-byte values: 350,000 keys are about 40 MB raw, ten
 * times the 4 MiB block cache ({@code cacheMiB}). Loaded, flushed and compacted with no latency;
 * the latency is switched on before the first warm-up iteration. Operations on uniformly random
 * keys:
 *
 * <ul>
 *   <li>{@code get} (8 threads): a present key; about 90% of them miss the block cache;
 *   <li>group {@code getsWithScan}: 7 threads of {@code get} plus 1 thread scanning a whole random
 *       key group ({@code scan}: about 2,700 entries, 80 blocks) on the same store.
 *   <li>{@code rewriteAll} (single shot, 1 thread): a fresh store opened on the loaded files (cold
 *       caches) rewrites every file ({@code compactAll} with a compaction filter that drops
 *       nothing): one full compaction, reading about 40 MB from the latency file system and writing
 *       as much; {@code readaheadKiB} decides how it reads.
 * </ul>
 *
 * <p>Work check after each iteration: every get found its key, every scan saw all entries of its
 * key group.
 *
 * <p>Run: {@code java -jar flink-state-benchmarks/target/benchmarks.jar RemoteReadBenchmark -rf
 * json -rff target/jmh-remote-read.json}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(
        value = 1,
        jvmArgsAppend = {
            "-Xmx2g",
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
@Warmup(iterations = 2, time = 3)
@Measurement(iterations = 5, time = 3)
public class RemoteReadBenchmark {

    private static final int USER_KEYS = 10;
    private static final int KEY_GROUPS = 128;
    private static final int KEY_BYTES = 14;

    @Param({"350000"})
    public int keyCount;

    @Param({"100"})
    public int valueBytes;

    @Param({"4"})
    public int cacheMiB;

    @Param({"2"})
    public int readLatencyMs;

    @Param({"100"})
    public int bandwidthMBps;

    /** Block compression of the store's files ({@code NONE} or {@code LZ4}). */
    @Param({"NONE"})
    public String compression;

    /**
     * Random bytes at the start of each value (the rest are zeros): 0 makes values almost free to
     * compress; half the value length is closer to serialized records.
     */
    @Param({"0"})
    public int randomValueBytes;

    /**
     * Capacity of the local disk cache ({@code DiskCache}) as a percentage of the SST bytes; 0: no
     * disk cache (the store is then opened the same way, from the loaded store's manifest).
     */
    @Param({"0"})
    public int localCachePercent;

    /**
     * Which keys the gets draw: {@code uniform}, or {@code zipf} (rank r drawn with probability
     * proportional to 1/r, ranks scattered over the key space).
     */
    @Param({"uniform"})
    public String keys;

    /**
     * Whether the restored store starts its background warm-up ({@code LsmStore.startWarmUp()}:
     * whole files copied into the local disk cache while they fill at most half of it); needs
     * {@code localCachePercent > 0}. Run with {@code -wi 0} to see the first seconds after the
     * restore.
     */
    @Param({"false"})
    public boolean warmUp;

    /**
     * The warm-up's read rate limit in MB/s ({@code LsmOptions.warmUpBytesPerSecond}); 0: none.
     * Below {@code bandwidthMBps} it leaves the rest of the link to the gets.
     */
    @Param({"0"})
    public int warmUpRateMBps;

    /**
     * Largest readahead window of compactions and long scans ({@code LsmOptions.readaheadBytes}) in
     * KiB; 0: one remote read per block.
     */
    @Param({"2048"})
    public int readaheadKiB;

    private File dir;
    private InjectingFileSystem fs;
    private LsmStore store;
    private LsmSnapshot loaded;
    private LsmOptions options;
    private DiskCache disk;
    private KeyDraws draws;
    private final LongAdder wrongGets = new LongAdder();
    private final LongAdder wrongScans = new LongAdder();
    private final int[] entriesPerGroup = new int[KEY_GROUPS];

    /** Per-thread random source. */
    @State(Scope.Thread)
    public static class Draws {
        final SplittableRandom random = new SplittableRandom(Thread.currentThread().getId());
    }

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        if (keyCount < USER_KEYS || keyCount % USER_KEYS != 0) {
            throw new IllegalArgumentException(
                    "keyCount must be a positive multiple of " + USER_KEYS);
        }
        dir = Files.createTempDirectory("flinkstate-remote-read-jmh-").toFile();
        fs = new InjectingFileSystem(LocalFileSystem.getSharedInstance());
        options =
                new LsmOptions(
                                fs,
                                new Path(new File(dir, "db").toURI()),
                                KeyGroupSpan.of(0, KeyGroupSpan.MAX_KEY_GROUP))
                        .blockCache(new BlockCache((long) cacheMiB << 20))
                        .compression(BlockCompression.valueOf(compression))
                        .readaheadBytes(readaheadKiB << 10)
                        // the engine's default until 2026-11-29: runs compare with the recorded
                        .targetFileBytes(8L << 20);
        store = LsmStore.open(options);
        byte[] value = new byte[valueBytes];
        SplittableRandom valueBytesRandom = new SplittableRandom(42);
        for (int i = 0; i < keyCount; i++) {
            for (int b = 0; b < Math.min(randomValueBytes, valueBytes); b++) {
                value[b] = (byte) valueBytesRandom.nextInt(256);
            }
            value[0] = (byte) i;
            store.put(key(i), value);
            entriesPerGroup[(int) ((i / USER_KEYS) % KEY_GROUPS)]++;
        }
        store.flush();
        store.compactAll();
        long fileBytes = 0;
        for (File f : java.util.Objects.requireNonNull(new File(dir, "db").listFiles())) {
            if (f.getName().endsWith(".sst")) {
                fileBytes += f.length();
            }
        }
        // as after a restore: a store opened on the loaded files, with cold caches
        loaded = store.snapshot();
        store.close();
        if (localCachePercent > 0) {
            disk =
                    new DiskCache(
                            new File(dir, "local-cache"), fileBytes * localCachePercent / 100, 0);
        }
        store =
                LsmStore.open(
                        options.copy(
                                        new Path(new File(dir, "restored").toURI()),
                                        KeyGroupSpan.of(0, KeyGroupSpan.MAX_KEY_GROUP))
                                .blockCache(new BlockCache((long) cacheMiB << 20, disk))
                                .warmUpBytesPerSecond(warmUpRateMBps * 1_000_000L),
                        List.of(loaded.manifest()));
        if (warmUp && disk == null) {
            throw new IllegalArgumentException("warmUp needs localCachePercent > 0");
        }
        draws = KeyDraws.of(keys, keyCount);
        System.out.printf(
                "%n[RemoteReadBenchmark] compression %s, random value bytes %d: SST files %,d bytes;"
                        + " local cache %d%% (%,d bytes), keys %s%n",
                compression,
                randomValueBytes,
                fileBytes,
                localCachePercent,
                disk == null ? 0 : disk.capacityBytes(),
                keys);
        fs.latency(FsOp.READ, Latency.fixed(Duration.ofMillis(readLatencyMs)));
        fs.latency(FsOp.OPEN, Latency.fixed(Duration.ofMillis(readLatencyMs)));
        fs.latency(FsOp.STATUS, Latency.fixed(Duration.ofMillis(readLatencyMs)));
        fs.bandwidth((long) bandwidthMBps * 1_000_000L);
        if (warmUp) {
            store.startWarmUp(); // on the slow link, like a restore's
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (store != null) {
            store.close();
        }
        if (store != null && store.warmUp() != null) {
            System.out.printf(
                    "%n[RemoteReadBenchmark] warm-up %s: %,d of %,d bytes%n",
                    store.warmUp().state(),
                    store.warmUp().bytesDone(),
                    store.warmUp().bytesPlanned());
        }
        if (disk != null) {
            System.out.printf(
                    "%n[RemoteReadBenchmark] local cache: %,d hits, %,d misses, %,d bytes used, %,d"
                            + " evictions%n",
                    disk.hitCount(), disk.missCount(), disk.usedBytes(), disk.evictionCount());
            disk.close();
        }
        if (loaded != null) {
            loaded.release();
        }
        FileUtils.deleteDirectoryQuietly(dir);
    }

    @TearDown(Level.Iteration)
    public void verifyIteration() {
        long g = wrongGets.sumThenReset();
        long s = wrongScans.sumThenReset();
        if (g != 0 || s != 0) {
            throw new IllegalStateException(
                    "Work check failed: " + g + " gets and " + s + " scans gave a wrong answer");
        }
    }

    private static byte[] key(int index) {
        long state = index / USER_KEYS;
        int user = index % USER_KEYS;
        byte[] key = new byte[KEY_BYTES];
        int group = (int) (state % KEY_GROUPS);
        key[0] = (byte) (group >>> 8);
        key[1] = (byte) group;
        for (int i = 0; i < 8; i++) {
            key[2 + i] = (byte) (state >>> (56 - 8 * i));
        }
        key[13] = (byte) user;
        return key;
    }

    private byte[] doGet(Draws d) throws IOException {
        int i = draws.next(d.random);
        byte[] v = store.get(key(i));
        if (v == null || v[0] != (byte) i) {
            wrongGets.increment();
        }
        return v;
    }

    private int doScan(Draws d) throws IOException {
        int group = d.random.nextInt(KEY_GROUPS);
        int n = 0;
        try (LsmIterator it = store.scanPrefix(new byte[] {(byte) (group >>> 8), (byte) group})) {
            for (; it.isValid(); it.next()) {
                n++;
            }
        }
        if (n != entriesPerGroup[group]) {
            wrongScans.increment();
        }
        return n;
    }

    /** A fresh store on the loaded files for each {@code rewriteAll}, closed and deleted after. */
    @State(Scope.Thread)
    public static class Rewrite {
        private LsmStore store;
        private File dir;

        @Setup(Level.Invocation)
        public void open(RemoteReadBenchmark b) throws IOException {
            dir = Files.createTempDirectory(b.dir.toPath(), "rewrite-").toFile();
            store =
                    LsmStore.open(
                            b.options
                                    .copy(
                                            new Path(dir.toURI()),
                                            KeyGroupSpan.of(0, KeyGroupSpan.MAX_KEY_GROUP))
                                    .backgroundCompaction(false)
                                    .compactionFilter(() -> (key, value) -> false)
                                    .blockCache(new BlockCache((long) b.cacheMiB << 20)),
                            List.of(b.loaded.manifest()));
        }

        @TearDown(Level.Invocation)
        public void close() {
            store.close();
            FileUtils.deleteDirectoryQuietly(dir);
        }
    }

    @Benchmark
    @BenchmarkMode(Mode.SingleShotTime)
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    @Warmup(iterations = 1)
    @Measurement(iterations = 3)
    public long rewriteAll(Rewrite r) throws IOException {
        r.store.compactAll();
        long written = r.store.stats().compactionBytesWritten();
        if (written == 0) {
            throw new IllegalStateException("Work check failed: nothing was rewritten");
        }
        return written;
    }

    @Benchmark
    @Threads(8)
    public byte[] get(Draws d) throws IOException {
        return doGet(d);
    }

    @Benchmark
    @Group("getsWithScan")
    @GroupThreads(7)
    public byte[] groupGet(Draws d) throws IOException {
        return doGet(d);
    }

    @Benchmark
    @Group("getsWithScan")
    @GroupThreads(1)
    public int groupScan(Draws d) throws IOException {
        return doScan(d);
    }
}
