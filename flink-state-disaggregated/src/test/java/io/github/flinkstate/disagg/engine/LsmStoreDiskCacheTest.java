package io.github.flinkstate.disagg.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.disagg.engine.cache.DiskCache;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.key.KeyRange;
import io.github.flinkstate.disagg.engine.sst.IoRateLimiter;
import io.github.flinkstate.disagg.engine.sst.PrefixTombstones;
import io.github.flinkstate.disagg.engine.sst.ReaderCache;
import io.github.flinkstate.disagg.engine.testutil.LateFaults;
import io.github.flinkstate.disagg.engine.testutil.LsmModelRunner;
import io.github.flinkstate.disagg.engine.version.FileMeta;
import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.Hang;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import io.github.flinkstate.testing.wait.Waits;
import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The store over a local disk tier, mostly with no memory block cache, so every block read goes to
 * the disk tier or the primary files (the tests of the warm-up's block fill have a small memory
 * tier, as the warm-up opens deeper files only while their metadata fits in half of it): files the
 * store writes are read locally, restored files are read remotely once, and a corrupt, truncated or
 * unwritable local copy costs only a primary read, never a wrong value or a failed read.
 */
class LsmStoreDiskCacheTest {

    private static final int KEYS = 3000;

    @TempDir File tmp;

    private final InjectingFileSystem fs = new InjectingFileSystem(FileSystem.getLocalFileSystem());
    private DiskCache disk;

    @AfterEach
    void closeDisk() {
        if (disk != null) {
            disk.close();
        }
    }

    private LsmOptions options(String dir, BlockCache cache) {
        return new LsmOptions(fs, new Path(new Path(tmp.toURI()), dir), KeyGroupSpan.of(0, 7))
                .backgroundCompaction(false)
                .memtableBytes(64 * 1024)
                .blockCache(cache);
    }

    private BlockCache diskOnly(long diskBytes) throws Exception {
        return diskOnly(diskBytes, true);
    }

    /** A memory tier of {@code memoryBytes} over a disk tier of {@code diskBytes}. */
    private BlockCache withMemory(long memoryBytes, long diskBytes) throws Exception {
        disk = new DiskCache(new File(tmp, "disk"), diskBytes, 0);
        return new BlockCache(memoryBytes, disk);
    }

    private BlockCache diskOnly(long diskBytes, boolean mapWholeFiles) throws Exception {
        disk = new DiskCache(new File(tmp, "disk"), diskBytes, 0, mapWholeFiles);
        return new BlockCache(0, disk);
    }

    static byte[] key(int i) {
        return LsmModelRunner.key(i % 8, 0, i);
    }

    static byte[] value(int i) {
        byte[] v = new byte[100];
        java.util.Arrays.fill(v, (byte) i);
        v[0] = (byte) (i >>> 8);
        return v;
    }

    private static void write(LsmStore store) throws Exception {
        for (int i = 0; i < KEYS; i++) {
            store.put(key(i), value(i));
        }
        store.flush();
    }

    private static void readAll(LsmStore store) throws Exception {
        for (int i = 0; i < KEYS; i++) {
            assertThat(store.get(key(i))).as("key %d", i).isEqualTo(value(i));
        }
    }

