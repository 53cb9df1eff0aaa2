package io.github.flinkstate.disagg.engine.sst;

import static io.github.flinkstate.disagg.engine.sst.SstTestFiles.key;
import static io.github.flinkstate.disagg.engine.sst.SstTestFiles.value;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.disagg.engine.cache.DiskCache;
import io.github.flinkstate.disagg.engine.key.Bytes;
import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.Hang;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import io.github.flinkstate.testing.wait.Waits;
import java.io.File;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Readahead of one SST file ({@link Readahead}) on the test kit's {@link InjectingFileSystem},
 * counting the reads that reach it: compaction iterators read windows of consecutive blocks from
 * the start and leave the caches alone; scans read block by block until they proved sequential,
 * then in growing windows, never past their upper bound; a corrupt block inside a window fails
 * exactly as a block read on its own; readahead runs on streams of its own (a hung readahead read
 * does not hold up point reads) and those streams are closed with the reader, also when it is
 * evicted under an iterator. No assertion on time.
 */
@Timeout(60)
class ReadaheadTest {

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
    private Path writeFile(String name, BlockCompression compression) throws IOException {
        return SstTestFiles.write(fs, tmp, name, ENTRIES, compression);
    }

    private Path writeFile(String name) throws IOException {
        return writeFile(name, BlockCompression.NONE);
    }

    private SstReader open(Path p, BlockCache cache, ReadCounters counters, int streams)
            throws IOException {
        return SstReader.open(
                fs, p, cache, fs.getFileStatus(p).getLen(), counters, streams, 64 << 10);
    }

    private static int readAll(SstIterator it) throws IOException {
        return SstTestFiles.readAll(it);
    }

    @Test
    void compactionIterator_readsWindowsOfBlocksAndLeavesTheCacheAlone() throws Exception {
        for (BlockCompression compression : BlockCompression.values()) {
            Path p = writeFile("c-" + compression + ".sst", compression);
            ReadCounters counters = new ReadCounters();
            BlockCache cache = new BlockCache(64 << 20);
            SstReader r = open(p, cache, counters, 4);
            int blocks = r.blockCount();
            assertThat(blocks).isGreaterThan(100);
            long opened = counters.reads();

            assertThat(readAll(r.compactionIterator(64 << 10, null, null))).isEqualTo(ENTRIES);

            long reads = counters.reads() - opened;
            long dataBytes = r.block(blocks - 1).end();
            // windows of 64 KiB (whole blocks of about 1 KiB): one read per 60-64 KiB of data
            // blocks, not one per block
            assertThat(reads)
                    .as("%s: reads for %d blocks", compression, blocks)
                    .isBetween(dataBytes / (64 << 10), dataBytes / (60 << 10) + 1);
            assertThat(cache.weightedSize()).as("nothing cached").isZero();
            assertThat(cache.requestCount()).as("no hits or misses recorded").isZero();

            // without readahead (0): one block per read, still on the compaction stream
            long before = counters.reads();
            assertThat(readAll(r.compactionIterator(0, null, null))).isEqualTo(ENTRIES);
            assertThat(counters.reads() - before).isEqualTo(blocks);
            r.close();
            assertThat(fs.openInputStreams()).isZero();
        }
    }

    @Test
    void compactionIterator_takesBlocksAlreadyInTheMemoryCache() throws Exception {
        Path p = writeFile("a.sst");
        ReadCounters counters = new ReadCounters();
        SstReader r = open(p, new BlockCache(64 << 20), counters, 4);
        assertThat(readAll(r.iterator())).isEqualTo(ENTRIES); // block by block, all cached
        long before = counters.reads();
        assertThat(readAll(r.compactionIterator(1 << 20, null, null))).isEqualTo(ENTRIES);
        assertThat(counters.reads()).as("every block came from the cache").isEqualTo(before);
        r.close();
    }

