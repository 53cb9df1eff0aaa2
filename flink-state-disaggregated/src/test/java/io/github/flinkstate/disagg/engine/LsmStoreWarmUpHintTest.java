package io.github.flinkstate.disagg.engine;

import static io.github.flinkstate.disagg.engine.LsmStoreDiskCacheTest.key;
import static io.github.flinkstate.disagg.engine.LsmStoreDiskCacheTest.value;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.disagg.engine.cache.CacheHint;
import io.github.flinkstate.disagg.engine.cache.DiskCache;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.version.ManifestCodec;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import java.io.File;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The warm-up after a restore fetches what the snapshot's caches held ({@link CacheHint}) first:
 * with hot keys spread over every file, a cache of 40% of the state serves them all locally right
 * after the warm-up, where the warm-up by level leaves many of them to the primary storage; and a
 * restore into a smaller cache fills up with the hint's blocks only, evicting nothing. The memory
 * tier is sized so that the hinted files' metadata (about 3.5 KiB a file here) fits in the three
 * quarters of it the warm-up lets hinted files take (with a third of this size, and opens not
 * bounded then, the hinted warm-up left 88 of the hot keys' reads to the primary, against 89 by
 * level, for it fills only open files).
 */
class LsmStoreWarmUpHintTest {

    private static final int KEYS = 20_000;
    private static final long CAPACITY = 1 << 20;

    @TempDir File tmp;

    private final InjectingFileSystem fs = new InjectingFileSystem(FileSystem.getLocalFileSystem());

    /** The disk tiers the test opened, closed after it. */
    private final List<DiskCache> disks = new ArrayList<>();

    @AfterEach
    void closeDisks() {
        disks.forEach(DiskCache::close);
    }

    /** Runs of 10 keys in a row in each key group, 40 runs spread over the whole key range. */
    private static boolean hot(int i) {
        return (i / 8) % 500 < 10;
    }

    private BlockCache caches(String name, long diskBytes) throws Exception {
        DiskCache disk = new DiskCache(new File(tmp, name), diskBytes, 0);
        disks.add(disk);
        return new BlockCache(48 << 10, disk);
    }

    private LsmOptions options(String dir, BlockCache cache, boolean hint) {
        return new LsmOptions(fs, new Path(new Path(tmp.toURI()), dir), KeyGroupSpan.of(0, 7))
                .backgroundCompaction(false)
                .memtableBytes(256 << 10)
                .targetFileBytes(256 << 10)
                .blockCache(cache)
                .cacheHintInSnapshots(hint);
    }

    /** A store that read its hot keys a few times before its snapshot, as a running job does. */
    private LsmSnapshot snapshotAfterHotReads(String dir, boolean hint) throws Exception {
        try (LsmStore source = LsmStore.open(options(dir, caches(dir + "-disk", CAPACITY), hint))) {
            for (int i = 0; i < KEYS; i++) {
                source.put(key(i), value(i));
            }
            source.flush();
            source.compactAll();
            for (int round = 0; round < 3; round++) {
                readHot(source);
            }
            return source.snapshot();
        }
    }

    private static void readHot(LsmStore store) throws Exception {
        for (int i = 0; i < KEYS; i++) {
            if (hot(i)) {
                assertThat(store.get(key(i))).as("key %d", i).isEqualTo(value(i));
            }
        }
    }

    /** A store restored from {@code snap} into caches with a disk tier of {@code diskBytes}. */
    private LsmStore restore(LsmSnapshot snap, String name, long diskBytes) throws Exception {
        return LsmStore.open(
                options(name, caches(name + "-disk", diskBytes), true), List.of(snap.manifest()));
    }

    /** Starts the warm-up of {@code restored} and waits for it to end; it evicts nothing. */
    private static DiskCache warmedUp(LsmStore restored) throws Exception {
        WarmUp w = restored.startWarmUp();
        assertThat(w.await(60_000)).isEqualTo(WarmUp.State.DONE);
        DiskCache disk = restored.blockCache().disk();
        assertThat(disk.evictionCount()).isZero();
        assertThat(disk.usedBytes()).isLessThanOrEqualTo(disk.capacityBytes());
        disk.checkInvariants();
        return disk;
    }

    /** Reads the hot keys once; returns the primary reads that took. */
    private static long primaryReadsOfHotKeys(LsmStore store) throws Exception {
        long before = store.primaryReads().reads();
        readHot(store);
        return store.primaryReads().reads() - before;
    }

    /** Primary reads the hot keys cost in a store restored from {@code snap} and warmed up. */
    private long primaryReadsOfHotKeysAfterWarmUp(LsmSnapshot snap, String name, long diskBytes)
            throws Exception {
        try (LsmStore restored = restore(snap, name, diskBytes)) {
            warmedUp(restored);
            return primaryReadsOfHotKeys(restored);
        }
    }