    /**
     * A compaction that fails after it wrote some outputs deletes them, and their write-through
     * copies leave the disk tier with them. Found in a review: the copies stayed (the newest
     * entries of the tier's order), and repeatedly failing compactions piled them up, pushing out
     * the copies of live files.
     */
    @Test
    void outputsOfAFailedCompaction_leaveNoLocalCopy() throws Exception {
        try (LsmStore store =
                LsmStore.open(options("p", diskOnly(64 << 20)).targetFileBytes(64 << 10))) {
            write(store);
            write(store);
            List<String> live = store.liveFiles();
            assertThat(disk.wholeFileCount()).isEqualTo(live.size());
            // the compaction's second output cannot be created: the compaction fails
            String second = String.format("-%06d\\.sst", live.size() + 2);
            fs.failCreatesMatching(".*" + second);
            long createsBefore = fs.counters().calls(FsOp.CREATE);
            assertThatThrownBy(store::compactAll)
                    .isInstanceOf(IOException.class)
                    .hasStackTraceContaining("injected failure creating");
            assertThat(fs.counters().calls(FsOp.CREATE) - createsBefore)
                    .as("the first output was created (and copied locally) before the failure")
                    .isGreaterThanOrEqualTo(2);
            fs.heal();
            assertThat(store.liveFiles()).isEqualTo(live);
            assertThat(disk.wholeFileCount())
                    .as("local copies: those of the live files only")
                    .isEqualTo(live.size());
            readAll(store);
            disk.checkInvariants();
        }
    }

    @Test
    void filesTheStoreWrites_areReadFromTheLocalCopy() throws Exception {
        try (LsmStore store = LsmStore.open(options("p", diskOnly(64 << 20)))) {
            write(store);
            assertThat(disk.wholeFileCount()).isEqualTo(store.liveFiles().size()).isPositive();
            long before = store.primaryReads().reads();
            readAll(store);
            readAll(store);
            assertThat(store.primaryReads().reads() - before)
                    .as("no read of the primary files, not even to open them")
                    .isZero();
            assertThat(disk.hitCount()).isPositive();
        }
    }

    @Test
    void restoredFiles_areReadFromThePrimaryOnce_thenFromDisk() throws Exception {
        LsmSnapshot snap;
        try (LsmStore source = LsmStore.open(options("src", new BlockCache(0)))) {
            write(source);
            snap = source.snapshot();
        }
        try (LsmStore restored = restore(snap, diskOnly(64 << 20))) {
            readAll(restored);
            long first = restored.primaryReads().reads();
            assertThat(first).isPositive();
            assertThat(disk.blockCount()).isPositive();
            assertThat(disk.wholeFileCount()).isZero();
            readAll(restored);
            assertThat(restored.primaryReads().reads())
                    .as("second pass served by the disk tier")
                    .isEqualTo(first);
        }
        snap.release();
    }

    /**
     * A file smaller than the tail read at its opening is read whole from offset 0, and the disk
     * tier keeps that copy; its first data block, also at offset 0, must then come from that copy
     * instead of from the primary storage at every read (small files are common: every checkpoint
     * flushes one).
     */
    @Test
    void aSmallFilesFirstBlock_isServedFromTheCachedCopyOfTheWholeFile() throws Exception {
        LsmSnapshot snap;
        try (LsmStore source = LsmStore.open(options("src", new BlockCache(0)))) {
            for (int i = 0; i < 20; i++) {
                source.put(key(i), value(i));
            }
            source.flush();
            snap = source.snapshot();
        }
        try (LsmStore restored = restore(snap, diskOnly(64 << 20))) {
            for (int pass = 0; pass < 2; pass++) {
                for (int i = 0; i < 20; i++) {
                    assertThat(restored.get(key(i))).isEqualTo(value(i));
                }
            }
            assertThat(restored.primaryReads().reads())
                    .as("one read of the whole small file, then the disk tier")
                    .isEqualTo(1);
        }
        snap.release();
    }

    @Test
    void corruptLocalCopies_areDropped_andThePrimaryServesTheRightValues() throws Exception {
        try (LsmStore store = LsmStore.open(options("p", diskOnly(64 << 20)))) {
            write(store);
            for (File f : localFiles()) {
                try (RandomAccessFile raf = new RandomAccessFile(f, "rw")) {
                    for (long at = 0; at < raf.length(); at += 1000) {
                        raf.seek(at);
                        int b = raf.read();
                        raf.seek(at);
                        raf.write(b ^ 0x5A);
                    }
                }
            }
            readAll(store);
            assertThat(disk.invalidationCount()).isPositive();
            assertThat(disk.wholeFileCount()).isZero();
            long before = store.primaryReads().reads();
            readAll(store);
            assertThat(store.primaryReads().reads())
                    .as("the blocks read again were cached again")
                    .isEqualTo(before);
            disk.checkInvariants();
        }
    }

