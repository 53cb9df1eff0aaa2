package io.github.flinkstate.disagg.engine.cache;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.engine.key.EntryType;
import io.github.flinkstate.disagg.engine.key.Versioned;
import io.github.flinkstate.disagg.engine.sst.BloomFilter;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** {@link RowCache}: lookups, the generation guard, invalidation and its memory charge. */
class RowCacheTest {

    private static byte[] key(int i) {
        return ("key-" + i).getBytes(StandardCharsets.UTF_8);
    }

    private static Versioned row(int i) {
        return new Versioned(i, EntryType.PUT, ("value-" + i).getBytes(StandardCharsets.UTF_8));
    }

    private static long hash(byte[] key) {
        return BloomFilter.hash(key);
    }

    private static void fill(RowCache rows, int keys) {
        for (int i = 0; i < keys; i++) {
            rows.put(key(i), hash(key(i)), row(i), rows.generation());
        }
    }

    /**
     * A key from {@code from} on whose first miss the full cache {@code rows} did not store it (a
     * key whose doorkeeper bit another key set is stored at once; those are skipped).
     */
    private static int refusedFirstMiss(RowCache rows, int from) {
        for (int k = from; k < from + 1000; k++) {
            rows.put(key(k), hash(key(k)), row(k), rows.generation());
            if (rows.get(key(k), hash(key(k))) == null) {
                return k;
            }
        }
        throw new AssertionError("every first miss from " + from + " was stored: not full?");
    }

    /** Opens {@code file} with {@code count} blocks of 4,000 bytes, all inserted. */
    private static CachedFile insertBlocks(BlockCache blocks, String file, int count) {
        CachedFile f = blocks.open(file, count);
        for (int i = 0; i < count; i++) {
            f.insert(i, new byte[4000]);
            blocks.checkInvariants(); // blocks + rows not owed stay within the capacity
        }
        return f;
    }

    @Test
    void noShareForRows_orOneTooSmallToHoldAnything_meansNoRowCache() {
        assertThat(RowCache.on(new BlockMemory(1 << 20))).isNull();
        assertThat(RowCache.on(new BlockMemory(1 << 20, 0))).isNull();
        assertThat(RowCache.on(new BlockMemory(1 << 20, 0.1))).isNull(); // 102 KiB
        assertThat(RowCache.on(new BlockMemory(1 << 20, 0.125))).isNotNull(); // 128 KiB
    }

    @Test
    void aCacheOpenedWhileOthersHoldTheWholeShare_storesOnceTheyGiveItBack() {
        BlockMemory memory = new BlockMemory(1 << 20, 0.25); // 256 KiB of rows
        RowCache first = RowCache.on(memory);
        for (int i = 0; i < 20_000; i++) {
            first.put(key(i), hash(key(i)), row(i), first.generation());
        }
        assertThat(memory.rowBytes()).isEqualTo(memory.rowCapacityBytes());
        RowCache second = RowCache.on(memory);
        second.put(key(1), hash(key(1)), row(1), second.generation());
        assertThat(second.size()).isZero();
        assertThat(second.chargedBytes()).isZero();
        second.checkInvariants();

        first.close();
        second.put(key(1), hash(key(1)), row(1), second.generation());
        assertThat(second.get(key(1), hash(key(1)))).usingRecursiveComparison().isEqualTo(row(1));
        second.checkInvariants();
    }

    @Test
    void storesCopiesOfKeys_andAnswersHitsAndAbsence() {
        RowCache rows = RowCache.on(new BlockMemory(4 << 20, 0.5));
        byte[] k = key(1);
        rows.put(k, hash(k), row(1), rows.generation());
        k[0] = 'X'; // the caller reuses its array
        assertThat(rows.get(key(1), hash(key(1)))).usingRecursiveComparison().isEqualTo(row(1));
        assertThat(rows.get(key(2), hash(key(2)))).isNull();
        rows.put(key(2), hash(key(2)), RowCache.ABSENT, rows.generation());
        assertThat(rows.get(key(2), hash(key(2)))).isSameAs(RowCache.ABSENT);
        assertThat(rows.hitCount()).isEqualTo(2);
        assertThat(rows.requestCount()).isEqualTo(3);
        rows.checkInvariants();
    }

