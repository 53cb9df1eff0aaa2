package io.github.flinkstate.disagg.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.testutil.LsmModelRunner;
import java.io.File;
import java.io.IOException;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A prefix tombstone stays in the files (in memory, in every manifest) only while something older
 * may be left for it to hide. The store's bottom level holds namespaces 0-9 of four key groups;
 * then 200 lists that never existed are replaced (a tombstone each, as a list {@code update} of a
 * new key writes) and one existing namespace is cleared, and level 0 is compacted into level 1,
 * which is not the bottom: the 200 tombstones have nothing below them to hide and are dropped (but
 * for the few that the bottom file's bloom filter admits falsely); the one over existing data is
 * kept until that data is gone.
 */
class PrefixTombstoneDropTest {

    @TempDir File tmp;

    @Test
    void aCompaction_dropsTheTombstonesNothingBelowMayHold_andKeepsTheOthers() throws IOException {
        LsmOptions o =
                new LsmOptions(
                                FileSystem.getLocalFileSystem(),
                                new Path(tmp.toURI()),
                                KeyGroupSpan.of(0, 3))
                        .l0CompactionTrigger(1)
                        .backgroundCompaction(false)
                        .bloomPrefix(k -> k.length >= 3 ? 3 : -1);
        try (LsmStore store = LsmStore.open(o)) {
            for (int kg = 0; kg < 4; kg++) {
                for (int ns = 0; ns < 10; ns++) {
                    for (int n = 0; n < 20; n++) {
                        store.put(key(kg, ns, n), new byte[] {(byte) n});
                    }
                }
            }
            store.flush();
            store.compactAll(); // all of it in the bottom level
            for (int i = 0; i < 200; i++) {
                byte[] list = {0, (byte) (i % 4), (byte) (100 + i / 4)};
                store.deletePrefix(list);
                store.append(list, new byte[] {(byte) i});
            }
            store.deletePrefix(new byte[] {0, 2, 5}); // namespace 5 of key group 2 exists below
            store.flush();
            assertThat(store.storedPrefixTombstones()).isEqualTo(201);

            store.compactUntilIdle(); // level 0 into level 1, above the bottom

            assertThat(store.filesPerLevel()[1]).isPositive();
            // the one over existing data, and the few the bottom file's bloom filter admits falsely
            assertThat(store.storedPrefixTombstones()).isBetween(1L, 10L);
            assertThat(LsmModelRunner.countPrefix(store, new byte[] {0, 2, 5})).isZero();
            assertThat(LsmModelRunner.countPrefix(store, new byte[] {0, 2, 4})).isEqualTo(20);
            for (int i = 0; i < 200; i++) {
                assertThat(
                                LsmModelRunner.countPrefix(
                                        store,
                                        new byte[] {0, (byte) (i % 4), (byte) (100 + i / 4)}))
                        .isEqualTo(1);
            }
            store.checkInvariants();

            store.compactAll(); // at the bottom the last tombstone goes too, and its data with it
            assertThat(store.storedPrefixTombstones()).isZero();
            assertThat(LsmModelRunner.countPrefix(store, new byte[] {0, 2, 5})).isZero();
        }
    }

    private static byte[] key(int kg, int ns, int n) {
        return new byte[] {0, (byte) kg, (byte) ns, (byte) n};
    }
}
