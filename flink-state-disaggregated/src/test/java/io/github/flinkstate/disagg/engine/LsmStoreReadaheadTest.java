package io.github.flinkstate.disagg.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.disagg.engine.iterator.LsmIterator;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.sst.IoRateLimiter;
import io.github.flinkstate.disagg.engine.testutil.LsmModelRunner;
import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.Hang;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import io.github.flinkstate.testing.wait.Waits;
import java.io.File;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Compaction I/O of a store on the test kit's {@link InjectingFileSystem}, with no block cache so
 * every block comes from the primary files: a compaction reads its inputs in a few large reads
 * (readahead) instead of one read per block, on streams of its own, so a point read of a file whose
 * compaction read hangs still completes even with one point-read stream per file; its rate limiter
 * (on a fake clock) is charged with exactly the compaction's reads and writes. No assertion on
 * time.
 */
@Timeout(120)
class LsmStoreReadaheadTest {

    private static final int KEYS = 4000;
    private static final int FILES = 4;
    private static final int BLOCK_SIZE = 1024;
    private static final Duration DEADLINE = Duration.ofSeconds(20);

    @TempDir File tmp;

    private final InjectingFileSystem fs = new InjectingFileSystem(FileSystem.getLocalFileSystem());
    private ExecutorService pool;

    @BeforeEach
    void setUp() {
        pool = Executors.newCachedThreadPool();
    }

    @AfterEach
    void tearDown() throws InterruptedException {
        fs.heal();
        pool.shutdownNow();
        pool.awaitTermination(10, TimeUnit.SECONDS);
    }

    private LsmOptions options() {
        return new LsmOptions(fs, new Path(new Path(tmp.toURI()), "p"), KeyGroupSpan.of(0, 7))
                .backgroundCompaction(false)
                .memtableBytes(4 << 20)
                .blockSize(BLOCK_SIZE)
                .l0CompactionTrigger(FILES)
                .blockCache(new BlockCache(0));
    }

    private static byte[] key(int i) {
        return LsmModelRunner.key(i % 8, 0, i);
    }

    private static byte[] value(int i, int round) {
        byte[] v = new byte[100];
        Arrays.fill(v, (byte) i);
        v[0] = (byte) round;
        return v;
    }

    /** {@link #FILES} overlapping L0 files, each with every key (round r holds value(i, r)). */
    private static void writeL0Files(LsmStore store) throws Exception {
        for (int round = 0; round < FILES; round++) {
            for (int i = 0; i < KEYS; i++) {
                store.put(key(i), value(i, round));
            }
            store.flush();
        }
    }

    private static void checkAll(LsmStore store) throws Exception {
        for (int i = 0; i < KEYS; i++) {
            assertThat(store.get(key(i))).as("key %d", i).isEqualTo(value(i, FILES - 1));
        }
        int n = 0;
        try (LsmIterator it = store.scanAll()) {
            for (; it.isValid(); it.next()) {
                n++;
            }
        }
        assertThat(n).isEqualTo(KEYS);
    }

    /** Fails on the engine before readahead: there it took one read per block (about 2,000). */
    @Test
    void compaction_readsItsInputsInFarFewerReadsThanBlocks() throws Exception {
        // a generous rate limit (never sleeps here: its burst is larger than the compaction)
        try (LsmStore store = LsmStore.open(options().compactionBytesPerSecond(1L << 30))) {
            writeL0Files(store);
            checkAll(store); // opens the readers of the inputs (their tail reads are done)
            long reads = store.primaryReads().reads();
            long fsReads = fs.counters().calls(FsOp.READ);

            assertThat(store.compactOnce()).isTrue();

            long compactionReads = store.primaryReads().reads() - reads;
            long compactionFsReads = fs.counters().calls(FsOp.READ) - fsReads;
            long inputBlocks = store.stats().compactionBytesRead() / BLOCK_SIZE;
            assertThat(inputBlocks).as("data blocks of the inputs").isGreaterThan(1500);
            // 4 inputs of about 0.5 MB each: one 2 MiB window per input
            assertThat(compactionReads).as("reads of the compaction").isLessThanOrEqualTo(FILES);
            assertThat(compactionFsReads)
                    .as("read calls reaching the file system")
                    .isLessThanOrEqualTo(2L * FILES);
            checkAll(store);
        }
        assertThat(fs.openInputStreams()).as("close closes every stream").isZero();
    }

    @Test
    void compactionRateLimiter_isChargedWithTheCompactionsReadsAndWritesOnly() throws Exception {
        AtomicLong now = new AtomicLong();
        IoRateLimiter limiter =
                new IoRateLimiter(1_000_000, now::get, (l, nanos) -> now.addAndGet(nanos));
        try (LsmStore store = LsmStore.open(options().compactionRateLimiter(limiter))) {
            writeL0Files(store);
            checkAll(store);
            assertThat(limiter.grantedBytes()).as("flushes, gets and scans are not paced").isZero();
            long bytes = store.primaryReads().bytes();

            assertThat(store.compactOnce()).isTrue();

            long read = store.primaryReads().bytes() - bytes;
            long written = store.stats().compactionBytesWritten();
            assertThat(read).isPositive();
            assertThat(written).isPositive();
            assertThat(limiter.grantedBytes()).isEqualTo(read + written);
            assertThat(limiter.throttledRequests()).isPositive();
            // the fake clock moved only by the sleeps: the bytes beyond the burst, at 1 MB/s
            long debtNanos = (read + written - limiter.burstBytes()) * 1000;
            assertThat(now.get()).isBetween(debtNanos, debtNanos + 1_000_000);

            checkAll(store);
            assertThat(limiter.grantedBytes()).isEqualTo(read + written);
        }
        assertThat(limiter.throttledRequests())
                .as("a shared limiter outlives the store")
                .isPositive();
        limiter.acquire(1);
    }

    /** Fails on the engine before separate streams: the get waited for the compaction's stream. */
    @Test
    void pointRead_completesWhileTheCompactionsReadOfTheSameFileHangs() throws Exception {
        try (LsmStore store = LsmStore.open(options().streamsPerFile(1))) {
            writeL0Files(store);
            checkAll(store); // opens every reader, so the next read of a file is a block read
            File[] ssts = new File(tmp, "p").listFiles((d, n) -> n.endsWith(".sst"));
            assertThat(ssts).hasSize(FILES);
            Arrays.sort(ssts);
            String newest = ".*/" + ssts[FILES - 1].getName().replace(".", "\\.");
            Future<Boolean> compaction;
            try (Hang hang = fs.hangNext(FsOp.READ, newest)) {
                compaction = pool.submit(store::compactOnce);
                Waits.until(
                        "the compaction's read of the newest file hangs",
                        DEADLINE,
                        () -> hang.blockedCalls() == 1);
                // the newest L0 file holds every key: the get reads it, with its only stream
                Future<byte[]> get = pool.submit(() -> store.get(key(7)));
                Waits.until("the get completes", DEADLINE, get::isDone);
                assertThat(get.get()).isEqualTo(value(7, FILES - 1));
                assertThat(compaction.isDone()).as("compaction still hung").isFalse();
                hang.release();
            }
            assertThat(compaction.get(60, TimeUnit.SECONDS)).isTrue();
            checkAll(store);
        }
        assertThat(fs.openInputStreams()).as("close closes every stream").isZero();
    }
}
