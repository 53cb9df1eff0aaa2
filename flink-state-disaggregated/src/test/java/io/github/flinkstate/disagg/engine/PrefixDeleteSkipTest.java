package io.github.flinkstate.disagg.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.disagg.engine.iterator.LsmIterator;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import java.io.File;
import java.io.IOException;
import java.util.List;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A prefix delete of a whole bloom prefix that nothing in the store can hold (a list cleared or
 * replaced before it was ever written) writes nothing; one whose prefix a memtable or a file may
 * hold, or a file that cannot be opened, writes its tombstone and deletes.
 */
class PrefixDeleteSkipTest {

    @TempDir File tmp;

    /** Keys: key group (2 bytes), a "list" byte, then an element byte; bloom prefix: 3 bytes. */
    private LsmOptions options(String name) {
        return new LsmOptions(
                        FileSystem.getLocalFileSystem(),
                        new Path(new File(tmp, name).toURI()),
                        KeyGroupSpan.of(0, 3))
                .blockCache(new BlockCache(1 << 20))
                .backgroundCompaction(false)
                .bloomPrefix(k -> k.length >= 3 ? 3 : -1);
    }

    @Test
    void absentPrefix_writesNothing_presentOnesAreDeletedWhereverTheyLive() throws IOException {
        try (LsmStore store = LsmStore.open(options("a"))) {
            store.put(key(1, 10, 0), new byte[] {1}); // list 10 in a file
            store.put(key(1, 11, 0), new byte[] {1}); // list 11 in a file
            store.flush();
            store.put(key(1, 12, 0), new byte[] {1}); // list 12 in the memtable

            for (int list = 20; list < 30; list++) {
                store.deletePrefix(prefix(1, list)); // never written
            }
            assertThat(store.stats().prefixDeletesSkipped()).isEqualTo(10);

            store.deletePrefix(prefix(1, 10));
            store.deletePrefix(prefix(1, 12));
            assertThat(store.stats().prefixDeletesSkipped()).isEqualTo(10);
            assertThat(count(store, prefix(1, 10))).isZero();
            assertThat(count(store, prefix(1, 12))).isZero();
            assertThat(count(store, prefix(1, 11))).isEqualTo(1);

            // a shorter prefix is not a whole bloom prefix: never skipped
            store.deletePrefix(new byte[] {0, 2});
            assertThat(store.stats().prefixDeletesSkipped()).isEqualTo(10);

            // written after being skipped: the list exists from then on
            store.put(key(1, 20, 0), new byte[] {2});
            assertThat(count(store, prefix(1, 20))).isEqualTo(1);
            store.flush();
            store.deletePrefix(prefix(1, 20));
            assertThat(count(store, prefix(1, 20))).isZero();
        }
    }

    @Test
    void restoredFiles_areOpenedForTheCheck_andAnUnreadableOneMayHoldAnyPrefix() throws Exception {
        LsmSnapshot snapshot;
        try (LsmStore store = LsmStore.open(options("b"))) {
            store.put(key(1, 10, 0), new byte[] {1});
            store.put(key(1, 14, 0), new byte[] {1}); // the file's key range covers lists 10-14
            store.flush();
            snapshot = store.snapshot();
        }
        try (LsmStore restored =
                LsmStore.open(options("b-restored"), List.of(snapshot.manifest()))) {
            restored.deletePrefix(prefix(1, 12)); // in the file's range; its filter rules it out
            assertThat(restored.stats().prefixDeletesSkipped()).isEqualTo(1);
            restored.deletePrefix(prefix(1, 10)); // the file holds it
            assertThat(restored.stats().prefixDeletesSkipped()).isEqualTo(1);
            assertThat(count(restored, prefix(1, 10))).isZero();
            assertThat(count(restored, prefix(1, 14))).isEqualTo(1);
        }
        for (String file : snapshot.files()) {
            assertThat(new File(new Path(file).toUri().getPath()).delete()).isTrue();
        }
        try (LsmStore broken = LsmStore.open(options("b-broken"), List.of(snapshot.manifest()))) {
            broken.deletePrefix(prefix(1, 12)); // cannot open the file: writes the tombstone
            assertThat(broken.stats().prefixDeletesSkipped()).isZero();
            broken.deletePrefix(prefix(1, 20)); // outside the file's range: nothing to open
            assertThat(broken.stats().prefixDeletesSkipped()).isEqualTo(1);
        }
    }

    private static int count(LsmStore store, byte[] prefix) throws IOException {
        int n = 0;
        try (LsmIterator it = store.scanPrefix(prefix)) {
            for (; it.isValid(); it.next()) {
                n++;
            }
        }
        return n;
    }

    private static byte[] prefix(int kg, int list) {
        return new byte[] {0, (byte) kg, (byte) list};
    }

    private static byte[] key(int kg, int list, int element) {
        return new byte[] {0, (byte) kg, (byte) list, (byte) element};
    }
}
