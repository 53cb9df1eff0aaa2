package io.github.flinkstate.disagg.engine.cache;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.RandomAccessFile;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;

/**
 * The local disk tier on its own: what it returns, how it bounds and orders its space, and what it
 * does when its local files are truncated, deleted or cannot be written.
 */
class DiskCacheTest extends DiskCacheFixture {

    private DiskCache open(long capacity, long reserve) throws Exception {
        cache = new DiskCache(new File(tmp, "cache"), capacity, reserve);
        return cache;
    }

    @Test
    void offeredBlock_isReadBack_andOtherRangesMiss() throws Exception {
        open(4 * MB, 0);
        byte[] b = randomBytes(1, 4 * KB);
        cache.offer("f1", 100, b);
        assertThat(cache.read("f1", 100, b.length)).isEqualTo(b);
        assertThat(cache.read("f1", 200, b.length)).isNull();
        assertThat(cache.read("f1", 100, b.length + 1)).as("longer than cached").isNull();
        assertThat(cache.read("f1", 100, b.length - 100))
                .as("a shorter read from the same offset: the copy's first bytes")
                .isEqualTo(Arrays.copyOf(b, b.length - 100));
        assertThat(cache.read("f2", 100, b.length)).isNull();
        assertThat(cache.hitCount()).isEqualTo(2);
        assertThat(cache.missCount()).isEqualTo(3);
        assertThat(cache.usedBytes()).isEqualTo(b.length);
        cache.checkInvariants();
    }

    /**
     * A warm-up's blocks take the free room only: once it is used up they are turned away, and
     * nothing cached before them is evicted for them (an offer by a read still evicts as usual).
     */
    @Test
    void offerIntoFreeRoom_fillsTheFreeRoom_andEvictsNothing() throws Exception {
        open(4 * MB, 0); // 16 slabs of 256 KiB, one block each
        int size = 256 * KB;
        cache.offer("read", 0, randomBytes(0, size));
        int taken = 0;
        for (int i = 1;
                cache.offerIntoFreeRoom("warm", (long) i * size, randomBytes(i, size))
                        == DiskCache.FreeRoomOffer.STORED;
                i++) {
            taken++;
        }
        assertThat(taken).isEqualTo(15);
        assertThat(cache.usedBytes()).isEqualTo(4 * MB);
        assertThat(cache.freeRoomBytes()).isZero();
        assertThat(cache.evictionCount()).isZero();
        assertThat(cache.refusalCount()).as("a full cache is no refusal").isZero();
        assertThat(cache.read("read", 0, size)).isEqualTo(randomBytes(0, size));
        assertThat(cache.offerIntoFreeRoom("warm", 1L * size, randomBytes(1, size)))
                .as("cached already")
                .isEqualTo(DiskCache.FreeRoomOffer.HELD);
        assertThat(cache.offerIntoFreeRoom("warm", 99L * size, randomBytes(1, size + 1)))
                .as("larger than a slab")
                .isEqualTo(DiskCache.FreeRoomOffer.NOT_TAKEN);
        assertThat(cache.offerIntoFreeRoom("warm", 99L * size, randomBytes(1, 1)))
                .as("no room")
                .isEqualTo(DiskCache.FreeRoomOffer.NO_ROOM);
        assertThat(cache.read("warm", 15L * size, size)).isEqualTo(randomBytes(15, size));
        cache.offer("read", size, randomBytes(99, size));
        assertThat(cache.evictionCount()).as("a read's offer still evicts").isEqualTo(1);
        cache.checkInvariants();
        cache.close();
        assertThat(cache.offerIntoFreeRoom("warm", 99L * size, randomBytes(2, size)))
                .isEqualTo(DiskCache.FreeRoomOffer.NOT_TAKEN);
        assertThat(cache.freeRoomBytes()).isZero();
    }

