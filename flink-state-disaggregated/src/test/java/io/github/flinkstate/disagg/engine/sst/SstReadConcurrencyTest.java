package io.github.flinkstate.disagg.engine.sst;

import static io.github.flinkstate.disagg.engine.sst.SstTestFiles.key;
import static io.github.flinkstate.disagg.engine.sst.SstTestFiles.value;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.disagg.engine.key.EntryType;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.key.Versioned;
import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.Hang;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import io.github.flinkstate.testing.wait.Waits;
import java.io.File;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The remote-first read path of one SST file, on the test kit's {@link InjectingFileSystem} (hangs
 * make reads overlap deterministically, its counters count round trips and {@link
 * InjectingFileSystem#openInputStreams} the streams open right now): concurrent reads of one file
 * proceed in parallel up to the per-file bound (on one stream through its positional read, or on a
 * stream each), concurrent misses of one block are read once, opening reads the metadata in one
 * tail read, two files open concurrently, a failed read does not poison the stream pool, and closed
 * or evicted readers close their streams. No assertion on time.
 */
@Timeout(60)
class SstReadConcurrencyTest {

    private static final int ENTRIES = 2000;
    private static final Duration DEADLINE = Duration.ofSeconds(20);

    @TempDir File tmp;

    private InjectingFileSystem fs;
    private ExecutorService pool;

    @BeforeEach
    void setUp() {
        fs = new InjectingFileSystem(FileSystem.getLocalFileSystem());
        pool = Executors.newCachedThreadPool();
    }

    @AfterEach
    void tearDown() throws InterruptedException {
        fs.heal();
        pool.shutdownNow();
        pool.awaitTermination(10, TimeUnit.SECONDS);
    }

    /** A file of {@link #ENTRIES} entries in blocks of about 1 KiB (about 200 data blocks). */
    private Path writeFile(String name) throws IOException {
        return SstTestFiles.write(fs, tmp, name, ENTRIES, BlockCompression.NONE);
    }

    private long size(Path p) throws IOException {
        return fs.getFileStatus(p).getLen();
    }

    private static void checkValue(Versioned v, int i) {
        assertThat(v).as("entry %d", i).isNotNull();
        assertThat(v.value()).as("entry %d", i).isEqualTo(value(i));
    }

    /**
     * Each concurrent read runs on a stream of its own, with the stream's positional read on a
     * distributed file system that offers one, else with seek and read.
     */
    @ParameterizedTest(name = "distributed file system: {0}, positional reads offered: {1}")
    @CsvSource({"true, true", "true, false", "false, true"})
    void concurrentReadsOfOneFile_overlapUpToThePerFileBound(
            boolean distributed, boolean positional) throws Exception {
        fs.distributed(distributed).positionalReads(positional);
        Path p = writeFile("a.sst");
        SstReader r =
                SstReader.open(fs, p, new BlockCache(0), size(p), new ReadCounters(), 4, 64 << 10);
        int step = ENTRIES / 8; // eight keys in eight different blocks
        List<Future<Versioned>> gets = new ArrayList<>();
        try (Hang hang = fs.hang(FsOp.READ, ".*/a\\.sst")) {
            for (int t = 0; t < 8; t++) {
                int i = t * step;
                gets.add(pool.submit(() -> r.get(key(i))));
            }
            // With reads serialised on one stream only one read could ever wait in the hang.
            Waits.until("4 reads of one file in flight", DEADLINE, () -> hang.blockedCalls() == 4);
            assertThat(fs.openInputStreams()).isEqualTo(4);
            hang.release();
            for (int t = 0; t < 8; t++) {
                checkValue(gets.get(t).get(), t * step);
            }
        }
        if (distributed && positional) {
            assertThat(r.positionalReads()).as("positional reads").isGreaterThanOrEqualTo(8);
        } else {
            assertThat(r.positionalReads()).as("positional reads").isZero();
        }
        assertThat(fs.openInputStreams()).as("idle streams stay open").isLessThanOrEqualTo(4);
        r.close();
        assertThat(fs.openInputStreams()).as("close closes every stream").isZero();
    }

    @Test
    void concurrentMissesOfOneBlock_areReadOnce() throws Exception {
        Path p = writeFile("b.sst");
        BlockCache cache = new BlockCache(1 << 20);
        SstReader r = SstReader.open(fs, p, cache, size(p), new ReadCounters(), 4, 64 << 10);
        String k = InjectingFileSystem.key(p);
        long readsBefore = fs.counters().calls(FsOp.READ, k);
        int threads = 6;
        List<Future<Versioned>> gets = new ArrayList<>();
        try (Hang hang = fs.hang(FsOp.READ, ".*/b\\.sst")) {
            gets.add(pool.submit(() -> r.get(key(500))));
            Waits.until("the first miss reads", DEADLINE, () -> hang.blockedCalls() == 1);
            for (int t = 1; t < threads; t++) {
                int i = 500 + t % 3; // same block, different keys
                gets.add(pool.submit(() -> r.get(key(i))));
            }
            Waits.until(
                    "the other misses wait for the first read",
                    DEADLINE,
                    () -> cache.joinedLoadCount() == threads - 1);
            hang.release();
            checkValue(gets.get(0).get(), 500);
            for (int t = 1; t < threads; t++) {
                checkValue(gets.get(t).get(), 500 + t % 3);
            }
        }
        assertThat(fs.counters().calls(FsOp.READ, k) - readsBefore).isEqualTo(1);
        checkValue(r.get(key(501)), 501); // a hit now
        assertThat(fs.counters().calls(FsOp.READ, k) - readsBefore).isEqualTo(1);
        r.close();
        cache.checkInvariants();
    }

    @Test
    void open_readsAllMetadataWithOneTailRead() throws Exception {
        Path p = writeFile("c.sst");
        String k = InjectingFileSystem.key(p);
        long size = size(p);
        fs.counters().reset();
        ReadCounters counters = new ReadCounters();
        SstReader r = SstReader.open(fs, p, new BlockCache(0), size, counters, 4, 64 << 10);
        assertThat(r.metadataBytes()).isLessThan(64 << 10);
        assertThat(fs.counters().calls(FsOp.READ, k)).isEqualTo(1);
        assertThat(fs.counters().calls(FsOp.OPEN, k)).isEqualTo(1);
        assertThat(fs.counters().calls(FsOp.STATUS, k)).as("size from the manifest").isZero();
        assertThat(counters.reads()).isEqualTo(1);
        assertThat(r.blockCount()).isGreaterThan(100);
        checkValue(r.get(key(1234)), 1234);
        r.close();

        // A tail hint smaller than the metadata costs one more read for the rest of it.
        fs.counters().reset();
        long meta = r.metadataBytes();
        SstReader small =
                SstReader.open(fs, p, new BlockCache(0), size, counters, 4, meta / 2 + 17);
        assertThat(fs.counters().calls(FsOp.READ, k)).isEqualTo(2);
        checkValue(small.get(key(7)), 7);
        small.close();

        // Unknown size: one status call, then still one tail read.
        fs.counters().reset();
        SstReader unknown = SstReader.open(fs, p, new BlockCache(0), -1, counters, 4, 64 << 10);
        assertThat(fs.counters().calls(FsOp.STATUS, k)).isEqualTo(1);
        assertThat(fs.counters().calls(FsOp.READ, k)).isEqualTo(1);
        unknown.close();
        assertThat(fs.openInputStreams()).isZero();
    }

    @Test
    void readerCache_learnsTheTailSize_andOpensInOneRead() throws Exception {
        // Files of about 1.2 MB: the cache learns the metadata share from the first.
        List<Path> files = new ArrayList<>();
        for (int f = 0; f < 3; f++) {
            Path path = new Path(new Path(tmp.toURI()), "big" + f + ".sst");
            SstWriter w = new SstWriter(fs, path, 1024, 10, KeyGroupSpan.of(0, 3));
            for (int i = 0; i < 10_000; i++) {
                w.add(key(i), i + 1, EntryType.PUT, value(i));
            }
            w.finish(null);
            files.add(path);
        }
        ReaderCache cache = new ReaderCache(fs, new BlockCache(0), 8, 2);
        SstReader first = cache.get(files.get(0).toString(), size(files.get(0)));
        assertThat(cache.tailBytesFor(size(files.get(1))))
                .isGreaterThanOrEqualTo(first.metadataBytes());
        for (int f = 1; f < 3; f++) {
            String k = InjectingFileSystem.key(files.get(f));
            long before = fs.counters().calls(FsOp.READ, k);
            cache.get(files.get(f).toString(), size(files.get(f)));
            assertThat(fs.counters().calls(FsOp.READ, k) - before).as("file %d", f).isEqualTo(1);
        }
        cache.clear();
        assertThat(fs.openInputStreams()).isZero();
    }

    @Test
    void twoFilesOpenConcurrently_andOpensOfOneFileAreMerged() throws Exception {
        List<Path> files = new ArrayList<>();
        for (int f = 0; f < 12; f++) {
            files.add(writeFile("f" + f + ".sst"));
        }
        ReaderCache cache = new ReaderCache(fs, new BlockCache(1 << 20), 64, 2);
        Path slow = files.get(0);
        String slowKey = InjectingFileSystem.key(slow);
        long slowSize = size(slow);
        Future<SstReader> a;
        Future<SstReader> a2;
        try (Hang hang = fs.hang(FsOp.OPEN, ".*/f0\\.sst")) {
            a = pool.submit(() -> cache.get(slow.toString(), slowSize));
            Waits.until("the open of f0 hangs", DEADLINE, () -> hang.blockedCalls() == 1);
            a2 = pool.submit(() -> cache.get(slow.toString(), slowSize));
            // Every other file opens while f0's open is still hanging.
            for (int f = 1; f < files.size(); f++) {
                Path p = files.get(f);
                SstReader r = cache.get(p.toString(), size(p));
                checkValue(r.get(key(f * 100)), f * 100);
            }
            assertThat(a.isDone()).isFalse();
            hang.release();
            SstReader r = a.get();
            assertThat(a2.get()).isSameAs(r);
            checkValue(r.get(key(42)), 42);
        }
        assertThat(fs.counters().calls(FsOp.OPEN, slowKey)).as("one open of f0").isEqualTo(1);
        cache.clear();
        assertThat(fs.openInputStreams()).isZero();
    }

    @Test
    void failingRead_doesNotPoisonThePool() throws Exception {
        Path p = writeFile("d.sst");
        long size = size(p);
        SstReader r =
                SstReader.open(fs, p, new BlockCache(0), size, new ReadCounters(), 2, 64 << 10);
        checkValue(r.get(key(10)), 10);
        // The data blocks of the first half of the file vanish: a read there fails.
        fs.truncate(p, 1000);
        assertThatThrownBy(() -> r.get(key(1500)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(p.toString())
                .hasMessageContaining("Truncated");
        assertThat(fs.openInputStreams()).as("the failed stream was closed").isLessThanOrEqualTo(1);
        fs.heal();
        for (int i = 0; i < ENTRIES; i += 97) {
            checkValue(r.get(key(i)), i);
        }
        // A failure of a stream's read (an injected hang that times out) is no different.
        fs.hangLimit(Duration.ofMillis(1));
        fs.hangNext(FsOp.READ, ".*/d\\.sst");
        assertThatThrownBy(() -> r.get(key(1700)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(p.toString());
        checkValue(r.get(key(1700)), 1700);
        assertThat(fs.openInputStreams()).isLessThanOrEqualTo(2);
        r.close();
        assertThat(fs.openInputStreams()).isZero();
    }

    /**
     * An interrupt of one reader never fails another reader's read. A review of a version that
     * shared one stream between the point reads of a file, through the positional read of Flink's
     * local stream, found that an interrupt during a read closed the stream's {@code FileChannel}
     * under every thread using it (two threads, one interrupted: the other failed in 33 of 50
     * rounds); a task interrupted while a savepoint read the same file would then have failed.
     * Streams are not shared any more; and a reader that joined the interrupted reader's read of
     * the same block (concurrent misses are read once) reads it again instead of failing with the
     * other thread's interrupt, which this test found next.
     */
    @Test
    void anInterruptedRead_failsNoOtherReader() throws Exception {
        Path p = writeFile("i.sst");
        SstReader r =
                SstReader.open(
                        FileSystem.getLocalFileSystem(),
                        p,
                        new BlockCache(0),
                        size(p),
                        new ReadCounters(),
                        4,
                        64 << 10);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Thread> first = new AtomicReference<>();
        Future<?> interrupted =
                pool.submit(
                        () -> {
                            first.set(Thread.currentThread());
                            while (!stop.get()) {
                                try {
                                    r.get(key(ENTRIES / 2));
                                } catch (IOException expected) {
                                    // an interrupted read may fail; only its own
                                }
                                Thread.interrupted(); // cleared for the next round
                            }
                            return null;
                        });
        Future<?> other =
                pool.submit(
                        () -> {
                            for (int i = 0; i < 3000; i++) {
                                checkValue(r.get(key(i % ENTRIES)), i % ENTRIES);
                            }
                            return null;
                        });
        Waits.until("the first reader runs", DEADLINE, () -> first.get() != null);
        while (!other.isDone()) {
            first.get().interrupt();
            Thread.onSpinWait();
        }
        stop.set(true);
        other.get(); // the other reader never failed
        interrupted.get();
        r.close();
    }

    @Test
    void failedOpen_closesItsStream() throws Exception {
        Path p = writeFile("e.sst");
        long size = size(p);
        fs.flipByte(p, size - 20); // inside the footer
        assertThatThrownBy(
                        () ->
                                SstReader.open(
                                        fs,
                                        p,
                                        new BlockCache(0),
                                        size,
                                        new ReadCounters(),
                                        4,
                                        64 << 10))
                .hasMessageContaining("footer");
        assertThat(fs.openInputStreams()).isZero();
    }

    @Test
    void readerClosedOrEvictedDuringRead_closesItsStreamsAfterwards() throws Exception {
        Path p = writeFile("g.sst");
        ReaderCache cache = new ReaderCache(fs, new BlockCache(1 << 20), 8, 4);
        SstReader r = cache.get(p.toString(), size(p));
        Future<Versioned> get;
        try (Hang hang = fs.hang(FsOp.READ, ".*/g\\.sst")) {
            get = pool.submit(() -> r.get(key(900)));
            Waits.until("a read in flight", DEADLINE, () -> hang.blockedCalls() == 1);
            cache.evict(p.toString());
            assertThat(fs.openInputStreams()).as("the stream in use").isEqualTo(1);
            hang.release();
            checkValue(get.get(), 900);
        }
        assertThat(fs.openInputStreams()).as("returned to a closed pool").isZero();
        // An evicted reader still answers (on a short-lived stream), leaking nothing.
        checkValue(r.get(key(901)), 901);
        assertThat(fs.openInputStreams()).isZero();
    }
}