    /**
     * With mapped copies, a read of a page past the new end faults; the JVM reports it as an {@link
     * InternalError}, maybe only after the read returned. {@code LsmStore.get} catches it, reads
     * the copies with system calls from then on and reads again. Where the JVM reports it after
     * {@code get} returned (in the caller: in a job, the task fails and restores), this test reads
     * again as well, so the values must be right either way.
     */
    @ParameterizedTest(name = "mapped copies: {0}")
    @ValueSource(booleans = {false, true})
    void truncatedLocalCopies_areDropped_andThePrimaryServesTheRightValues(boolean mapped)
            throws Exception {
        try (LsmStore store = LsmStore.open(options("p", diskOnly(64 << 20, mapped)))) {
            write(store);
            assertThat(disk.wholeFileCount()).isPositive();
            assertThat(disk.mappedWholeFileCount())
                    .isEqualTo(mapped ? disk.wholeFileCount() : 0)
                    .isLessThanOrEqualTo(disk.wholeFileCount());
            for (File f : localFiles()) {
                try (RandomAccessFile raf = new RandomAccessFile(f, "rw")) {
                    raf.setLength(raf.length() / 2);
                }
            }
            int faultsAfterGet = 0;
            for (int i = 0; i < KEYS; i++) {
                byte[] got;
                try {
                    got = store.get(key(i));
                    LateFaults.deliver();
                } catch (InternalError lateFault) {
                    assertThat(mapped).as("only mapped copies fault").isTrue();
                    faultsAfterGet++;
                    disk.mappingFault(lateFault);
                    got = store.get(key(i));
                }
                assertThat(got).as("key %d", i).isEqualTo(value(i));
            }
            assertThat(disk.invalidationCount()).isPositive();
            assertThat(disk.mappedWholeFileCount()).as("none after a fault").isZero();
            assertThat(faultsAfterGet).isLessThanOrEqualTo(1);
            disk.checkInvariants();
        }
    }

    @Test
    void anUnwritableCacheDirectory_costsOnlyCacheHits() throws Exception {
        try (LsmStore store = LsmStore.open(options("p", diskOnly(64 << 20)))) {
            File dir = new File(tmp, "disk");
            org.apache.flink.util.FileUtils.deleteDirectory(dir);
            assertThat(dir.createNewFile()).as("a file where the directory was").isTrue();
            write(store);
            readAll(store);
            assertThat(disk.writeFailureCount()).isPositive();
            assertThat(disk.usedBytes()).isZero();
        }
    }

    @Test
    void compaction_forgetsObsoleteFiles_andCopiesItsOutputs() throws Exception {
        try (LsmStore store = LsmStore.open(options("p", diskOnly(64 << 20)))) {
            write(store);
            write(store);
            store.compactAll();
            assertThat(disk.wholeFileCount()).isLessThanOrEqualTo(store.liveFiles().size());
            assertThat(disk.wholeFileCount()).isPositive();
            readAll(store);
            disk.checkInvariants();
        }
    }

    @Test
    void evictedReaders_keepTheirBlocksOnDisk() throws Exception {
        LsmSnapshot snap;
        try (LsmStore source = LsmStore.open(options("src", new BlockCache(0)))) {
            write(source);
            write(source);
            snap = source.snapshot();
        }
        try (LsmStore restored =
                LsmStore.open(
                        options("dst", diskOnly(64 << 20)).maxOpenFiles(1),
                        List.of(snap.manifest()))) {
            readAll(restored);
            long first = restored.primaryReads().reads();
            readAll(restored);
            assertThat(restored.primaryReads().reads())
                    .as("readers reopened after eviction read tails and blocks from disk")
                    .isEqualTo(first);
        }
        snap.release();
    }