    /**
     * Below the free-space reserve of the disk, a warm-up's block is turned away as finding no
     * room, without a refusal (a read's offer is refused there, and counted).
     */
    @Test
    void offerIntoFreeRoom_belowTheFreeSpaceReserve_findsNoRoom() throws Exception {
        open(4 * MB, Long.MAX_VALUE / 4); // a reserve no disk has
        assertThat(cache.offerIntoFreeRoom("warm", 0, randomBytes(1, 4 * KB)))
                .isEqualTo(DiskCache.FreeRoomOffer.NO_ROOM);
        assertThat(cache.refusalCount()).isZero();
        assertThat(cache.usedBytes()).isZero();
        cache.offer("read", 0, randomBytes(2, 4 * KB));
        assertThat(cache.refusalCount()).isEqualTo(1);
        assertThat(cache.usedBytes()).isZero();
    }

    @Test
    void capacity_isNeverExceeded_andTheLeastRecentlyUsedSlabGoesFirst() throws Exception {
        open(4 * MB, 0); // 16 slabs of 256 KiB, one block each
        int size = 256 * KB;
        for (int i = 0; i < 16; i++) {
            cache.offer("f", (long) i * size, randomBytes(i, size));
        }
        assertThat(cache.usedBytes()).isEqualTo(4 * MB);
        // touch the oldest slab (block 0), then write four more blocks
        assertThat(cache.read("f", 0, size)).isEqualTo(randomBytes(0, size));
        for (int i = 16; i < 20; i++) {
            cache.offer("f", (long) i * size, randomBytes(i, size));
        }
        cache.checkInvariants();
        assertThat(cache.usedBytes()).isLessThanOrEqualTo(4 * MB);
        assertThat(cache.read("f", 0, size))
                .as("recently read: kept")
                .isEqualTo(randomBytes(0, size));
        assertThat(cache.read("f", 4L * size, size)).as("least recently used: evicted").isNull();
        assertThat(cache.read("f", 19L * size, size)).isEqualTo(randomBytes(19, size));
        assertThat(cache.evictionCount()).as("slabs of blocks 1-4").isEqualTo(4);
        assertThat(cache.read("f", (long) size, size)).isNull();
        assertThat(cache.read("f", 5L * size, size)).isEqualTo(randomBytes(5, size));
    }

    @Test
    void aBlockLeavingMemory_refreshesItsDiskCopy_oneRecencyOrderForBothTiers() throws Exception {
        open(4 * MB, 0); // 16 slabs of 256 KiB, one block each
        int size = 256 * KB;
        long[] offsets = new long[20];
        for (int i = 0; i < offsets.length; i++) {
            offsets[i] = (long) i * size;
        }
        BlockCache memory = new BlockCache(size + 1024, cache); // room for one block
        CachedFile f = memory.open("f", offsets.length, offsets);
        for (int i = 0; i < 16; i++) {
            cache.offer("f", offsets[i], randomBytes(i, size));
        }
        // block 0 (oldest slab) is used from memory only, then pushed out of memory by block 5;
        // four more blocks then evict the four least recent slabs: blocks 1-4, not block 0
        f.insert(0, randomBytes(0, size));
        f.insert(5, randomBytes(5, size));
        for (int i = 16; i < 20; i++) {
            cache.offer("f", offsets[i], randomBytes(i, size));
        }
        assertThat(cache.read("f", 0, size)).as("refreshed when it left memory").isNotNull();
        assertThat(cache.read("f", offsets[4], size)).as("now the least recent: gone").isNull();
        f.release();
        memory.checkInvariants();
        cache.checkInvariants();
    }

    @Test
    void truncatedSlab_isDroppedAndMissed_neverServedShort() throws Exception {
        open(4 * MB, 0);
        cache.offer("f", 0, randomBytes(1, 64 * KB));
        cache.offer("f", 64 * KB, randomBytes(2, 64 * KB));
        for (File slab : slabs()) {
            try (RandomAccessFile raf = new RandomAccessFile(slab, "rw")) {
                raf.setLength(70 * KB);
            }
        }
        assertThat(cache.read("f", 64 * KB, 64 * KB)).isNull();
        assertThat(cache.invalidationCount()).isEqualTo(1);
        assertThat(cache.read("f", 0, 64 * KB)).as("the whole slab went").isNull();
        assertThat(cache.usedBytes()).isZero();
        cache.offer("f", 0, randomBytes(1, 64 * KB));
        assertThat(cache.read("f", 0, 64 * KB)).isEqualTo(randomBytes(1, 64 * KB));
        cache.checkInvariants();
    }