    @Test
    void aLookupThatStartedBeforeAnInvalidation_storesNothing() {
        RowCache rows = RowCache.on(new BlockMemory(4 << 20, 0.5));
        long before = rows.generation();
        rows.invalidate(key(7), hash(key(7))); // a flush brought a newer entry meanwhile
        rows.put(key(1), hash(key(1)), row(1), before);
        assertThat(rows.get(key(1), hash(key(1)))).isNull();

        before = rows.generation();
        rows.invalidateAll();
        rows.put(key(1), hash(key(1)), row(1), before);
        assertThat(rows.size()).isZero();

        rows.put(key(1), hash(key(1)), row(1), rows.generation());
        assertThat(rows.size()).isEqualTo(1);
    }

    @Test
    void invalidate_forgetsOneKey_invalidateAll_everyKey() {
        RowCache rows = RowCache.on(new BlockMemory(4 << 20, 0.5));
        for (int i = 0; i < 100; i++) {
            rows.put(key(i), hash(key(i)), row(i), rows.generation());
        }
        rows.invalidate(key(5), hash(key(5)));
        assertThat(rows.get(key(5), hash(key(5)))).isNull();
        assertThat(rows.get(key(6), hash(key(6)))).usingRecursiveComparison().isEqualTo(row(6));
        assertThat(rows.size()).isEqualTo(99);
        rows.invalidateAll();
        assertThat(rows.size()).isZero();
        assertThat(rows.get(key(6), hash(key(6)))).isNull();
        rows.checkInvariants();
    }

    @Test
    void rowsStayWithinTheirShare_evenWhenSeveralCachesShareTheMemory() {
        BlockMemory memory = new BlockMemory(4 << 20, 0.25); // rows: 1 MiB for both caches
        RowCache a = RowCache.on(memory);
        RowCache b = RowCache.on(memory);
        Random rnd = new Random(3);
        Map<Integer, Versioned> last = new HashMap<>();
        for (int i = 0; i < 200_000; i++) {
            int id = rnd.nextInt(50_000);
            RowCache c = id % 2 == 0 ? a : b;
            Versioned r = row(id + i);
            c.put(key(id), hash(key(id)), r, c.generation());
            last.put(id, r);
            assertThat(memory.rowBytes()).isLessThanOrEqualTo(memory.rowCapacityBytes());
        }
        assertThat(memory.rowBytes()).isEqualTo(a.chargedBytes() + b.chargedBytes());
        assertThat(a.size() + b.size()).isGreaterThan(1000);
        // whatever a cache still holds for a key is the last row stored for it
        for (Map.Entry<Integer, Versioned> e : last.entrySet()) {
            RowCache c = e.getKey() % 2 == 0 ? a : b;
            Versioned got = c.get(key(e.getKey()), hash(key(e.getKey())));
            if (got != null) {
                assertThat(got).usingRecursiveComparison().isEqualTo(e.getValue());
            }
        }
        a.checkInvariants();
        b.checkInvariants();

        a.close();
        b.close();
        assertThat(memory.rowBytes()).isZero();
        assertThat(memory.pinnedBytes()).isZero();
        a.put(key(1), hash(key(1)), row(1), a.generation());
        assertThat(a.size()).isZero();
    }

    @Test
    void rowsTakeOnlyMemoryTheBlocksLeaveFree() {
        BlockMemory memory = new BlockMemory(1 << 20, 0.5);
        BlockCache blocks = new BlockCache(memory, null);
        CachedFile f = blocks.open("file", 300);
        for (int i = 0; i < 300; i++) {
            f.insert(i, new byte[4000]); // 1.2 MB of blocks: the memory is full
        }
        long blocksBefore = memory.usedBytes();
        RowCache rows = RowCache.on(memory);
        for (int i = 0; i < 1000; i++) {
            rows.put(key(i), hash(key(i)), row(i), rows.generation());
        }
        assertThat(rows.size()).isZero();
        assertThat(memory.rowBytes()).isZero();
        assertThat(memory.usedBytes()).isEqualTo(blocksBefore);
        blocks.checkInvariants();
        rows.checkInvariants();
    }

