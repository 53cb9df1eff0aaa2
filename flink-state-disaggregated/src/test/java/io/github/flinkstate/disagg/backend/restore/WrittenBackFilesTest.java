package io.github.flinkstate.disagg.backend.restore;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.backend.DisaggregatedKeyedStateBackend;
import io.github.flinkstate.disagg.backend.testutil.DisaggBackends;
import io.github.flinkstate.disagg.backend.testutil.KeyedFixture;
import java.io.File;
import java.io.IOException;
import java.util.List;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.local.LocalFileSystem;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.filesystem.FsCheckpointStreamFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Engine files that a native savepoint inlined into its metadata (small files) are written back
 * into the primary directory on restore. Those copies belong to the restored store: it deletes one
 * when a compaction drops it and on dispose, unless a checkpoint named it. Found in a review: they
 * were treated like the savepoint's own files, which the store never deletes, and were left in the
 * primary directory after every such restore.
 */
class WrittenBackFilesTest {

    @TempDir File tmp;

    private final KeyedFixture fixture = new KeyedFixture(50);

    private KeyedStateHandle nativeSavepointWithInlinedFiles(DisaggBackends backends)
            throws Exception {
        DisaggregatedKeyedStateBackend<Integer> b = backends.create(DisaggBackends.ALL, List.of());
        fixture.write(b, 1);
        KeyedStateHandle handle = nativeSavepoint(b, "savepoint");
        backends.dispose(b);
        return handle;
    }

    private KeyedStateHandle nativeSavepoint(DisaggregatedKeyedStateBackend<Integer> b, String dir)
            throws Exception {
        return InlinedSavepoints.take(b, new File(tmp, dir));
    }

    private List<String> writtenBack() throws IOException {
        return InlinedSavepoints.writtenBackUnder(new File(tmp, "restored"));
    }

    @Test
    void writtenBackFilesAreDeletedOnDispose() throws Exception {
        try (DisaggBackends source = backends("source");
                DisaggBackends target = backends("restored")) {
            KeyedStateHandle savepoint = nativeSavepointWithInlinedFiles(source);
            DisaggregatedKeyedStateBackend<Integer> b =
                    target.create(DisaggBackends.ALL, List.of(savepoint));
            assertThat(fixture.verify(b, 1)).isEqualTo(50);
            assertThat(writtenBack()).as("files written back by the restore").isNotEmpty();
            target.dispose(b);
            assertThat(writtenBack()).as("written-back files left after dispose").isEmpty();
        }
    }

    @Test
    void writtenBackFilesAreDeletedWhenCompactedAway() throws Exception {
        try (DisaggBackends source = backends("source");
                DisaggBackends target = backends("restored")) {
            KeyedStateHandle savepoint = nativeSavepointWithInlinedFiles(source);
            DisaggregatedKeyedStateBackend<Integer> b =
                    target.create(DisaggBackends.ALL, List.of(savepoint));
            fixture.write(b, 2);
            b.compactAll();
            b.store().awaitQueuedDeletes();
            assertThat(fixture.verify(b, 2)).isEqualTo(50);
            assertThat(writtenBack()).as("written-back files left after compaction").isEmpty();
        }
    }

    @Test
    void filesOutsideTheRestoredKeyGroups_areNotWrittenBack() throws Exception {
        try (DisaggBackends source = backends("source");
                DisaggBackends target = backends("restored")) {
            DisaggregatedKeyedStateBackend<Integer> b =
                    source.create(DisaggBackends.ALL, List.of());
            KeyGroupRange lower = KeyGroupRange.of(0, 63);
            // one engine file with keys of key groups 64-127 only, another with 0-63 only
            int upperKeys = writeValues(b, k -> !KeyedFixture.owns(lower, k));
            DisaggBackends.snapshot(
                    b,
                    1,
                    streams("checkpoint"),
                    CheckpointOptions.forCheckpointWithDefaultLocation());
            int lowerKeys = writeValues(b, k -> KeyedFixture.owns(lower, k));
            assertThat(upperKeys).isPositive();
            assertThat(lowerKeys).isPositive();
            KeyedStateHandle savepoint = nativeSavepoint(b, "savepoint");
            source.dispose(b);

            DisaggregatedKeyedStateBackend<Integer> r = target.create(lower, List.of(savepoint));
            assertThat(countValues(r)).isEqualTo(lowerKeys);
            target.dispose(r);
            assertThat(writtenBack()).as("written-back files left after dispose").isEmpty();
        }
    }