    @Test
    void invalidate_dropsTheUnitHoldingTheCorruptCopy() throws Exception {
        open(4 * MB, 0);
        cache.offer("f", 0, randomBytes(1, 4 * KB));
        cache.invalidate("f", 0, "CRC32C mismatch");
        assertThat(cache.read("f", 0, 4 * KB)).isNull();
        assertThat(cache.invalidationCount()).isEqualTo(1);
        assertThat(slabs()).isEmpty();
        cache.checkInvariants();
    }

    @Test
    void deletedLocalFiles_neverServeWrongBytes() throws Exception {
        open(4 * MB, 0);
        cache.offer("f", 0, randomBytes(1, 4 * KB));
        for (File f : slabs()) {
            assertThat(f.delete()).isTrue();
        }
        byte[] read = cache.read("f", 0, 4 * KB);
        if (read != null) {
            // POSIX keeps an unlinked file readable through an open channel
            assertThat(read).isEqualTo(randomBytes(1, 4 * KB));
        }
        cache.checkInvariants();
    }

    @Test
    void freeSpaceReserve_refusesToCache_insteadOfFillingTheDisk() throws Exception {
        long free = tmp.getUsableSpace();
        open(4 * MB, free + 100 * MB);
        cache.offer("f", 0, randomBytes(1, 4 * KB));
        assertThat(cache.read("f", 0, 4 * KB)).isNull();
        assertThat(cache.refusalCount()).isEqualTo(1);
        assertThat(cache.writeThrough("g")).as("no whole-file copies either").isNull();
        assertThat(cache.usedBytes()).isZero();
    }

    @Test
    void aFailingLocalDisk_pausesLocalWrites_insteadOfRetryingEveryBlock() throws Exception {
        open(4 * MB, 0);
        File dir = new File(tmp, "cache");
        org.apache.flink.util.FileUtils.deleteDirectory(dir);
        assertThat(dir.createNewFile()).as("a file where the directory was").isTrue();
        for (int i = 0; i < 100; i++) {
            cache.offer("f", (long) i * 4 * KB, randomBytes(i, 4 * KB));
        }
        assertThat(cache.writeThrough("g")).isNull();
        assertThat(cache.writeFailureCount()).as("one failure, then a pause").isEqualTo(1);
        assertThat(cache.read("f", 0, 4 * KB)).isNull();
        cache.checkInvariants();
    }

    @Test
    void writeThrough_keepsAWholeFileCopy_readableAtAnyOffset() throws Exception {
        open(4 * MB, 0);
        byte[] file = randomBytes(7, 300 * KB);
        WriteThrough copy = cache.writeThrough("sst-1");
        assertThat(copy).isNotNull();
        copy.write(file, 0, 1000);
        copy.write(file, 1000, file.length - 1000);
        copy.commit(file.length);
        assertThat(cache.wholeFileCount()).isEqualTo(1);
        assertThat(cache.read("sst-1", 12345, 999))
                .isEqualTo(java.util.Arrays.copyOfRange(file, 12345, 12345 + 999));
        assertThat(cache.read("sst-1", file.length - 10, 20)).as("past the end").isNull();
        cache.offer("sst-1", 0, new byte[10]);
        assertThat(cache.blockCount()).as("blocks of whole copies are not cached twice").isZero();
        cache.forget("sst-1");
        assertThat(cache.read("sst-1", 0, 10)).isNull();
        assertThat(cache.usedBytes()).isZero();
        assertThat(localFiles()).isEmpty();
        cache.checkInvariants();
    }

    @Test
    void writeThrough_abortedOrShort_leavesNothing() throws Exception {
        open(4 * MB, 0);
        WriteThrough aborted = cache.writeThrough("a");
        aborted.write(new byte[100], 0, 100);
        aborted.abort();
        WriteThrough shortCopy = cache.writeThrough("b");
        shortCopy.write(new byte[100], 0, 100);
        shortCopy.commit(200);
        assertThat(cache.wholeFileCount()).isZero();
        assertThat(cache.read("a", 0, 10)).isNull();
        assertThat(cache.read("b", 0, 10)).isNull();
        assertThat(localFiles()).isEmpty();
        assertThat(cache.writeFailureCount()).as("the short copy").isEqualTo(1);
    }

