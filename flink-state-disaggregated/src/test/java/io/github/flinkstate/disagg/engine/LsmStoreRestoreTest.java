package io.github.flinkstate.disagg.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.disagg.engine.iterator.LsmIterator;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.testutil.LsmModelRunner;
import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import java.io.File;
import java.util.List;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Restore and rescale behaviour: lazy in-place restore, clipping, and its clean-up. */
class LsmStoreRestoreTest {

    @TempDir File tmp;

    private final InjectingFileSystem fs = new InjectingFileSystem(FileSystem.getLocalFileSystem());

    private LsmOptions options(String dir, int from, int to) {
        return new LsmOptions(fs, new Path(new Path(tmp.toURI()), dir), KeyGroupSpan.of(from, to))
                .backgroundCompaction(false)
                .memtableBytes(8 * 1024);
    }

    private static int count(LsmIterator it) throws Exception {
        int n = 0;
        try (it) {
            while (it.isValid()) {
                n++;
                it.next();
            }
        }
        return n;
    }

    @Test
    void restore_readsOnlyManifest_thenClipsFilesAtReadTime_andCompactionDropsForeignKeys()
            throws Exception {
        LsmSnapshot snap;
        try (LsmStore source = LsmStore.open(options("src", 0, 7))) {
            for (int i = 0; i < 4000; i++) {
                source.put(LsmModelRunner.key(i % 8, 0, i), new byte[] {(byte) i});
            }
            snap = source.snapshot();
        }
        long opensBefore = fs.counters().calls(FsOp.OPEN);
        try (LsmStore half = LsmStore.open(options("half", 2, 5), List.of(snap.manifest()))) {
            assertThat(fs.counters().calls(FsOp.OPEN))
                    .as("restore opens no data file")
                    .isEqualTo(opensBefore);
            assertThat(fs.listStatus(new Path(new Path(tmp.toURI()), "half"))).isEmpty();
            assertThat(count(half.scanAll())).isEqualTo(2000);
            assertThat(half.get(LsmModelRunner.key(2, 0, 2))).isEqualTo(new byte[] {2});
            assertThatThrownBy(() -> half.get(LsmModelRunner.key(1, 0, 1)))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> half.put(LsmModelRunner.key(6, 0, 1), new byte[1]))
                    .isInstanceOf(IllegalArgumentException.class);
            half.compactAll();
            half.checkInvariants();
            assertThat(half.liveFiles()).doesNotContainAnyElementsOf(snap.files());
            assertThat(count(half.scanAll())).isEqualTo(2000);
            assertThat(count(half.scanKeyGroups(KeyGroupSpan.of(0, 3)))).isEqualTo(1000);
        }
        snap.release();
    }

    @Test
    void restore_fromManifestsWithOverlappingKeyGroups_isRejected() throws Exception {
        LsmSnapshot a;
        LsmSnapshot b;
        try (LsmStore sa = LsmStore.open(options("a", 0, 7));
                LsmStore sb = LsmStore.open(options("b", 4, 9))) {
            sa.put(LsmModelRunner.key(1, 0, 1), new byte[1]);
            sb.put(LsmModelRunner.key(5, 0, 1), new byte[1]);
            a = sa.snapshot();
            b = sb.snapshot();
        }
        assertThatThrownBy(
                        () ->
                                LsmStore.open(
                                        options("c", 0, 9), List.of(a.manifest(), b.manifest())))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("overlap");
        // Disjoint after clipping to the new span: accepted.
        try (LsmStore c = LsmStore.open(options("d", 0, 3), List.of(a.manifest(), b.manifest()))) {
            assertThat(count(c.scanAll())).isEqualTo(1);
        }
    }
}