    @Test
    void oneInlinedFileArrivingThroughTwoHandles_staysReadableWhileEitherUsesIt() throws Exception {
        try (DisaggBackends source = backends("source");
                DisaggBackends middle = backends("middle");
                DisaggBackends target = backends("restored")) {
            // parallelism 1: the data in one file below level 0
            DisaggregatedKeyedStateBackend<Integer> one =
                    source.create(DisaggBackends.ALL, List.of());
            fixture.write(one, 1);
            one.compactAll();
            KeyedStateHandle checkpoint =
                    DisaggBackends.snapshot(
                                    one,
                                    1,
                                    streams("checkpoint"),
                                    CheckpointOptions.forCheckpointWithDefaultLocation())
                            .getJobManagerOwnedSnapshot();
            // 1 -> 2 without writes; each half takes a native savepoint inlining that same file
            List<KeyedStateHandle> halves = new java.util.ArrayList<>();
            int i = 0;
            for (KeyGroupRange range : DisaggBackends.ranges(2)) {
                DisaggregatedKeyedStateBackend<Integer> half =
                        middle.create(range, List.of(checkpoint));
                halves.add(nativeSavepoint(half, "savepoint-" + i++));
                middle.dispose(half);
            }
            source.dispose(one);

            // 2 -> 1: both halves of the file come back; compactions drop them one at a time
            DisaggregatedKeyedStateBackend<Integer> b = target.create(DisaggBackends.ALL, halves);
            assertThat(fixture.verify(b, 1)).isEqualTo(50);
            b.setCurrentKey(0);
            KeyedFixture.value(b).update(-1L);
            b.store().flush(); // a file of its own: compactions start, no checkpoint names files
            for (int round = 0; round < 20 && b.store().compactOnce(); round++) {
                b.setCurrentKey(0);
                assertThat(KeyedFixture.value(b).value()).isEqualTo(-1L);
                for (int k = 1; k < 50; k++) {
                    b.setCurrentKey(k);
                    assertThat(KeyedFixture.value(b).value())
                            .as("key %s after compaction %s", k, round)
                            .isEqualTo(k * 1000L + 1);
                }
            }
            target.dispose(b);
            assertThat(writtenBack()).as("written-back files left after dispose").isEmpty();
        }
    }

    /** Sets the value state of the keys 0-49 that {@code which} accepts; returns how many. */
    private static int writeValues(
            DisaggregatedKeyedStateBackend<Integer> b, java.util.function.IntPredicate which)
            throws Exception {
        int n = 0;
        for (int k = 0; k < 50; k++) {
            if (which.test(k)) {
                b.setCurrentKey(k);
                KeyedFixture.value(b).update((long) k);
                n++;
            }
        }
        return n;
    }

    /** How many of the keys 0-49 {@code b} owns have their value {@link #writeValues} wrote. */
    private static int countValues(DisaggregatedKeyedStateBackend<Integer> b) throws Exception {
        int n = 0;
        for (int k = 0; k < 50; k++) {
            if (KeyedFixture.owns(b.getKeyGroupRange(), k)) {
                b.setCurrentKey(k);
                assertThat(KeyedFixture.value(b).value()).as("key %s", k).isEqualTo((long) k);
                n++;
            }
        }
        return n;
    }

    /** Checkpoint streams into {@code dir} that inline nothing. */
    private FsCheckpointStreamFactory streams(String dir) {
        File chk = new File(tmp, dir);
        chk.mkdirs();
        return new FsCheckpointStreamFactory(
                LocalFileSystem.getSharedInstance(),
                new Path(chk.toURI()),
                new Path(chk.toURI()),
                0,
                4096);
    }

    private DisaggBackends backends(String primary) {
        return new DisaggBackends(
                DisaggBackends.backend(
                        new File(tmp, primary).toURI().toString(), MemorySize.parse("64kb")));
    }
}