    /** A store restored from {@code snap} over {@code cache}. */
    private LsmStore restore(LsmSnapshot snap, BlockCache cache) throws Exception {
        return LsmStore.open(options("dst", cache), List.of(snap.manifest()));
    }

    /** Starts the warm-up of {@code restored} and waits for it to end, which it must do. */
    private static WarmUp warmedUp(LsmStore restored) throws Exception {
        WarmUp w = restored.startWarmUp();
        assertThat(w.await(60_000)).isEqualTo(WarmUp.State.DONE);
        return w;
    }

    private LsmSnapshot loadedSnapshot() throws Exception {
        try (LsmStore source = LsmStore.open(options("src", new BlockCache(0)))) {
            write(source);
            source.compactAll(); // a deeper level
            for (int i = 0; i < KEYS; i += 7) {
                source.put(key(i), value(i)); // and a file in L0
            }
            source.flush();
            return source.snapshot();
        }
    }

    /**
     * A file the store drops while the warm-up opens or copies it leaves no reader behind: the
     * store evicts a file's reader when the file becomes obsolete, so a reader published by an open
     * that returns after that eviction would keep the file's streams and metadata until the reader
     * cache happened to evict it. Found in a review. The store's part is played here by a liveness
     * flag that turns false while the file's open hangs.
     */
    @Test
    void aFileDroppedWhileTheWarmUpOpensOrCopiesIt_leavesNoReaderAndNoCopy() throws Exception {
        LsmSnapshot snap = loadedSnapshot();
        String path = snap.files().get(0);
        KeyGroupSpan span = KeyGroupSpan.of(0, 7);
        FileMeta file =
                new FileMeta(
                        path,
                        snap.fileSizes().get(path),
                        KeyRange.of(span),
                        span,
                        span,
                        0,
                        0,
                        0,
                        PrefixTombstones.of(List.of()),
                        false,
                        new FileMeta.RefCount());
        String pattern = Pattern.quote(InjectingFileSystem.key(new Path(path)));
        for (boolean copy : new boolean[] {false, true}) {
            BlockCache cache = diskOnly(64 << 20);
            ReaderCache readers = new ReaderCache(fs, cache, 16);
            AtomicBoolean live = new AtomicBoolean(true);
            try (Hang open = fs.hang(FsOp.OPEN, pattern)) {
                WarmUp w =
                        new WarmUp(
                                new WarmUpOpens(
                                        copy ? List.of() : List.of(file),
                                        1,
                                        0,
                                        () -> true,
                                        () -> true),
                                copy ? List.of(file) : List.of(),
                                io.github.flinkstate.disagg.engine.cache.CacheHint.EMPTY,
                                readers,
                                disk,
                                p -> live.get(),
                                p -> live.get(),
                                () -> 0,
                                null,
                                "test");
                w.start();
                Waits.until(
                        "the warm-up opens the file",
                        Duration.ofSeconds(30),
                        () -> open.blockedCalls() == 1);
                live.set(false); // the store drops the file (and evicts its reader) meanwhile
                open.release();
                assertThat(w.await(60_000)).isEqualTo(WarmUp.State.DONE);
            }
            assertThat(readers.size()).as("open readers (copy: %s)", copy).isZero();
            assertThat(disk.wholeFileCount()).as("local copies (copy: %s)", copy).isZero();
            readers.close();
            disk.close();
            disk = null;
        }
        snap.release();
    }

    @Test
    void warmUp_afterRestore_copiesEveryFile_thenReadsNeedNoPrimaryRead() throws Exception {
        LsmSnapshot snap = loadedSnapshot();
        try (LsmStore restored = restore(snap, diskOnly(64 << 20))) {
            WarmUp w = warmedUp(restored);
            int live = restored.liveFiles().size();
            assertThat(live).isGreaterThan(1);
            assertThat(w.filesDone()).isEqualTo(live);
            assertThat(w.bytesDone()).isEqualTo(w.bytesPlanned()).isPositive();
            assertThat(disk.wholeFileCount()).isEqualTo(live);
            long afterWarmUp = restored.primaryReads().reads();
            readAll(restored);
            assertThat(restored.primaryReads().reads())
                    .as("every block read locally after the warm-up")
                    .isEqualTo(afterWarmUp);
        }
        snap.release();
    }

