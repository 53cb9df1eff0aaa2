package io.github.flinkstate.disagg.backend.restore;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.DisaggregatedOptions;
import io.github.flinkstate.disagg.backend.DisaggregatedKeyedStateBackend;
import io.github.flinkstate.disagg.backend.testutil.DisaggBackends;
import io.github.flinkstate.disagg.backend.testutil.JobCheckpoints;
import io.github.flinkstate.disagg.backend.testutil.KeyedFixture;
import java.io.File;
import java.util.List;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.CompletedCheckpoint;
import org.apache.flink.runtime.checkpoint.SavepointType;
import org.apache.flink.runtime.state.CheckpointStorageLocation;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.state.filesystem.RelativeFileStateHandle;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A job resumed in CLAIM mode from a native savepoint gets the savepoint's files as {@link
 * RelativeFileStateHandle}s, which Flink 2.3.0 writes relative to the {@code _metadata} being
 * written: a later checkpoint that reused them would send a restore looking for the savepoint's
 * files in its own directory. The later checkpoint names the store's copies instead, with the
 * background copy and without it (then the checkpoint makes the copies), and the savepoint, which
 * the later checkpoint subsumes (one retained, CLAIM), is no longer needed.
 */
@Timeout(120)
class RelativeHandlesAfterClaimRestoreTest {

    @TempDir File tmp;

    private final KeyedFixture fixture = new KeyedFixture(200);

    private String uri(String name) {
        return new File(tmp, name).toURI().toString();
    }

    private static int relativeFiles(List<KeyedStateHandle> handles) {
        return (int)
                ((IncrementalRemoteKeyedStateHandle) handles.get(0))
                        .getSharedState().stream()
                                .filter(e -> e.getHandle() instanceof RelativeFileStateHandle)
                                .count();
    }

    @ParameterizedTest(name = "background copy {0}")
    @ValueSource(booleans = {true, false})
    void aCheckpointAfterAClaimRestoreFromANativeSavepoint_restores(boolean backgroundCopy)
            throws Exception {
        CompletedCheckpoint savepoint;
        try (DisaggBackends source =
                new DisaggBackends(
                        DisaggBackends.backend(uri("primary-1"), MemorySize.parse("1mb")))) {
            DisaggregatedKeyedStateBackend<Integer> b =
                    source.create(DisaggBackends.ALL, List.of());
            fixture.write(b, 1);
            JobCheckpoints job1 =
                    new JobCheckpoints(uri("savepoints"), 1, true, RecoveryClaimMode.CLAIM);
            CheckpointStorageLocation location = job1.start(1);
            KeyedStateHandle handle =
                    DisaggBackends.snapshot(
                                    b,
                                    1,
                                    location,
                                    new CheckpointOptions(
                                            SavepointType.savepoint(SavepointFormatType.NATIVE),
                                            CheckpointStorageLocationReference.getDefault()))
                            .getJobManagerOwnedSnapshot();
            job1.acknowledge(1, 0, handle);
            savepoint = job1.complete(1, 1);
        }
        List<KeyedStateHandle> fromSavepoint =
                JobCheckpoints.handlesFor(savepoint, DisaggBackends.ALL);
        assertThat(((IncrementalRemoteKeyedStateHandle) fromSavepoint.get(0)).getSharedState())
                .as("the savepoint's files come back as relative handles")
                .anyMatch(e -> e.getHandle() instanceof RelativeFileStateHandle);

        try (DisaggBackends target =
                new DisaggBackends(
                        DisaggBackends.backend(uri("primary-2"), MemorySize.parse("1mb"))
                                .with(StateRecoveryOptions.RESTORE_MODE, RecoveryClaimMode.CLAIM)
                                .with(DisaggregatedOptions.BACKGROUND_COPY, backgroundCopy))) {
            JobCheckpoints job2 =
                    new JobCheckpoints(uri("checkpoints"), 1, true, RecoveryClaimMode.CLAIM);
            CompletedCheckpoint restored = job2.restore(savepoint, RecoveryClaimMode.CLAIM);
            DisaggregatedKeyedStateBackend<Integer> b2 =
                    target.create(
                            DisaggBackends.ALL,
                            JobCheckpoints.handlesFor(restored, DisaggBackends.ALL));
            assertThat(fixture.verify(b2, 1)).isEqualTo(200);
            long id = restored.getCheckpointID() + 1;
            CheckpointStorageLocation location = job2.start(id);
            job2.acknowledge(
                    id,
                    0,
                    DisaggBackends.snapshot(
                                    b2,
                                    id,
                                    location,
                                    CheckpointOptions.forCheckpointWithDefaultLocation())
                            .getJobManagerOwnedSnapshot());
            CompletedCheckpoint later = job2.complete(id, 1);
            // the checkpoint ran while the background copy may still have been copying (it then
            // waits for it, or finds the copies already swapped in while the copier thread has
            // not yet recorded them: so the test waits for the copier too)
            b2.inheritedCopy().awaitDone();
            assertThat(b2.inheritedCopy().isDone()).isTrue();
            assertThat(b2.inheritedCopy().copies())
                    .as("the background copy copies the savepoint's files also in CLAIM mode")
                    .hasSize(backgroundCopy ? relativeFiles(fromSavepoint) : 0);
            List<KeyedStateHandle> fromLater = JobCheckpoints.handlesFor(later, DisaggBackends.ALL);
            String savepointDir = new File(tmp, "savepoints").toURI().getPath();
            assertThat(((IncrementalRemoteKeyedStateHandle) fromLater.get(0)).getSharedState())
                    .as("the later checkpoint names none of the savepoint's files")
                    .noneMatch(e -> e.getHandle() instanceof RelativeFileStateHandle)
                    .noneMatch(
                            e ->
                                    ((FileStateHandle) e.getHandle())
                                            .getFilePath()
                                            .toUri()
                                            .getPath()
                                            .startsWith(savepointDir));
            assertThat(job2.retained()).as("the savepoint is subsumed").containsExactly(later);

            DisaggregatedKeyedStateBackend<Integer> b3 =
                    target.create(
                            DisaggBackends.ALL,
                            JobCheckpoints.handlesFor(later, DisaggBackends.ALL));
            assertThat(fixture.verify(b3, 1)).isEqualTo(200);
        }
    }
}