    @Test
    void scan_readsBlockByBlockUntilSequentialThenInGrowingWindows() throws Exception {
        Path p = writeFile("a.sst");
        ReadCounters counters = new ReadCounters();
        BlockCache cache = new BlockCache(64 << 20);
        SstReader r = open(p, cache, counters, 4);
        int blocks = r.blockCount();
        long opened = counters.reads();

        // a short scan (two blocks) reads exactly its blocks, one read each
        SstIterator shortScan = r.iterator(1 << 20, null);
        int first = r.findBlock(key(1000));
        long openedBytes = counters.bytes();
        int seen = 0;
        for (shortScan.seek(key(1000)); shortScan.valid(); shortScan.next()) {
            seen++;
            if (r.findBlock(shortScan.key()) == first + 1) {
                break;
            }
        }
        assertThat(shortScan.readaheadWindowBlocks()).isZero();
        shortScan.close();
        assertThat(seen).isGreaterThan(2);
        assertThat(counters.reads() - opened).isEqualTo(2);
        assertThat(counters.bytes() - openedBytes)
                .isEqualTo(r.block(first + 1).end() - r.block(first).offset());

        // a full scan: 2 point reads, then windows of 64, 128, 256 KiB ... (the blocks read
        // above come from the cache and split one window)
        long before = counters.reads();
        assertThat(readAll(r.iterator(1 << 20, null))).isEqualTo(ENTRIES);
        long reads = counters.reads() - before;
        assertThat(reads).as("reads for %d blocks", blocks).isBetween(3L, 10L);
        assertThat(cache.weightedSize()).as("scanned blocks are cached").isPositive();

        // a second full scan is served from the cache
        before = counters.reads();
        assertThat(readAll(r.iterator(1 << 20, null))).isEqualTo(ENTRIES);
        assertThat(counters.reads()).isEqualTo(before);

        // without readahead a scan reads one block per read, as before
        SstReader uncached = open(p, new BlockCache(0), counters, 4);
        before = counters.reads();
        assertThat(readAll(uncached.iterator())).isEqualTo(ENTRIES);
        assertThat(counters.reads() - before).isEqualTo(blocks);
        uncached.close();
        r.close();
    }

    @Test
    void boundedScan_neverReadsAheadPastItsLimit() throws Exception {
        Path p = writeFile("a.sst");
        ReadCounters counters = new ReadCounters();
        SstReader r = open(p, new BlockCache(0), counters, 4);
        byte[] limit = key(1200);
        int last = r.lastBlockBelow(limit);
        assertThat(last).isLessThan(r.blockCount() - 10);
        long before = counters.bytes();
        SstIterator it = r.iterator(1 << 20, limit);
        int n = 0;
        for (it.seekToFirst(); it.valid() && Bytes.lessThanLimit(it.key(), limit); it.next()) {
            n++;
        }
        it.close();
        assertThat(n).isEqualTo(1200);
        // blocks 0 .. last, each read once (two point reads, then windows), nothing beyond
        assertThat(counters.bytes() - before).isEqualTo(r.block(last).end() - r.block(0).offset());
        r.close();
    }

    @Test
    void scanReadahead_offersBlocksToTheDiskTier() throws Exception {
        Path p = writeFile("a.sst");
        DiskCache disk = new DiskCache(new File(tmp, "disk"), 64 << 20, 0);
        try {
            ReadCounters counters = new ReadCounters();
            SstReader r = open(p, new BlockCache(0, disk), counters, 4);
            assertThat(readAll(r.iterator(1 << 20, null))).isEqualTo(ENTRIES);
            long before = counters.reads();
            assertThat(readAll(r.iterator(1 << 20, null))).isEqualTo(ENTRIES);
            assertThat(counters.reads()).as("second scan: all from disk").isEqualTo(before);
            // a compaction reads the blocks from the disk tier too, and offers nothing
            long offered = disk.bytesWritten();
            assertThat(readAll(r.compactionIterator(1 << 20, null, null))).isEqualTo(ENTRIES);
            assertThat(counters.reads()).isEqualTo(before);
            assertThat(disk.bytesWritten()).isEqualTo(offered);
            r.close();
        } finally {
            disk.close();
        }
    }

