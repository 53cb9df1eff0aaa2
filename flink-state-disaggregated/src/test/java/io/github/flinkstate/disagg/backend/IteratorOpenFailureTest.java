package io.github.flinkstate.disagg.backend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.disagg.DisaggregatedOptions;
import io.github.flinkstate.disagg.backend.testutil.DisaggBackends;
import io.github.flinkstate.disagg.backend.testutil.JobCheckpoints;
import io.github.flinkstate.disagg.backend.testutil.KeyedFixture;
import io.github.flinkstate.disagg.backend.testutil.LocalDirs;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import java.io.File;
import java.util.List;
import java.util.stream.Stream;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.CompletedCheckpoint;
import org.apache.flink.runtime.state.FullSnapshotResources;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.util.function.ThrowingRunnable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * An iterator over the engine whose first read fails (a file missing or unreadable right after a
 * lazy restore) throws from its constructor, so the caller gets nothing to close. The engine
 * iterator it had opened used to stay open, pinning its version for good: the files of that version
 * were never deleted, whatever the store compacted later. Now the constructor closes it. Both
 * iterators are checked: the key stream of {@code getKeys} (red before the fix) and the canonical
 * savepoint's, whose case passed before the fix too (the savepoint's own release also ended that
 * pin; its constructor closes the iterator all the same).
 */
@Timeout(120)
class IteratorOpenFailureTest {

    private static final KeyedFixture FIXTURE = new KeyedFixture(2_000);

    @TempDir File tmp;

    private final InjectingFileSystem fs = InjectingFileSystem.shared();
    private DisaggBackends backends;
    private DisaggregatedKeyedStateBackend<Integer> restored;

    @BeforeEach
    void restoreFromACheckpoint() throws Exception {
        backends =
                new DisaggBackends(
                        DisaggBackends.backend(
                                        fs.uri(new File(tmp, "primary")), MemorySize.parse("64kb"))
                                .with(DisaggregatedOptions.LOCAL_CACHE_SIZE, MemorySize.ZERO));
        JobCheckpoints job =
                new JobCheckpoints(
                        fs.uri(new File(tmp, "chk")), 1, false, RecoveryClaimMode.DEFAULT);
        DisaggregatedKeyedStateBackend<Integer> first =
                backends.create(DisaggBackends.ALL, List.of());
        FIXTURE.write(first, 1);
        job.acknowledge(
                1,
                0,
                DisaggBackends.snapshot(
                                first,
                                1,
                                job.start(1),
                                CheckpointOptions.forCheckpointWithDefaultLocation())
                        .getJobManagerOwnedSnapshot());
        CompletedCheckpoint cp = job.complete(1, 1);
        first.notifyCheckpointComplete(1);
        backends.dispose(first);
        // restored lazily: nothing of the engine files is read or cached yet
        restored =
                backends.create(
                        DisaggBackends.ALL, JobCheckpoints.handlesFor(cp, DisaggBackends.ALL));
    }

    @AfterEach
    void tearDown() throws Exception {
        fs.heal();
        backends.close();
    }

    @Test
    void keyStreamWhoseFirstReadFails_pinsNoVersion() throws Exception {
        failingFirstRead(
                () -> {
                    try (Stream<Integer> keys =
                            restored.getKeys(
                                    KeyedFixture.VALUE.getName(), VoidNamespace.INSTANCE)) {
                        keys.findFirst();
                    }
                },
                () -> {});
    }

    @Test
    void savepointIteratorWhoseFirstReadFails_pinsNoVersion() throws Exception {
        FullSnapshotResources<Integer> resources = restored.savepoint().getSnapshotResources();
        // Flink's savepoint writer releases the resources after the failure, as here
        failingFirstRead(resources::createKVStateIterator, resources::release);
    }

    /**
     * Opens an iterator while every engine file is hidden, runs the caller's clean-up, then checks
     * that nothing stays pinned.
     */
    private void failingFirstRead(ThrowingRunnable<Exception> open, Runnable afterFailure)
            throws Exception {
        List<String> files = LocalDirs.files(new File(tmp, "primary"));
        assertThat(files).isNotEmpty();
        for (String f : files) {
            fs.hide(fs.uri(new File(new File(tmp, "primary"), f)));
        }
        assertThatThrownBy(open::run)
                .as("the first read of a hidden file")
                .hasStackTraceContaining("injected: file");
        afterFailure.run();
        fs.heal();

        FIXTURE.write(restored, 2);
        restored.store().flush();
        restored.store().compactAll(); // every file of the restored version is replaced
        restored.store().awaitQueuedDeletes();
        assertThat(restored.store().filesInUse())
                .as("files pinned beyond the live version")
                .containsExactlyInAnyOrderElementsOf(restored.store().liveFiles());
        FIXTURE.verify(restored, 2);
    }
}