    @Test
    void warmUp_fetchesTheBlocksTheSnapshotsCachesHeld_soHotKeysSpreadOverEveryFileAreLocal()
            throws Exception {
        LsmSnapshot hinted = snapshotAfterHotReads("hinted", true);
        LsmSnapshot byLevel = snapshotAfterHotReads("by-level", false);
        long stateBytes = 0;
        for (long size : hinted.fileSizes().values()) {
            stateBytes += size;
        }
        assertThat(stateBytes).as("the state is well beyond the cache").isGreaterThan(2 * CAPACITY);
        assertThat(hinted.files())
                .as("several files to spread the hot keys over")
                .hasSizeGreaterThan(6);
        CacheHint hint = ManifestCodec.decode(hinted.manifest()).hint();
        assertThat(hint.isEmpty()).isFalse();
        assertThat(hint.memoryBlockCount()).as("the memory tier's blocks marked").isPositive();
        assertThat(ManifestCodec.decode(byLevel.manifest()).hint().isEmpty()).isTrue();

        long withoutHint = primaryReadsOfHotKeysAfterWarmUp(byLevel, "restored-by-level", CAPACITY);
        long withHint;
        try (LsmStore restored = restore(hinted, "restored-hinted", CAPACITY)) {
            WarmUp w = restored.startWarmUp();
            DiskCache disk = warmedUp(restored);
            assertThat(w.memoryBytesDone()).as("loaded back into the memory tier").isPositive();
            assertThat(disk.usedBytes())
                    .as("the tier is full up to less than two blocks")
                    .isGreaterThan(CAPACITY - (8 << 10));
            withHint = primaryReadsOfHotKeys(restored);
        }
        assertThat(withoutHint)
                .as("by level, the blocks of the files beyond the cache's share are remote")
                .isGreaterThan(10);
        assertThat(withHint)
                .as(
                        "primary reads of the hot keys after a hinted warm-up (%d by level)",
                        withoutHint)
                .isZero();
        hinted.release();
        byLevel.release();
    }

    /**
     * The snapshot's manifest with its hint's block entries re-marked: each entry's first half of
     * blocks as the memory tier's, every other one of them (the first, third, ...) as held by the
     * memory tier only, the others by both tiers.
     */
    private static byte[] withMemoryMarks(LsmSnapshot snap) throws Exception {
        ManifestCodec.Manifest m = ManifestCodec.decode(snap.manifest());
        List<CacheHint.Entry> entries = new ArrayList<>();
        for (CacheHint.Entry e : m.hint().entries()) {
            long[] o = e.offsets();
            long[] memoryOnly = new long[(o.length / 2 + 1) / 2];
            for (int i = 0; i < memoryOnly.length; i++) {
                memoryOnly[i] = o[2 * i];
            }
            entries.add(
                    e.whole()
                            ? e
                            : new CacheHint.Entry(
                                    e.file(),
                                    false,
                                    o,
                                    java.util.Arrays.copyOf(o, o.length / 2),
                                    memoryOnly));
        }
        List<List<io.github.flinkstate.disagg.engine.version.FileMeta>> levels = new ArrayList<>();
        m.levels().forEach(l -> levels.add(new ArrayList<>(l)));
        return ManifestCodec.encode(
                m.span(),
                m.lastSeq(),
                new io.github.flinkstate.disagg.engine.version.VersionSet(m.span(), levels, f -> {})
                        .current(),
                new CacheHint(entries));
    }

    /**
     * The blocks the memory tier held at the snapshot are loaded into the memory tier, up to its
     * room; those only it held are not stored on disk too unless they did not fit in memory, and
     * all other hinted blocks go to the disk tier. So the two tiers start as they were: put on disk
     * too, the blocks only the memory tier held took the room of as many of the disk tier's.
     */
    @Test
    void theMemoryTiersBlocks_goBackToTheMemoryTier_andOnlyThoseBothHeldToDiskToo()
            throws Exception {
        LsmSnapshot snap = snapshotAfterHotReads("hinted", true);
        CacheHint hint = ManifestCodec.decode(withMemoryMarks(snap)).hint();
        assertThat(hint.memoryBlockCount()).isGreaterThan(20);
        String name = "restored";
        try (LsmStore restored =
                LsmStore.open(
                        options(name, caches(name + "-disk", CAPACITY), true),
                        List.of(withMemoryMarks(snap)))) {
            WarmUp w = restored.startWarmUp();
            DiskCache disk = warmedUp(restored);
            assertThat(w.memoryBytesDone()).as("bytes loaded into memory").isPositive();
            java.util.Set<String> inMemory = new java.util.HashSet<>();
            restored.blockCache()
                    .visitResidentBlocks(
                            new CacheHint.Visitor() {
                                @Override
                                public boolean wholeFile(String file, long length) {
                                    return true;
                                }

                                @Override
                                public boolean block(String file, long offset, int length) {
                                    inMemory.add(file + "@" + offset);
                                    return true;
                                }
                            });
            int onlyInMemory = 0;
            int bothInMemory = 0;
            List<String> wrong = new ArrayList<>();
            for (CacheHint.Entry e : hint.entries()) {
                for (long offset : e.offsets()) {
                    String block = e.file() + "@" + offset;
                    boolean memory = inMemory.contains(block);
                    boolean onDisk = disk.holdsBlock(e.file(), offset);
                    boolean memoryOnly =
                            java.util.Arrays.binarySearch(e.memoryOnlyOffsets(), offset) >= 0;
                    boolean ofMemory =
                            java.util.Arrays.binarySearch(e.memoryOffsets(), offset) >= 0;
                    if (memoryOnly) {
                        if (memory) {
                            onlyInMemory++;
                        }
                        if (memory == onDisk) {
                            wrong.add(
                                    block
                                            + " (memory only): memory "
                                            + memory
                                            + ", disk "
                                            + onDisk);
                        }
                    } else if (!onDisk) {
                        wrong.add(block + (ofMemory ? " (both)" : " (disk)") + ": not on disk");
                    } else if (ofMemory && memory) {
                        bothInMemory++;
                    } else if (memory) {
                        wrong.add(block + " (disk): in memory");
                    }
                }
            }
            assertThat(wrong).as("hinted blocks in the wrong tier").isEmpty();
            assertThat(onlyInMemory).as("memory-only blocks loaded into memory").isPositive();
            assertThat(bothInMemory).as("blocks both held, loaded into memory").isPositive();
            // no check of the hot keys' primary reads: the marks are made up, and blocks marked
            // as the memory tier's only are read from the primary again once the memory tier
            // evicts them, as they would have been before the snapshot
        }
        snap.release();
    }

