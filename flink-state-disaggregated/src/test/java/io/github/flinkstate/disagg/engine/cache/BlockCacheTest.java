package io.github.flinkstate.disagg.engine.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The CLOCK block cache: weight bound, second chance, sharing and release of per-file tables. */
class BlockCacheTest {

    private static final int BLOCK = 1000;
    private static final long WEIGHT = BLOCK + BlockCache.ENTRY_OVERHEAD;

    @Test
    void hitReturnsTheCachedPayloadAndCountsRequests() {
        BlockCache cache = new BlockCache(10 * WEIGHT);
        CachedFile f = cache.open("a", 4);
        assertThat(f.lookup(2)).isNull();
        byte[] payload = payload(7);
        assertThat(f.insert(2, payload)).isSameAs(payload);
        assertThat(f.lookup(2)).isSameAs(payload);
        assertThat(cache.hitCount()).isEqualTo(1);
        assertThat(cache.requestCount()).isEqualTo(2);
        assertThat(cache.weightedSize()).isEqualTo(WEIGHT);
        cache.checkInvariants();
    }

    @Test
    void losingRaceInsertGetsTheResidentCopy() {
        BlockCache cache = new BlockCache(10 * WEIGHT);
        CachedFile f = cache.open("a", 1);
        byte[] first = payload(1);
        f.insert(0, first);
        assertThat(f.insert(0, payload(2))).isSameAs(first);
        assertThat(cache.weightedSize()).isEqualTo(WEIGHT);
    }

    @Test
    void evictionGivesReferencedBlocksASecondChance() {
        BlockCache cache = new BlockCache(3 * WEIGHT);
        CachedFile f = cache.open("a", 10);
        for (int b = 0; b < 3; b++) {
            f.insert(b, payload(b));
        }
        assertThat(f.lookup(0)).isNotNull(); // block 0 referenced, 1 and 2 not
        f.insert(3, payload(3));
        assertThat(f.lookup(0)).isNotNull();
        assertThat(f.lookup(1)).isNull();
        assertThat(f.lookup(2)).isNotNull();
        assertThat(f.lookup(3)).isNotNull();
        cache.checkInvariants();
    }

    @Test
    void cachesOnOneMemory_shareItsBytesAndOneClockOrder_eachCountingItsOwnBlocks() {
        BlockMemory memory = new BlockMemory(4 * WEIGHT);
        BlockCache a = new BlockCache(memory, null);
        BlockCache b = new BlockCache(memory, null);
        CachedFile fa = a.open("a", 10);
        CachedFile fb = b.open("b", 10);
        for (int i = 0; i < 3; i++) {
            fa.insert(i, payload(i));
        }
        assertThat(fa.lookup(0)).isNotNull(); // block a/0 referenced: it gets a second chance
        fb.insert(0, payload(10));
        fb.insert(1, payload(11)); // the memory is full: a cold block of a leaves
        assertThat(memory.usedBytes()).isEqualTo(4 * WEIGHT);
        assertThat(a.weightedSize()).isEqualTo(2 * WEIGHT);
        assertThat(b.weightedSize()).isEqualTo(2 * WEIGHT);
        assertThat(fa.peek(0)).as("referenced: kept").isNotNull();
        assertThat(fa.peek(1)).as("the first cold block in clock order").isNull();
        assertThat(a.capacityBytes()).isEqualTo(b.capacityBytes()).isEqualTo(4 * WEIGHT);
        a.checkInvariants();
        b.checkInvariants();

        fa.release(); // a's reader closes: only a's blocks leave
        assertThat(a.weightedSize()).isZero();
        assertThat(b.weightedSize()).isEqualTo(2 * WEIGHT);
        assertThat(memory.usedBytes()).isEqualTo(2 * WEIGHT);
        assertThat(fb.lookup(0)).isNotNull();
        assertThat(fb.lookup(1)).isNotNull();
        b.checkInvariants();
        a.checkInvariants();
    }