    @Test
    void warmUp_opensTheLiveFilesSeveralAtOnce_soTheFirstReadsDoNotOpenThemInTurn()
            throws Exception {
        LsmSnapshot snap;
        try (LsmStore source = LsmStore.open(options("src", new BlockCache(0)))) {
            for (int batch = 0; batch < 6; batch++) { // six overlapping files in L0
                for (int i = batch; i < KEYS; i += 6) {
                    source.put(key(i), value(i));
                }
                source.flush();
            }
            snap = source.snapshot();
        }
        try (LsmStore restored = restore(snap, diskOnly(64 << 20))) {
            assertThat(restored.liveFiles()).hasSizeGreaterThanOrEqualTo(6);
            // every open of a file blocks until released: the warm-up must have several at once
            try (Hang opens = fs.hang(FsOp.OPEN, ".*")) {
                WarmUp w = restored.startWarmUp();
                Waits.until(
                        "the warm-up opens 4 files at once",
                        Duration.ofSeconds(30),
                        () -> opens.blockedCalls() >= 4);
                opens.release();
                assertThat(w.await(60_000)).isEqualTo(WarmUp.State.DONE);
            }
            long afterWarmUp = restored.primaryReads().reads();
            readAll(restored);
            assertThat(restored.primaryReads().reads())
                    .as("every file open and copied after the warm-up")
                    .isEqualTo(afterWarmUp);
        }
        snap.release();
    }

    /**
     * The opens of all stores' warm-ups share a bounded set of threads. A store whose primary
     * storage hangs kept all of them (each warm-up queued every file's open at once), so another
     * store of the TaskManager, on a healthy file system, never got past its first phase and stayed
     * cold; and the hung store's warm-up thread waited for ever, after its store closed. Found in a
     * review.
     */
    @Test
    void aWarmUpWhoseOpensHang_holdsUpNeitherAnotherStoresWarmUp_norOutlivesItsStore()
            throws Exception {
        LsmSnapshot hanging = manyL0Files("srcA", WarmUp.OPENS_AT_ONCE + 4);
        LsmSnapshot healthy = manyL0Files("srcB", 3);
        DiskCache diskA = new DiskCache(new File(tmp, "diskA"), 64 << 20, 0);
        DiskCache diskB = new DiskCache(new File(tmp, "diskB"), 64 << 20, 0);
        try (Hang opens = fs.hang(FsOp.OPEN, ".*srcA.*")) {
            WarmUp a;
            try (LsmStore ra =
                            LsmStore.open(
                                    options("dstA", new BlockCache(0, diskA)),
                                    List.of(hanging.manifest()));
                    LsmStore rb =
                            LsmStore.open(
                                    options("dstB", new BlockCache(0, diskB)),
                                    List.of(healthy.manifest()))) {
                a = ra.startWarmUp();
                Waits.until(
                        "the hanging store's opens are stuck",
                        Duration.ofSeconds(30),
                        () -> opens.blockedCalls() >= WarmUp.OPENS_AT_ONCE);
                assertThat(rb.startWarmUp().await(20_000))
                        .as("the healthy store's warm-up")
                        .isEqualTo(WarmUp.State.DONE);
            }
            assertThat(a.await(10_000))
                    .as("the hanging store's warm-up, after its store closed")
                    .isNotEqualTo(WarmUp.State.RUNNING);
        } finally {
            diskA.close();
            diskB.close();
            hanging.release();
            healthy.release();
        }
    }