    /**
     * In a quarter of the cache the hint names more blocks than fit: the tier fills up with the
     * blocks and whole files it names, and nothing else (hot reads in one pass over more than the
     * tier holds would then miss alike whatever it held, so it is what the tier holds that is
     * checked here).
     */
    @Test
    void aRestoreIntoASmallerCache_fillsUpWithTheHintsBlocks_andEvictsNothing() throws Exception {
        LsmSnapshot hinted = snapshotAfterHotReads("hinted", true);
        CacheHint hint = ManifestCodec.decode(hinted.manifest()).hint();
        long small = CAPACITY / 4;
        assertThat(hint.blockCount() * 4096)
                .as("the hint names more than fits")
                .isGreaterThan(small);
        try (LsmStore restored = restore(hinted, "small", small)) {
            DiskCache disk = warmedUp(restored);
            assertThat(disk.usedBytes())
                    .as("the tier is full up to less than two blocks")
                    .isGreaterThan(small - (8 << 10));
            List<String> notHinted = new ArrayList<>();
            int[] held = new int[1];
            disk.visitRecentFirst(
                    new CacheHint.Visitor() {
                        @Override
                        public boolean wholeFile(String file, long bytes) {
                            CacheHint.Entry e = hint.entryOf(file);
                            if (e == null || !e.whole()) {
                                notHinted.add(file + " whole");
                            }
                            return true;
                        }

                        @Override
                        public boolean block(String file, long offset, int length) {
                            CacheHint.Entry e = hint.entryOf(file);
                            if (e == null
                                    || java.util.Arrays.binarySearch(e.offsets(), offset) < 0) {
                                notHinted.add(file + " @" + offset);
                            } else {
                                held[0]++;
                            }
                            return true;
                        }
                    });
            assertThat(held[0]).as("hinted blocks held").isGreaterThanOrEqualTo(10);
            assertThat(notHinted).as("blocks and whole copies the hint does not name").isEmpty();
        }
        hinted.release();
    }

    /**
     * With room for every file whole, a hinted warm-up copies every file whole (read through memory
     * mappings), those the hint names first: it used to copy only the files the hint named whole
     * and fill the others block by block. Found in a review.
     */
    @Test
    void aRestoreWithRoomForEveryFileWhole_copiesEveryFileWhole() throws Exception {
        LsmSnapshot hinted = snapshotAfterHotReads("hinted", true);
        long stateBytes = 0;
        for (long size : hinted.fileSizes().values()) {
            stateBytes += size;
        }
        assertThat(ManifestCodec.decode(hinted.manifest()).hint().blockCount()).isPositive();
        try (LsmStore restored = restore(hinted, "roomy", 2 * stateBytes)) {
            DiskCache disk = warmedUp(restored);
            assertThat(disk.wholeFileCount()).isEqualTo(restored.liveFiles().size());
            assertThat(primaryReadsOfHotKeys(restored)).isZero();
        }
        hinted.release();
    }

    /** A store told to drop its restored hint (its warm-up is off) warms up by level if asked. */
    @Test
    void aDroppedHint_leavesTheWarmUpToGoByLevel() throws Exception {
        LsmSnapshot hinted = snapshotAfterHotReads("hinted", true);
        try (LsmStore restored = restore(hinted, "dropped", CAPACITY)) {
            restored.dropRestoredHint();
            warmedUp(restored);
            assertThat(primaryReadsOfHotKeys(restored)).isGreaterThan(10);
        }
        hinted.release();
    }
}