    @Test
    void wholeFiles_takeAtMostHalfTheCapacity_thenBlocksAreCachedInstead() throws Exception {
        open(4 * MB, 0);
        for (int i = 0; i < 4; i++) {
            WriteThrough copy = cache.writeThrough("sst-" + i);
            if (copy != null) {
                byte[] file = randomBytes(i, (int) MB);
                copy.write(file, 0, file.length);
                copy.commit(file.length);
            }
        }
        assertThat(cache.wholeFileCount()).isEqualTo(2);
        cache.offer("sst-3", 0, randomBytes(3, 4 * KB));
        assertThat(cache.read("sst-3", 0, 4 * KB)).isEqualTo(randomBytes(3, 4 * KB));
        cache.checkInvariants();
    }

    @Test
    void wholeFiles_mayFillTheCapacity_whileTheStoresLiveFilesFitInIt() throws Exception {
        open(10 * MB, 0);
        assertThat(cache.wholeFileLimitBytes()).as("live size unknown").isEqualTo(5 * MB);
        cache.liveBytes(10 * MB);
        assertThat(cache.wholeFileLimitBytes()).isEqualTo(10 * MB);
        for (int i = 0; i < 10; i++) {
            WriteThrough copy = cache.writeThrough("sst-" + i, MB);
            assertThat(copy).as("file %d of a state that fits", i).isNotNull();
            byte[] file = randomBytes(i, (int) MB);
            copy.write(file, 0, file.length);
            assertThat(copy.commit(file.length)).isTrue();
        }
        assertThat(cache.wholeFileCount()).isEqualTo(10);
        assertThat(cache.writeThrough("sst-10", 1)).as("beyond the capacity").isNull();

        cache.liveBytes(10 * MB + 1); // the state outgrew the cache: half again for new files
        assertThat(cache.wholeFileLimitBytes()).isEqualTo(5 * MB);
        assertThat(cache.writeThrough("sst-11", 1)).isNull();
        cache.checkInvariants();
    }

    @Test
    void filesBeingRewritten_areEvictedFirst_soTheirReplacementsDoNotEvictLiveFiles()
            throws Exception {
        open(4 * MB, 0);
        cache.liveBytes(4 * MB);
        for (int i = 0; i < 4; i++) {
            WriteThrough copy = cache.writeThrough("sst-" + i, MB);
            byte[] file = randomBytes(i, (int) MB);
            copy.write(file, 0, file.length);
            assertThat(copy.commit(file.length)).isTrue();
        }
        cache.read("sst-0", 0, 16); // sst-1 is now the least recently used, sst-3 the most
        cache.read("sst-2", 0, 16);
        cache.read("sst-3", 0, 16);
        cache.evictFirst(java.util.List.of("sst-3"));

        WriteThrough output = cache.writeThrough("sst-4", MB);
        byte[] file = randomBytes(4, (int) MB);
        output.write(file, 0, file.length);
        assertThat(output.commit(file.length)).isTrue();
        assertThat(cache.holdsWholeFile("sst-3")).as("the input being rewritten").isFalse();
        assertThat(cache.holdsWholeFile("sst-1")).as("the least recently used live file").isTrue();

        cache.stopEvictingFirst(java.util.List.of("sst-3"));
        assertThat(cache.writeThrough("sst-5", MB))
                .as("whole files fill the cache; nothing is being rewritten")
                .isNull();
        cache.checkInvariants();
    }

    @Test
    void blocksOfAFileAboutToBeCopiedWhole_areNotCachedMeanwhile() throws Exception {
        open(4 * MB, 0);
        cache.expectWholeCopy("sst-1");
        cache.offer("sst-1", 0, randomBytes(1, 4 * KB));
        cache.offer("sst-2", 0, randomBytes(2, 4 * KB));
        assertThat(cache.read("sst-1", 0, 4 * KB)).as("room kept for the whole copy").isNull();
        assertThat(cache.read("sst-2", 0, 4 * KB)).isEqualTo(randomBytes(2, 4 * KB));

        cache.stopExpectingWholeCopy("sst-1"); // e.g. the copy was skipped
        cache.offer("sst-1", 0, randomBytes(1, 4 * KB));
        assertThat(cache.read("sst-1", 0, 4 * KB)).isEqualTo(randomBytes(1, 4 * KB));
        cache.checkInvariants();
    }