    @Test
    void blocksTakeTheirMemoryBackFromRows_whichPayAtTheirNextLookup() {
        BlockMemory memory = new BlockMemory(1 << 20, 0.5);
        BlockCache blocks = new BlockCache(memory, null);
        RowCache rows = RowCache.on(memory);
        fill(rows, 50_000);
        assertThat(memory.rowBytes()).isEqualTo(512 * 1024); // the whole share: memory was free
        int held = rows.size();
        int second = refusedFirstMiss(rows, 77_777); // full: a first miss is not stored
        rows.put(key(second), hash(key(second)), row(7), rows.generation()); // replaces others
        assertThat(rows.get(key(second), hash(key(second)))).isNotNull();

        insertBlocks(blocks, "file", 150); // 605 KB of blocks: the rows owe about 80 KB
        assertThat(memory.rowDebt()).isPositive();
        assertThat(memory.usedBytes()).isEqualTo(150L * (4000 + BlockMemory.ENTRY_OVERHEAD));

        rows.get(key(1), hash(key(1))); // pays
        assertThat(memory.rowDebt()).isZero();
        assertThat(memory.rowBytes()).isLessThanOrEqualTo((1 << 20) - memory.usedBytes());
        assertThat(rows.size()).isPositive().isLessThan(held);
        assertThat(rows.bytesYielded()).isPositive();
        rows.checkInvariants();
        blocks.checkInvariants();

        insertBlocks(blocks, "other", 100); // the memory is now all blocks: the rows owe it all
        rows.put(key(7), hash(key(7)), row(7), rows.generation()); // pays all, stores nothing
        assertThat(memory.rowDebt()).isZero();
        assertThat(rows.size()).isZero();
        assertThat(rows.chargedBytes()).isZero(); // the table too: a small one, charged later
        assertThat(memory.rowBytes()).isZero();
        rows.checkInvariants();
        blocks.checkInvariants();
    }

    @Test
    void aDebtNoLongerNeeded_isForgiven_whenTheBlocksThatMadeItLeave() {
        BlockMemory memory = new BlockMemory(1 << 20, 0.5);
        BlockCache blocks = new BlockCache(memory, null);
        RowCache rows = RowCache.on(memory);
        fill(rows, 50_000);
        CachedFile f = insertBlocks(blocks, "file", 150);
        assertThat(memory.rowDebt()).isPositive();
        int held = rows.size();
        f.release(); // the file closes: its blocks leave before the rows paid anything
        assertThat(memory.rowDebt()).isZero();
        rows.get(key(1), hash(key(1)));
        assertThat(rows.size()).isEqualTo(held);
        assertThat(rows.bytesYielded()).isZero();
        rows.checkInvariants();
        blocks.checkInvariants();
    }

    @Test
    void largeRows_areNotCached() {
        RowCache rows = RowCache.on(new BlockMemory(4 << 20, 0.25)); // largest row: 4 KiB
        Versioned big = new Versioned(1, EntryType.PUT, new byte[64 * 1024]);
        rows.put(key(1), hash(key(1)), big, rows.generation());
        assertThat(rows.size()).isZero();
    }