    /** A snapshot of a store in {@code dir} with {@code files} overlapping files in L0. */
    private LsmSnapshot manyL0Files(String dir, int files) throws Exception {
        try (LsmStore source =
                LsmStore.open(
                        options(dir, new BlockCache(0))
                                .l0CompactionTrigger(1000)
                                .l0StopWritesTrigger(1000))) {
            for (int batch = 0; batch < files; batch++) {
                for (int i = batch; i < KEYS; i += files) {
                    source.put(key(i), value(i));
                }
                source.flush();
            }
            assertThat(source.liveFiles()).hasSizeGreaterThanOrEqualTo(files);
            return source.snapshot();
        }
    }

    @Test
    void warmUp_opensOnlyTheL0Files_whenNeitherMemoryNorDiskHasRoomForMore() throws Exception {
        LsmSnapshot snap = loadedSnapshot(); // L1 files and one L0 file
        BlockCache noRoom = new BlockCache(0, disk = new DiskCache(new File(tmp, "disk"), 1024, 0));
        try (LsmStore restored = restore(snap, noRoom)) {
            int l0 = restored.filesPerLevel()[0];
            assertThat(l0).isPositive();
            assertThat(restored.liveFiles()).hasSizeGreaterThan(l0);
            WarmUp w = warmedUp(restored);
            assertThat(w.filesDone()).isZero();
            // every get needs the L0 files; the others are opened by the reads that need them
            assertThat(noRoom.openFiles()).isEqualTo(l0);
            readAll(restored);
        }
        snap.release();
    }

    @Test
    void warmUp_readsABigFileInSmallChunks_soPointReadsNeverWaitBehindMuchOfIt() throws Exception {
        LsmSnapshot snap;
        try (LsmStore source =
                LsmStore.open(options("src", new BlockCache(0)).memtableBytes(8 << 20))) {
            for (int i = 0; i < 30_000; i++) {
                source.put(key(i), value(i));
            }
            source.flush();
            snap = source.snapshot();
        }
        try (LsmStore restored = restore(snap, diskOnly(64 << 20))) {
            assertThat(restored.liveFiles()).hasSize(1);
            String file = restored.liveFiles().get(0);
            long size = fs.getFileStatus(new Path(file)).getLen();
            assertThat(size).isGreaterThan(2 << 20);
            fs.counters().reset();
            WarmUp w = warmedUp(restored);
            assertThat(w.bytesDone()).isEqualTo(size);
            long reads = fs.counters().calls(FsOp.READ, InjectingFileSystem.key(new Path(file)));
            assertThat(reads)
                    .as("reads of %d bytes in chunks of at most 512 KiB", size)
                    .isGreaterThanOrEqualTo(size / (512 << 10));
        }
        snap.release();
    }

    /**
     * Below a budget of the whole state, the warm-up copies whole files up to half the disk tier
     * and then fills the rest with blocks of the other (open) files, evicting nothing; reads after
     * it go to the primary only for the blocks that did not fit. Before, the other half filled only
     * as gets missed, one primary read per block.
     */
    @Test
    void warmUp_copiesWholeFilesUpToHalfTheDiskCache_andFillsTheRestWithBlocks() throws Exception {
        LsmSnapshot snap = loadedSnapshot();
        long total = 0;
        for (String f : snap.files()) {
            total += new File(new Path(f).toUri()).length();
        }
        // the live files do not fit, so whole files keep to half the capacity, which cannot hold
        // every file; a memory tier, so that the warm-up opens the deeper file too
        long capacity = total - 1;
        long readsWithoutWarmUp;
        try (LsmStore restored = restore(snap, withMemory(1 << 20, capacity))) {
            readAll(restored);
            readsWithoutWarmUp = restored.primaryReads().reads();
        }
        disk.close();
        try (LsmStore restored = restore(snap, withMemory(1 << 20, capacity))) {
            WarmUp w = warmedUp(restored);
            assertThat(disk.wholeFileBytes()).isPositive().isLessThanOrEqualTo(capacity / 2);
            assertThat(w.bytesPlanned()).isEqualTo(Math.min(total, capacity));
            assertThat(disk.usedBytes())
                    .as("the tier is full up to less than one block")
                    .isGreaterThan(capacity - (8 << 10))
                    .isLessThanOrEqualTo(capacity);
            assertThat(disk.evictionCount()).isZero();
            assertThat(w.bytesDone())
                    .as("whole files and blocks")
                    .isGreaterThan(disk.wholeFileBytes());
            long afterWarmUp = restored.primaryReads().reads();
            readAll(restored);
            // the blocks that did not fit, and those evicted for them before a read took them into
            // memory; whole files alone (the L0 files, a tenth of the state) leave nearly all
            assertThat(restored.primaryReads().reads() - afterWarmUp)
                    .as(
                            "primary reads after the warm-up, against %d without one",
                            readsWithoutWarmUp)
                    .isLessThan(readsWithoutWarmUp / 2);
            disk.checkInvariants();
        }
        snap.release();
    }