    @Test
    void corruptBlockInsideAWindow_failsAsABlockReadOnItsOwn() throws Exception {
        Path p = writeFile("a.sst");
        SstReader probe = open(p, new BlockCache(0), new ReadCounters(), 4);
        int bad = probe.blockCount() / 2;
        BlockHandle h = probe.block(bad);
        probe.close();
        fs.flipByte(p, h.offset() + 7);

        String expected =
                "SST file " + p + " at offset " + h.offset() + ": Corrupted block (CRC32C mismatch";
        // today's path (no readahead): the reference message
        SstReader r = open(p, new BlockCache(0), new ReadCounters(), 4);
        assertThatThrownBy(() -> readAll(r.iterator()))
                .isInstanceOf(IOException.class)
                .hasMessageStartingWith(expected);
        for (SstIterator it :
                new SstIterator[] {
                    r.compactionIterator(1 << 20, null, null), r.iterator(1 << 20, null)
                }) {
            int[] served = new int[1];
            assertThatThrownBy(
                            () -> {
                                for (it.seekToFirst(); it.valid(); it.next()) {
                                    assertThat(it.value()).isEqualTo(value(served[0]));
                                    served[0]++;
                                }
                            })
                    .isInstanceOf(IOException.class)
                    .hasMessageStartingWith(expected);
            // every entry before the bad block was served, none after it
            assertThat(served[0]).isGreaterThan(0).isLessThan(ENTRIES);
            assertThat(r.findBlock(key(served[0]))).isEqualTo(bad);
        }
        // the good blocks of the window are still readable; the bad one still fails
        assertThat(r.get(key(0))).isNotNull();
        int lastOfBad = 0;
        while (r.findBlock(key(lastOfBad)) < bad) {
            lastOfBad++;
        }
        int inBad = lastOfBad;
        assertThatThrownBy(() -> r.get(key(inBad))).hasMessageStartingWith(expected);
        r.close();
        assertThat(fs.openInputStreams()).isZero();
    }

    @Test
    void pointRead_isNotHeldUpByAHungCompactionRead() throws Exception {
        Path p = writeFile("a.sst");
        SstReader r = open(p, new BlockCache(0), new ReadCounters(), 1);
        Future<Integer> compaction;
        try (Hang hang = fs.hangNext(FsOp.READ, ".*/a\\.sst")) {
            compaction = pool.submit(() -> readAll(r.compactionIterator(1 << 20, null, null)));
            Waits.until("the compaction's read hangs", DEADLINE, () -> hang.blockedCalls() == 1);
            // the file's only point-read stream is free: gets and short scans go on
            Future<byte[]> get =
                    pool.submit(
                            () -> {
                                byte[] last = null;
                                for (int i = 0; i < ENTRIES; i += 97) {
                                    last = r.get(key(i)).value();
                                    assertThat(last).isEqualTo(value(i));
                                }
                                return last;
                            });
            Waits.until("the gets complete", DEADLINE, get::isDone);
            get.get();
            assertThat(compaction.isDone()).isFalse();
            assertThat(fs.openInputStreams()).as("point stream + compaction stream").isEqualTo(2);
            hang.release();
        }
        assertThat(compaction.get(30, TimeUnit.SECONDS)).isEqualTo(ENTRIES);
        r.close();
        assertThat(fs.openInputStreams()).isZero();
    }

    @Test
    void streams_areBoundedAndClosedWithTheReaderAlsoWhenEvictedUnderAnIterator() throws Exception {
        Path a = writeFile("a.sst");
        Path b = writeFile("b.sst");
        ReaderCache readers = new ReaderCache(fs, new BlockCache(0), 8, 2);
        SstReader ra = readers.get(a.toString(), fs.getFileStatus(a).getLen());
        SstIterator compaction = ra.compactionIterator(64 << 10, null, null);
        SstIterator scan = ra.iterator(64 << 10, null);
        compaction.seekToFirst();
        scan.seekToFirst();
        for (int i = 0; i < 500; i++) { // well into the readahead of both
            compaction.next();
            scan.next();
        }
        assertThat(scan.readaheadWindowBlocks()).isPositive();
        assertThat(ra.get(key(1500))).isNotNull();
        // one point-read stream, one compaction stream, one scan stream
        assertThat(fs.openInputStreams()).isEqualTo(3);

        SstReader rb = readers.get(b.toString(), fs.getFileStatus(b).getLen());
        assertThat(rb.get(key(3))).isNotNull();
        assertThat(fs.openInputStreams()).isEqualTo(4);
        // evicting a closes its streams, also the readahead ones
        readers.evict(a.toString());
        assertThat(fs.openInputStreams()).as("only b's stream").isEqualTo(1);
        // the iterators of the evicted reader go on, each read on a short-lived stream
        int n = 500;
        for (; compaction.valid(); compaction.next()) {
            assertThat(compaction.key()).isEqualTo(key(n++));
        }
        assertThat(n).isEqualTo(ENTRIES);
        for (n = 500; scan.valid(); scan.next()) {
            assertThat(scan.key()).isEqualTo(key(n++));
        }
        assertThat(n).isEqualTo(ENTRIES);
        compaction.close();
        scan.close();
        assertThat(fs.openInputStreams()).as("only b's stream").isEqualTo(1);
        assertThat(rb.get(key(3))).isNotNull();
        readers.clear();
        assertThat(fs.openInputStreams()).isZero();
    }
}
