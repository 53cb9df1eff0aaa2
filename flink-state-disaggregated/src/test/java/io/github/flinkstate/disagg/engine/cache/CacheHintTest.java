package io.github.flinkstate.disagg.engine.cache;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Capturing a {@link CacheHint}: the memory tier's blocks first, then the disk tier's units from
 * the most recently used, a file's blocks in one entry at the place of its first, whole copies as
 * whole, only the files asked for, and no more than the byte limit.
 */
class CacheHintTest extends DiskCacheFixture {

    private static final int BLOCK = 4 * KB;

    /** Offers 64 blocks of {@code file} (one 256 KiB slab of a 4 MiB cache). */
    private void offerSlabOf(String file) {
        for (int b = 0; b < 64; b++) {
            cache.offer(file, (long) b * BLOCK, randomBytes(b, BLOCK));
        }
    }

    private BlockCache cachesWithHistory() throws Exception {
        cache = new DiskCache(new File(tmp, "c"), 4 * MB, 0);
        offerSlabOf("x");
        offerSlabOf("y");
        WriteThrough copy = cache.writeThrough("w");
        byte[] w = randomBytes(9, 100 * KB);
        copy.write(w, 0, w.length);
        assertThat(copy.commit(w.length)).isTrue();
        assertThat(cache.read("x", 5 * BLOCK, BLOCK)).as("x's slab the most recent").isNotNull();
        BlockCache memory = new BlockCache(1 << 20, cache);
        CachedFile m = memory.open("m", 3, new long[] {0, 700, 9000});
        m.insert(2, new byte[100]);
        m.insert(0, new byte[100]);
        return memory;
    }

    private static List<String> describe(CacheHint hint) {
        List<String> out = new ArrayList<>();
        for (CacheHint.Entry e : hint.entries()) {
            out.add(
                    e.file()
                            + (e.whole()
                                    ? " whole"
                                    : " " + e.offsets().length + " from " + e.offsets()[0]));
        }
        return out;
    }

    @Test
    void capture_listsMemoryThenDiskUnits_mostRecentFirst() throws Exception {
        BlockCache memory = cachesWithHistory();
        CacheHint hint = CacheHint.capture(memory, Set.of("m", "x", "y", "w"), Long.MAX_VALUE);
        assertThat(describe(hint))
                .containsExactly("m 2 from 0", "x 64 from 0", "w whole", "y 64 from 0");
        assertThat(hint.entryOf("m").offsets()).containsExactly(0, 9000);
        long[] x = hint.entryOf("x").offsets();
        assertThat(x).hasSize(64);
        for (int i = 1; i < x.length; i++) {
            assertThat(x[i]).isGreaterThan(x[i - 1]);
        }
        assertThat(hint.blockCount()).isEqualTo(2 + 64 + 64);
    }

    @Test
    void capture_leavesOutFilesNotAsked_andStopsAtTheLimit() throws Exception {
        BlockCache memory = cachesWithHistory();
        assertThat(describe(CacheHint.capture(memory, Set.of("y", "w"), Long.MAX_VALUE)))
                .containsExactly("w whole", "y 64 from 0");
        // x's 64 blocks reach the limit (m's blocks, in memory only, count nothing): nothing after
        assertThat(describe(CacheHint.capture(memory, Set.of("m", "x", "y", "w"), 64 * BLOCK)))
                .containsExactly("m 2 from 0", "x 64 from 0");
    }

    /**
     * A block both tiers hold counts once, at its size on disk, and a whole copy replaces its
     * file's blocks counted before: counted twice (and decompressed), the memory tier's blocks cut
     * the hint short of the disk tier's capacity. Found in a review.
     */
    @Test
    void capture_countsABlockBothTiersHoldOnce() throws Exception {
        BlockCache memory = cachesWithHistory();
        CachedFile x = memory.open("x", 64, offsetsOfSlab());
        x.insert(0, randomBytes(0, BLOCK));
        x.insert(1, randomBytes(1, BLOCK));
        CachedFile w = memory.open("w", 1, new long[] {0});
        w.insert(0, new byte[100]);
        // x's 64 blocks on disk (2 of them in memory too) and w's whole copy (100 bytes of it in
        // memory) make exactly this many bytes (m's blocks, in memory only, count nothing); the
        // memory tier's files come in no order
        long counted = 64 * BLOCK + 100 * KB;
        List<String> justAbove =
                describe(CacheHint.capture(memory, Set.of("m", "x", "y", "w"), counted + 1));
        assertThat(justAbove)
                .as("one byte more lets the next unit's first block in")
                .containsExactlyInAnyOrder("m 2 from 0", "x 64 from 0", "w whole", "y 1 from 0")
                .endsWith("y 1 from 0");
        assertThat(describe(CacheHint.capture(memory, Set.of("m", "x", "y", "w"), counted)))
                .containsExactlyInAnyOrder("m 2 from 0", "x 64 from 0", "w whole");
    }