    @Test
    void forget_dropsTheBlocksOfAFile() throws Exception {
        open(4 * MB, 0);
        cache.offer("f", 0, randomBytes(1, 4 * KB));
        cache.offer("f", 4 * KB, randomBytes(2, 4 * KB));
        cache.offer("g", 0, randomBytes(3, 4 * KB));
        cache.forget("f");
        assertThat(cache.read("f", 0, 4 * KB)).isNull();
        assertThat(cache.read("g", 0, 4 * KB)).isEqualTo(randomBytes(3, 4 * KB));
        assertThat(cache.blockCount()).isEqualTo(1);
        cache.checkInvariants();
    }

    @Test
    void close_deletesEverything_andLaterCallsAreHarmless() throws Exception {
        open(4 * MB, 0);
        cache.offer("f", 0, randomBytes(1, 4 * KB));
        cache.close();
        assertThat(new File(tmp, "cache")).doesNotExist();
        assertThat(cache.read("f", 0, 4 * KB)).isNull();
        cache.offer("f", 0, randomBytes(1, 4 * KB));
        assertThat(cache.writeThrough("g")).isNull();
    }

    @Test
    void aLeftoverDirectory_isWipedOnStart() throws Exception {
        File dir = new File(tmp, "cache");
        assertThat(dir.mkdirs()).isTrue();
        assertThat(new File(dir, "slab-0.blk").createNewFile()).isTrue();
        open(4 * MB, 0);
        assertThat(localFiles()).isEmpty();
    }

    @Test
    void concurrentOffersReadsAndEvictions_returnOnlyWhatWasOffered() throws Exception {
        open(2 * MB, 0); // slabs of 256 KiB; 64 blocks of 64 KiB compete for 32 places
        int blocks = 64;
        int size = 64 * KB;
        List<Callable<Void>> tasks = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            int seed = t;
            tasks.add(
                    () -> {
                        Random r = new Random(seed);
                        for (int i = 0; i < 2000; i++) {
                            int b = r.nextInt(blocks);
                            byte[] got = cache.read("f", (long) b * size, size);
                            if (got == null) {
                                cache.offer("f", (long) b * size, randomBytes(b, size));
                            } else {
                                assertThat(got).isEqualTo(randomBytes(b, size));
                            }
                        }
                        return null;
                    });
        }
        runAtOnce(tasks);
        cache.checkInvariants();
        assertThat(cache.hitCount()).isPositive();
        assertThat(cache.evictionCount()).isPositive();
        assertThat(cache.invalidationCount()).isZero();
    }

    /** The cache directory's files apart from its in-use marker. */
    private File[] localFiles() {
        File[] f =
                new File(tmp, "cache").listFiles((d, n) -> !n.equals(CacheDirectoryLock.LOCK_FILE));
        return f == null ? new File[0] : f;
    }

    @Test
    void abandonedDirectories_areDeleted_liveOnesKept() throws Exception {
        File root = new File(tmp, "root");
        DiskCache live = new DiskCache(new File(root, "live"), 4 * MB, 0);
        try {
            live.offer("f", 0, randomBytes(1, 4 * KB));
            File dead = new File(root, "dead");
            assertThat(dead.mkdirs()).isTrue();
            assertThat(new File(dead, CacheDirectoryLock.LOCK_FILE).createNewFile()).isTrue();
            assertThat(new File(dead, "slab-0.blk").createNewFile()).isTrue();
            File fresh = new File(root, "being-created");
            assertThat(fresh.mkdirs()).isTrue();

            assertThat(DiskCache.deleteAbandonedDirectories(root)).isEqualTo(1);
            assertThat(dead).doesNotExist();
            assertThat(fresh).as("no lock file yet, but young").exists();
            assertThat(live.read("f", 0, 4 * KB)).isEqualTo(randomBytes(1, 4 * KB));
        } finally {
            live.close();
        }
        assertThat(DiskCache.deleteAbandonedDirectories(new File(tmp, "missing"))).isZero();
    }

    private File[] slabs() {
        File[] f = new File(tmp, "cache").listFiles((d, n) -> n.startsWith("slab-"));
        return f == null ? new File[0] : f;
    }
}
