package io.github.flinkstate.disagg.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.disagg.engine.iterator.LsmIterator;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.testutil.LsmModelRunner;
import java.io.File;
import java.io.IOException;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the bloom prefixes buy on a cold cache: a prefix scan (a list read, a map iteration) reads
 * data blocks only from the files that hold the prefix. Eight level-0 files, each spanning every
 * key group with one namespace byte of its own, so every file's key range overlaps every prefix; a
 * scan of one (key group, namespace) prefix costs one data-block read from the primary storage with
 * prefixes in the filters and one per file without.
 */
class PrefixBloomReadsTest {

    private static final int FILES = 8;

    @TempDir File tmp;

    @Test
    void prefixScan_readsOnlyTheFileHoldingThePrefix() throws IOException {
        assertThat(scanReads(true)).as("primary reads of one prefix scan").isBetween(1L, 2L);
        assertThat(scanReads(false)).as("primary reads without prefixes").isEqualTo(FILES);
    }

    /** Primary-storage reads of one prefix scan, file metadata already loaded, no block cached. */
    private long scanReads(boolean prefixes) throws IOException {
        LsmOptions o =
                new LsmOptions(
                                FileSystem.getLocalFileSystem(),
                                new Path(new File(tmp, "store-" + prefixes).toURI()),
                                KeyGroupSpan.of(0, 3))
                        .blockCache(new BlockCache(0))
                        .l0CompactionTrigger(100)
                        .backgroundCompaction(false)
                        .bloomPrefix(prefixes ? k -> k.length >= 3 ? 3 : -1 : null);
        try (LsmStore store = LsmStore.open(o)) {
            for (int ns = 0; ns < FILES; ns++) {
                for (int kg = 0; kg < 4; kg++) {
                    for (int n = 100; n < 150; n++) {
                        store.put(key(kg, ns, n), new byte[] {(byte) n});
                    }
                }
                store.flush();
            }
            try (LsmIterator all = store.scanAll()) { // opens every file's metadata
                for (; all.isValid(); all.next()) {}
            }
            long before = store.primaryReads().reads();
            assertThat(LsmModelRunner.countPrefix(store, new byte[] {0, 2, 5})).isEqualTo(50);
            return store.primaryReads().reads() - before;
        }
    }

    private static byte[] key(int kg, int ns, int n) {
        return new byte[] {0, (byte) kg, (byte) ns, (byte) (n >>> 8), (byte) n};
    }
}
