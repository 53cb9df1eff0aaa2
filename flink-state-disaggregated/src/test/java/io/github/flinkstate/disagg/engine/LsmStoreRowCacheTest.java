package io.github.flinkstate.disagg.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.disagg.engine.cache.BlockMemory;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.testutil.LsmModelRunner;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The store's row cache ({@code engine/cache/RowCache}): a repeated point read is answered from it
 * without touching a block, and no row outlives what changes a key in the files (a flush of a newer
 * entry, a flushed prefix tombstone a compaction later drops, a compaction filter's drop).
 */
@Timeout(60)
class LsmStoreRowCacheTest {

    @TempDir File tmp;

    /** Set to make the compaction filter drop every entry whose value starts with 'x'. */
    private final AtomicBoolean dropping = new AtomicBoolean();

    private LsmOptions options() {
        return new LsmOptions(
                        FileSystem.getLocalFileSystem(),
                        new Path(new Path(tmp.toURI()), "s"),
                        KeyGroupSpan.of(0, 3))
                .backgroundCompaction(false)
                .memtableBytes(64 * 1024)
                .blockCache(new BlockCache(new BlockMemory(4 << 20, 0.5), null))
                .compactionFilter(() -> (k, v) -> dropping.get() && v.length > 0 && v[0] == 'x');
    }

    private static byte[] key(int i) {
        return LsmModelRunner.key(i % 4, 1, i);
    }

    private static byte[] value(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aRepeatedRead_isAnsweredByTheRowCache_withoutABlockLookup() throws Exception {
        try (LsmStore store = LsmStore.open(options())) {
            for (int i = 0; i < 1000; i++) {
                store.put(key(i), value("v" + i));
            }
            store.flush();
            assertThat(store.get(key(7))).isEqualTo(value("v7"));
            assertThat(store.get(key(100_000 + 4))).isNull(); // absent: cached too
            long blockRequests = store.blockCache().requestCount();
            for (int round = 0; round < 3; round++) {
                assertThat(store.get(key(7))).isEqualTo(value("v7"));
                assertThat(store.get(key(100_000 + 4))).isNull();
            }
            assertThat(store.blockCache().requestCount()).isEqualTo(blockRequests);
            assertThat(store.rowCache().hitCount()).isEqualTo(6);
            store.checkInvariants();
        }
    }

    @Test
    void aFlushedNewerEntry_replacesTheCachedRow() throws Exception {
        try (LsmStore store = LsmStore.open(options())) {
            store.put(key(1), value("old"));
            store.put(key(2), value("kept"));
            store.flush();
            assertThat(store.get(key(1))).isEqualTo(value("old")); // cached
            assertThat(store.get(key(3))).isNull(); // cached as absent
            store.put(key(1), value("new"));
            store.put(key(3), value("born"));
            assertThat(store.get(key(1))).isEqualTo(value("new")); // the memtable answers
            store.flush(); // the memtable leaves: only the files answer now
            assertThat(store.get(key(1))).isEqualTo(value("new"));
            assertThat(store.get(key(3))).isEqualTo(value("born"));
            store.delete(key(1));
            store.flush();
            assertThat(store.get(key(1))).isNull();
            assertThat(store.get(key(2))).isEqualTo(value("kept"));
            store.checkInvariants();
        }
    }

    @Test
    void aFlushedPrefixTombstone_thatACompactionDrops_leavesNoRowBehind() throws Exception {
        try (LsmStore store = LsmStore.open(options())) {
            byte[] k = key(5);
            store.put(k, value("doomed"));
            store.flush();
            assertThat(store.get(k)).isEqualTo(value("doomed")); // cached
            store.deletePrefix(new byte[] {k[0], k[1], k[2]}); // key group 1, namespace 1
            assertThat(store.get(k)).isNull(); // the memtable's tombstone covers the row
            store.flush();
            assertThat(store.get(k)).isNull();
            store.compactAll(); // drops the entry and, at the bottom, the tombstone itself
            assertThat(store.storedPrefixTombstones()).isZero();
            assertThat(store.get(k)).isNull();
            store.checkInvariants();
        }
    }

    @Test
    void entriesACompactionFilterDrops_readAsAbsent() throws Exception {
        try (LsmStore store = LsmStore.open(options())) {
            store.put(key(1), value("x-expiring"));
            store.put(key(2), value("y-kept"));
            store.flush();
            store.put(key(9), value("filler")); // a second file, so that compactAll rewrites
            store.flush();
            assertThat(store.get(key(1))).isEqualTo(value("x-expiring")); // cached
            dropping.set(true);
            store.compactAll();
            assertThat(store.stats().entriesFiltered()).isPositive();
            assertThat(store.get(key(1))).isNull();
            assertThat(store.get(key(2))).isEqualTo(value("y-kept"));
            store.checkInvariants();
        }
    }

    @Test
    void closingTheStore_givesTheRowsMemoryBack() throws Exception {
        LsmOptions o = options();
        BlockMemory memory = o.blockCache().memory();
        try (LsmStore store = LsmStore.open(o)) {
            for (int i = 0; i < 1000; i++) {
                store.put(key(i), value("v" + i));
            }
            store.flush();
            for (int i = 0; i < 1000; i++) {
                store.get(key(i));
            }
            assertThat(memory.rowBytes()).isPositive();
        }
        assertThat(memory.rowBytes()).isZero();
    }
}