    @Test
    void pinnedMetadata_takesRoomFromTheBlocks_andWhenItFillsTheMemoryNothingIsCached() {
        BlockMemory memory = new BlockMemory(4 * WEIGHT);
        BlockCache cache = new BlockCache(memory, null);
        CachedFile f = cache.open("a", 10);
        for (int i = 0; i < 4; i++) {
            f.insert(i, payload(i));
        }
        cache.pinMetadata(WEIGHT + 1); // two blocks must go to make room
        assertThat(cache.weightedSize()).isEqualTo(2 * WEIGHT);
        assertThat(cache.pinnedMetadataBytes()).isEqualTo(WEIGHT + 1);
        cache.checkInvariants();

        cache.pinMetadata(4 * WEIGHT); // metadata alone over the capacity: no block stays
        assertThat(cache.weightedSize()).isZero();
        byte[] p = payload(9);
        assertThat(f.insert(9, p)).isSameAs(p);
        assertThat(f.lookup(9)).as("not cached while metadata fills the memory").isNull();
        cache.checkInvariants();

        cache.unpinMetadata(4 * WEIGHT);
        cache.unpinMetadata(WEIGHT + 1);
        assertThat(memory.pinnedBytes()).isZero();
        f.insert(9, p);
        assertThat(f.lookup(9)).isSameAs(p);
        cache.checkInvariants();
    }

    @Test
    void sameFileNameInTwoCachesOnOneMemory_areTwoTables() {
        BlockMemory memory = new BlockMemory(10 * WEIGHT);
        BlockCache a = new BlockCache(memory, null);
        BlockCache b = new BlockCache(memory, null);
        CachedFile fa = a.open("same", 2);
        CachedFile fb = b.open("same", 3); // another store's file: no block-count conflict
        fa.insert(0, payload(1));
        assertThat(fb.lookup(0)).isNull();
        fb.release();
        assertThat(fa.lookup(0)).isNotNull();
        a.checkInvariants();
        b.checkInvariants();
    }

    @Test
    void sharedTableLivesUntilTheLastReleaseAndThenStopsCaching() {
        BlockCache cache = new BlockCache(10 * WEIGHT);
        CachedFile a = cache.open("a", 2);
        CachedFile again = cache.open("a", 2);
        assertThat(again).isSameAs(a);
        a.insert(0, payload(0));
        a.release();
        assertThat(again.lookup(0)).isNotNull();
        again.release();
        assertThat(cache.weightedSize()).isZero();
        assertThat(cache.openFiles()).isZero();
        assertThat(a.lookup(0)).isNull();
        byte[] late = payload(1);
        assertThat(a.insert(1, late)).isSameAs(late);
        assertThat(a.lookup(1)).isNull();
        assertThat(cache.weightedSize()).isZero();
        cache.checkInvariants();
        assertThatThrownBy(a::release)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("released too often");
    }

    @Test
    void reopeningWithAnotherBlockCountIsRejected() {
        BlockCache cache = new BlockCache(WEIGHT);
        cache.open("a", 2);
        assertThatThrownBy(() -> cache.open("a", 3))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("a opened with 3 blocks but cached with 2");
    }

    @Test
    void zeroCapacityAndOversizedBlocksAreNeverCached() {
        BlockCache none = new BlockCache(0);
        CachedFile f = none.open("a", 1);
        f.insert(0, payload(0));
        assertThat(f.lookup(0)).isNull();
        BlockCache small = new BlockCache(WEIGHT - 1);
        CachedFile g = small.open("b", 1);
        g.insert(0, payload(0));
        assertThat(g.lookup(0)).isNull();
        none.checkInvariants();
        small.checkInvariants();
    }

    @Test
    void randomizedOperationsKeepTheInvariants() {
        SplittableRandom rnd = new SplittableRandom(7);
        BlockCache cache = new BlockCache(20 * WEIGHT);
        List<CachedFile> open = new ArrayList<>();
        for (int step = 0; step < 20_000; step++) {
            int op = rnd.nextInt(100);
            if (open.isEmpty() || op < 3) {
                open.add(cache.open("f" + rnd.nextInt(8), 16));
            } else if (op < 6) {
                open.remove(rnd.nextInt(open.size())).release();
            } else {
                CachedFile f = open.get(rnd.nextInt(open.size()));
                int block = rnd.nextInt(16);
                byte[] hit = f.lookup(block);
                if (hit == null) {
                    byte[] p = new byte[rnd.nextInt(2 * BLOCK)];
                    p = f.insert(block, p);
                    assertThat(p).isNotNull();
                }
            }
            if (step % 100 == 0) {
                cache.checkInvariants();
            }
        }
        for (CachedFile f : open) {
            f.release();
        }
        cache.checkInvariants();
        assertThat(cache.weightedSize()).isZero();
        assertThat(cache.openFiles()).isZero();
    }

    private static byte[] payload(int stamp) {
        byte[] p = new byte[BLOCK];
        p[0] = (byte) stamp;
        return p;
    }
}
