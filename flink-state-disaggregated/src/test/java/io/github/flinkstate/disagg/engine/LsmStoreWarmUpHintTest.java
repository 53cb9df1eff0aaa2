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
 * restore into a smaller cache fills what fits, evicting nothing. The memory tier is too small for
 * the metadata of every file: the warm-up opens the files the hint names anyway (it fills only open
 * files, and it left most hinted blocks to the primary before it did).
 */
class LsmStoreWarmUpHintTest {

    private static final int KEYS = 20_000;
    private static final long CAPACITY = 1 << 20;

    @TempDir File tmp;

    private final InjectingFileSystem fs = new InjectingFileSystem(FileSystem.getLocalFileSystem());
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
        return new BlockCache(16 << 10, disk);
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

    /** Primary reads the hot keys cost in a store restored from {@code snap} and warmed up. */
    private long primaryReadsOfHotKeysAfterWarmUp(LsmSnapshot snap, String name, long diskBytes)
            throws Exception {
        BlockCache cache = caches(name + "-disk", diskBytes);
        try (LsmStore restored =
                LsmStore.open(options(name, cache, true), List.of(snap.manifest()))) {
            WarmUp w = restored.startWarmUp();
            assertThat(w.await(60_000)).isEqualTo(WarmUp.State.DONE);
            assertThat(cache.disk().evictionCount()).isZero();
            assertThat(cache.disk().usedBytes()).isLessThanOrEqualTo(diskBytes);
            cache.disk().checkInvariants();
            long before = restored.primaryReads().reads();
            readHot(restored);
            return restored.primaryReads().reads() - before;
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
        assertThat(ManifestCodec.decode(byLevel.manifest()).hint().isEmpty()).isTrue();

        long withoutHint = primaryReadsOfHotKeysAfterWarmUp(byLevel, "restored-by-level", CAPACITY);
        long withHint = primaryReadsOfHotKeysAfterWarmUp(hinted, "restored-hinted", CAPACITY);
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

    @Test
    void aRestoreIntoASmallerCache_fillsWhatFits_andEvictsNothing() throws Exception {
        LsmSnapshot hinted = snapshotAfterHotReads("hinted", true);
        long blocks = ManifestCodec.decode(hinted.manifest()).hint().blockCount();
        assertThat(blocks).isPositive();
        // a quarter of the source's cache: the hint names more than fits
        primaryReadsOfHotKeysAfterWarmUp(hinted, "restored-small", CAPACITY / 4);
        hinted.release();
    }
}
