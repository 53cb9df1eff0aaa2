package io.github.flinkstate.disagg.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.disagg.engine.iterator.LsmIterator;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import java.io.File;
import java.io.IOException;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A key updated between flushes has an entry in several level-0 files. A get reads the newest of
 * them and no other: a file whose largest sequence number is below the entry found cannot hold a
 * newer one. On a cold cache over a remote primary every file read is a round trip, so a counter
 * updated every few seconds would otherwise cost one per flush since its last compaction.
 */
class L0PointReadsTest {

    private static final int FILES = 8;

    @TempDir File tmp;

    @Test
    void aKeyInEveryL0File_isReadFromTheNewestFileOnly() throws IOException {
        try (LsmStore store = storeWithEightL0Files()) {
            long before = store.primaryReads().reads();
            assertThat(store.get(key(7))).containsExactly(FILES - 1);
            assertThat(store.primaryReads().reads() - before).as("data blocks read").isEqualTo(1);
        }
    }

    @Test
    void aKeyDeletedInTheNewestL0File_isAbsent_afterOneRead() throws IOException {
        try (LsmStore store = storeWithEightL0Files()) {
            store.delete(key(7));
            store.flush();
            openEveryFile(store);
            long before = store.primaryReads().reads();
            assertThat(store.get(key(7))).isNull();
            assertThat(store.primaryReads().reads() - before).as("data blocks read").isEqualTo(1);
            assertThat(store.get(key(8))).containsExactly(FILES - 1);
        }
    }

    /** Eight L0 files, each holding keys 0..99 with the file's number as value; no block cached. */
    private LsmStore storeWithEightL0Files() throws IOException {
        LsmOptions o =
                new LsmOptions(
                                FileSystem.getLocalFileSystem(),
                                new Path(new File(tmp, "store").toURI()),
                                KeyGroupSpan.of(0, 3))
                        .blockCache(new BlockCache(0))
                        .l0CompactionTrigger(100)
                        .backgroundCompaction(false);
        LsmStore store = LsmStore.open(o);
        for (int f = 0; f < FILES; f++) {
            for (int n = 0; n < 100; n++) {
                store.put(key(n), new byte[] {(byte) f});
            }
            store.flush();
        }
        openEveryFile(store);
        return store;
    }

    /** Loads every file's metadata, so that the counted reads are data blocks only. */
    private static void openEveryFile(LsmStore store) throws IOException {
        try (LsmIterator all = store.scanAll()) {
            for (; all.isValid(); all.next()) {}
        }
    }

    private static byte[] key(int n) {
        return new byte[] {0, 1, (byte) n};
    }
}