    /**
     * Each entry marks the blocks the memory tier held ({@code memoryOffsets}), so that the warm-up
     * can load them there; a whole copy's entry marks none.
     */
    @Test
    void capture_marksTheBlocksOfTheMemoryTier() throws Exception {
        BlockCache memory = cachesWithHistory();
        CachedFile x = memory.open("x", 64, offsetsOfSlab());
        x.insert(3, randomBytes(3, BLOCK));
        x.insert(1, randomBytes(1, BLOCK));
        CachedFile w = memory.open("w", 1, new long[] {0});
        w.insert(0, new byte[100]);
        CacheHint hint = CacheHint.capture(memory, Set.of("m", "x", "y", "w"), Long.MAX_VALUE);
        assertThat(hint.entryOf("m").memoryOffsets()).containsExactly(0, 9000);
        assertThat(hint.entryOf("m").memoryOnlyOffsets())
                .as("m is in memory only")
                .containsExactly(0, 9000);
        assertThat(hint.entryOf("x").memoryOffsets()).containsExactly(BLOCK, 3 * BLOCK);
        assertThat(hint.entryOf("x").memoryOnlyOffsets()).as("x's slab holds them too").isEmpty();
        assertThat(hint.entryOf("x").offsets()).hasSize(64);
        assertThat(hint.entryOf("y").memoryOffsets()).isEmpty();
        assertThat(hint.entryOf("w").whole()).isTrue();
        assertThat(hint.entryOf("w").memoryOffsets()).isEmpty();
        assertThat(hint.memoryBlockCount()).isEqualTo(4);
        // a capture that stops at its limit before the disk tier's visit reaches x's two memory
        // blocks marks them as the memory tier's only
        CacheHint cut = CacheHint.capture(memory, Set.of("m", "x", "y", "w"), 1);
        assertThat(cut.entryOf("x").memoryOffsets()).containsExactly(BLOCK, 3 * BLOCK);
        assertThat(cut.entryOf("x").memoryOnlyOffsets()).containsExactly(BLOCK, 3 * BLOCK);
    }

    private static long[] offsetsOfSlab() {
        long[] offsets = new long[64];
        for (int b = 0; b < 64; b++) {
            offsets[b] = (long) b * BLOCK;
        }
        return offsets;
    }

    @Test
    void capture_withoutADiskTier_isEmpty() {
        assertThat(CacheHint.capture(new BlockCache(1 << 20), Set.of("m"), 1 << 20).isEmpty())
                .isTrue();
    }

    @Test
    void interleave_takesEachHintsFirstEntryFirst_andAFileOnce() {
        CacheHint a = hintOf("a1", "a2", "shared");
        CacheHint b = hintOf("shared", "b2");
        assertThat(CacheHint.interleave(List.of(a, b)).entries())
                .extracting(CacheHint.Entry::file)
                .containsExactly("a1", "shared", "a2", "b2");
        assertThat(
                        Arrays.asList(
                                CacheHint.interleave(List.of()).isEmpty(),
                                a.map(f -> f.startsWith("a") ? "/moved/" + f : null)
                                        .entries()
                                        .size()))
                .containsExactly(true, 2);
    }

    private static CacheHint hintOf(String... files) {
        List<CacheHint.Entry> entries = new ArrayList<>();
        for (String f : files) {
            entries.add(new CacheHint.Entry(f, false, new long[] {1}));
        }
        return new CacheHint(entries);
    }
}