    /**
     * A block larger than the disk tier stores (one big value) is passed over by the warm-up's
     * fill, which goes on with the blocks after it: it used to end the fill for every file.
     */
    @Test
    void warmUp_fillPassesOverABlockLargerThanTheTierStores() throws Exception {
        LsmSnapshot snap;
        try (LsmStore source = LsmStore.open(options("src", new BlockCache(0)))) {
            write(source);
            // one block of its own, larger than a slab (256 KiB in a tier under 4 MiB), first in
            // the deeper file's key order; the small value written again below shadows it
            byte[] big = new byte[300 << 10];
            new java.util.Random(7).nextBytes(big); // incompressible, should blocks be compressed
            source.put(key(0), big);
            source.compactAll();
            for (int i = 0; i < KEYS; i += 7) {
                source.put(key(i), value(i));
            }
            source.flush();
            snap = source.snapshot();
        }
        long total = 0;
        for (String f : snap.files()) {
            total += new File(new Path(f).toUri()).length();
        }
        try (LsmStore restored = restore(snap, withMemory(1 << 20, total - 1))) {
            warmedUp(restored);
            assertThat(disk.largestBlockBytes()).isLessThan(300 << 10);
            long afterWarmUp = restored.primaryReads().reads();
            readAll(restored); // never reads the big (shadowed) value
            assertThat(restored.primaryReads().reads() - afterWarmUp)
                    .as("primary reads after the warm-up: every other block is local")
                    .isZero();
            disk.checkInvariants();
        }
        snap.release();
    }

    @Test
    void warmUp_copiesEveryFile_whenTheStateFitsInTheDiskCache() throws Exception {
        LsmSnapshot snap = loadedSnapshot();
        long total = 0;
        for (String f : snap.files()) {
            total += new File(new Path(f).toUri()).length();
        }
        // the state and room for the metadata tails the reads cache as blocks: more than half
        long capacity = total + (64 << 10);
        try (LsmStore restored = restore(snap, diskOnly(capacity))) {
            WarmUp w = warmedUp(restored);
            assertThat(w.bytesDone()).isEqualTo(total).isEqualTo(w.bytesPlanned());
            assertThat(disk.wholeFileCount()).isEqualTo(snap.files().size());
            long afterWarmUp = restored.primaryReads().reads();
            readAll(restored);
            assertThat(restored.primaryReads().reads())
                    .as("every block read locally after the warm-up")
                    .isEqualTo(afterWarmUp);
            disk.checkInvariants();
        }
        snap.release();
    }