    @Test
    void aFullCache_admitsANewKeyOnItsSecondMissOnly_soReadsSpreadOverMoreKeysDoNotChurnIt() {
        RowCache rows = RowCache.on(new BlockMemory(1 << 20, 0.125)); // 128 KiB of rows
        int n = 20_000; // far more rows than fit
        fill(rows, n);
        Map<Integer, Versioned> held = new HashMap<>();
        for (int i = 0; i < n; i++) {
            Versioned got = rows.get(key(i), hash(key(i)));
            if (got != null) {
                held.put(i, got);
            }
        }
        assertThat(held.size()).isBetween(100, n / 2);

        // as many other keys as it holds, each missed once: they replace few held rows (only those
        // whose doorkeeper bit another key set)
        for (int i = n; i < n + held.size(); i++) {
            rows.put(key(i), hash(key(i)), row(i), rows.generation());
        }
        int kept = 0;
        for (Map.Entry<Integer, Versioned> e : held.entrySet()) {
            Versioned got = rows.get(key(e.getKey()), hash(key(e.getKey())));
            if (got != null && got.seq() == e.getValue().seq()) {
                kept++;
            }
        }
        assertThat(kept).isGreaterThan(held.size() * 3 / 4);

        // a key missed twice gets in
        int hot = refusedFirstMiss(rows, 3 * n);
        Versioned hotRow = row(hot);
        rows.put(key(hot), hash(key(hot)), hotRow, rows.generation());
        assertThat(rows.get(key(hot), hash(key(hot)))).usingRecursiveComparison().isEqualTo(hotRow);
        rows.checkInvariants();
    }

    @Test
    void afterInvalidateAll_aFullCacheStoresFirstMissesAgain_beyondItsSlack() {
        RowCache rows = RowCache.on(new BlockMemory(4 << 20, 0.25)); // 1 MiB of rows
        fill(rows, 50_000); // full
        refusedFirstMiss(rows, 100_000);
        rows.invalidateAll(); // keeps at most two 64 KiB steps charged beyond the table
        int fresh = 5_000; // about 290 KB of rows: more than those steps hold
        for (int i = 200_000; i < 200_000 + fresh; i++) {
            rows.put(key(i), hash(key(i)), row(i), rows.generation()); // each missed once
        }
        // all of them but the few a full 8-way set pushed out
        assertThat(rows.size()).isGreaterThan(fresh * 99 / 100);
        rows.checkInvariants();
    }

    @Test
    void aRowComesBackAsStored_andAHitReturnsItsOwnCopyOfTheValue() {
        RowCache rows = RowCache.on(new BlockMemory(4 << 20, 0.5));
        byte[] empty = new byte[0];
        byte[] k = key(9);
        rows.put(k, hash(k), new Versioned(Long.MAX_VALUE - 1, EntryType.PUT, empty), 0);
        rows.put(empty, hash(empty), new Versioned(3, EntryType.PUT, new byte[] {-1, 0, 7}), 0);
        k[0] = 'X'; // the cache keeps its own copy of the key
        Versioned a = rows.get(key(9), hash(key(9)));
        assertThat(a.seq()).isEqualTo(Long.MAX_VALUE - 1);
        assertThat(a.type()).isEqualTo(EntryType.PUT);
        assertThat(a.value()).isEmpty();
        Versioned b = rows.get(empty, hash(empty));
        assertThat(b.seq()).isEqualTo(3);
        assertThat(b.value()).containsExactly(-1, 0, 7);
        b.value()[0] = 42; // a caller changing its copy changes nothing cached
        assertThat(rows.get(empty, hash(empty)).value()).containsExactly(-1, 0, 7);
        assertThat(rows.get(k, hash(k))).isNull();
        rows.checkInvariants();
    }

    @Test
    void aFullCache_whoseRowsInvalidationsDropped_storesFirstMissesAgain() {
        RowCache rows = RowCache.on(new BlockMemory(1 << 20, 0.125)); // 128 KiB of rows
        int n = 20_000;
        fill(rows, n); // full
        for (int i = 0; i < n; i++) {
            rows.invalidate(key(i), hash(key(i))); // a flush of these keys: the rows are gone
        }
        assertThat(rows.size()).isZero();
        int fresh = 2 * n;
        Versioned r = row(fresh);
        rows.put(key(fresh), hash(key(fresh)), r, rows.generation());
        assertThat(rows.get(key(fresh), hash(key(fresh)))).usingRecursiveComparison().isEqualTo(r);
        rows.checkInvariants();
    }
}