    /**
     * With a rate limit the warm-up takes every byte it reads from the limiter, before reading it
     * (a fake clock: the sleeps are counted, not slept), and still copies every file.
     */
    @Test
    void warmUp_withARateLimit_takesEveryByteItReadsFromTheLimiter() throws Exception {
        LsmSnapshot snap = loadedSnapshot();
        AtomicLong now = new AtomicLong();
        AtomicLong slept = new AtomicLong();
        IoRateLimiter pacing =
                new IoRateLimiter(
                        1 << 20,
                        now::get,
                        (l, nanos) -> {
                            slept.addAndGet(nanos);
                            now.addAndGet(nanos);
                        });
        try (LsmStore restored =
                LsmStore.open(
                        options("dst", diskOnly(64 << 20)).warmUpRateLimiter(pacing),
                        List.of(snap.manifest()))) {
            WarmUp w = warmedUp(restored);
            assertThat(w.filesDone()).isEqualTo(restored.liveFiles().size());
            assertThat(pacing.grantedBytes()).isEqualTo(w.bytesDone()).isPositive();
            assertThat(w.bytesDone()).isGreaterThan(pacing.burstBytes());
            assertThat(slept.get())
                    .as("the bytes beyond the burst, at 1 MiB/s (in fake nanoseconds)")
                    .isGreaterThanOrEqualTo(
                            (w.bytesDone() - pacing.burstBytes()) * 1_000_000_000L / (1 << 20)
                                    - 1_000_000L);
        }
        snap.release();
    }

    /** A warm-up waiting for its rate (here: days) is cancelled by the store's close at once. */
    @Test
    void warmUp_waitingForItsRate_isCancelledByClose() throws Exception {
        LsmSnapshot snap = loadedSnapshot();
        IoRateLimiter pacing = new IoRateLimiter(1); // one byte per second
        LsmStore restored =
                LsmStore.open(
                        options("dst", diskOnly(64 << 20)).warmUpRateLimiter(pacing),
                        List.of(snap.manifest()));
        WarmUp w;
        try {
            w = restored.startWarmUp();
            Waits.until(
                    "the warm-up waits for its rate",
                    Duration.ofSeconds(30),
                    () -> pacing.throttledRequests() > 0);
        } finally {
            restored.close();
        }
        assertThat(w.state()).isEqualTo(WarmUp.State.CANCELLED);
        assertThat(w.bytesDone()).isLessThan(w.bytesPlanned());
        File[] left = new File(tmp, "disk").listFiles((d, n) -> n.endsWith(".tmp"));
        assertThat(left).as("abandoned copies are deleted").isEmpty();
        snap.release();
    }

    @Test
    void warmUp_isCancelledByClose_andLeavesNoPartialCopy() throws Exception {
        LsmSnapshot snap = loadedSnapshot();
        LsmStore restored = restore(snap, diskOnly(64 << 20));
        fs.latency(
                io.github.flinkstate.testing.fs.FsOp.READ,
                io.github.flinkstate.testing.fs.Latency.fixed(java.time.Duration.ofMillis(200)));
        WarmUp w = restored.startWarmUp();
        restored.close();
        assertThat(w.state()).isIn(WarmUp.State.CANCELLED, WarmUp.State.DONE);
        assertThat(w.await(1)).isNotEqualTo(WarmUp.State.RUNNING);
        File[] left = new File(tmp, "disk").listFiles((d, n) -> n.endsWith(".tmp"));
        assertThat(left).as("abandoned copies are deleted").isEmpty();
        snap.release();
    }

    @Test
    void warmUp_skipsAFileWhosePrimaryCopyIsCorrupt() throws Exception {
        LsmSnapshot snap = loadedSnapshot();
        String victim = snap.files().get(0);
        try (RandomAccessFile raf =
                new RandomAccessFile(new File(new Path(victim).toUri()), "rw")) {
            raf.seek(10);
            int b = raf.read();
            raf.seek(10);
            raf.write(b ^ 0xFF);
        }
        try (LsmStore restored = restore(snap, diskOnly(64 << 20))) {
            WarmUp w = warmedUp(restored);
            assertThat(w.filesDone()).isEqualTo(restored.liveFiles().size() - 1);
            assertThat(disk.holdsWholeFile(new Path(victim).toString())).isFalse();
        }
        snap.release();
    }

    private File[] localFiles() {
        File[] f = new File(tmp, "disk").listFiles((d, n) -> !n.startsWith("."));
        assertThat(f).isNotEmpty();
        return f;
    }
}
